/**
 * A quiet phone's send window (page §14.8): W worked out by the phone from the round's figures
 * fixed when voting opened (`keysAtOpen`, the sealing interval, the server's verification rate),
 * and a line when the server's `sendWindowMs` is another figure: the phone uses its own.
 * @module
 */
import { checkWindow } from "../../lib/client/relay/send_window.ts";
import { sendWindowText, windowDiffersText } from "../../lib/client/rounds/window_text.ts";
import type { RoundState } from "../../lib/protocol/hall_schemas.ts";
import { ownWindowMs } from "../hooks/quiet_signals.ts";

/** The window line, once voting is open; nothing before. */
export default function SendWindowLine({ state }: { state: RoundState }) {
  const own = ownWindowMs(state);
  if (own === null) return null;
  const { differs } = checkWindow(own, state.sendWindowMs);
  return (
    <div class="send-window" data-send-window={own}>
      <p class="send-window-line">{sendWindowText(own)}</p>
      {differs && state.sendWindowMs !== null && (
        <p class="send-window-differs" data-window-differs={state.sendWindowMs}>
          {windowDiffersText(own, state.sendWindowMs)}
        </p>
      )}
    </div>
  );
}
