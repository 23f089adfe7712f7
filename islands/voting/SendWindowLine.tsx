/**
 * A quiet phone's send window (page §14.8): W worked out by the phone from the round's figures
 * fixed when voting opened (`keysAtOpen`, the sealing interval, the server's verification rate),
 * and a line when the server's `sendWindowMs` is another figure: the phone uses its own. The lines
 * are made by the relay transport's module, loaded before any state read (they go through it).
 * @module
 */
import type { RoundState } from "../../lib/protocol/hall_schemas.ts";
import { loadedRelay } from "../hooks/page_fetch.ts";

/** The window line, once voting is open; nothing before. */
export default function SendWindowLine({ state }: { state: RoundState }) {
  const lines = loadedRelay()?.windowLines(state) ?? null;
  if (lines === null) return null;
  return (
    <div class="send-window" data-send-window={lines.own}>
      <p class="send-window-line">{lines.line}</p>
      {lines.differs !== null && (
        <p class="send-window-differs" data-window-differs={lines.differs.served}>
          {lines.differs.text}
        </p>
      )}
    </div>
  );
}
