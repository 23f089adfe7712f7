/**
 * The presenter's relay field (page §14.6, protocol §7.4): the address of the relay phones send
 * through after they join, kept in this browser only, its key configuration read from the relay
 * and its hash shown, as the room's QR code will carry it, and whether the relay runs on the
 * server's machine (its `/stats`). `prefill` (the server's `OHTTP_RELAY`) is the room's relay
 * while this browser names none, read at once. While a round runs, a change is warned about first:
 * phones that joined it keep the relay they joined through.
 * @module
 */
import { useState } from "react";
import { shortHash } from "../../lib/client/relay/fragment.ts";
import { messageOf } from "../../lib/client/text.ts";
import type { RoundInfo } from "../../lib/protocol/schemas.ts";
import {
  presenterRelay,
  setPresenterRelay,
  storedPresenterRelay,
  useQrPin,
} from "../hooks/presenter_relay.ts";

/** The sentence of `[data-relay-same-machine="true"]`. */
export const SAME_MACHINE_TEXT =
  "This relay runs on the server's machine: a demonstration, no protection.";

/** The field, its button and the line saying what the room's code will carry. */
export default function RelaySetting(
  { prefill = "", round }: { prefill?: string; round?: Pick<RoundInfo, "id" | "phase"> },
) {
  useQrPin(prefill === "" ? undefined : prefill);
  const [text, setText] = useState(() => storedPresenterRelay() ?? prefill);
  const [refused, setRefused] = useState<string | null>(null);
  const state = presenterRelay.value;
  const named = state.kind === "none"
    ? ""
    : state.kind === "pinned"
    ? state.pin.relay
    : state.relay;
  const running = round !== undefined && round.id !== 1 && round.phase !== "closed";
  const changing = running && text.trim().replace(/\/+$/, "") !== named;

  function submit(event: Event) {
    event.preventDefault();
    setRefused(null);
    setPresenterRelay(text).catch((error) => setRefused(messageOf(error)));
  }

  return (
    <form class="relay-setting" onSubmit={submit}>
      <label class="relay-setting-label">
        Relay for phones (optional)
        <input
          type="url"
          name="relay"
          data-relay-address=""
          placeholder="http://192.168.1.20:8788"
          value={text}
          onInput={(event) => setText((event.target as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" data-action="set-relay">Use this relay</button>
      {changing && (
        <p class="relay-setting-warning status-red" data-relay-change-warning="" role="alert">
          Round {round!.id}{" "}
          is under way: phones that joined it keep the relay they joined through until it ends, and
          a new relay reaches phones only when they join the next round, once each confirms it
          against this screen. Change the relay between rounds.
        </p>
      )}
      <p
        class={`relay-setting-status${
          refused !== null || state.kind === "failed" ? " status-red" : ""
        }`}
        data-relay-setting={refused === null ? state.kind : "refused"}
      >
        {refused !== null
          ? `Not a relay address: ${refused}`
          : state.kind === "none"
          ? "No relay: phones send their votes to this server directly, which sees who sent each."
          : state.kind === "reading"
          ? `Reading the key configuration from ${state.relay}…`
          : state.kind === "failed"
          ? `The relay ${state.relay} could not be read: ${state.reason}`
          : `Phones that scan the code send everything after joining through ${state.pin.relay} (key ${
            shortHash(state.pin.ohttp)
          }).`}
      </p>
      {state.kind === "pinned" && state.sameMachine !== null && (
        <p
          class={`relay-setting-machine${state.sameMachine ? " status-red" : ""}`}
          data-relay-same-machine={String(state.sameMachine)}
        >
          {state.sameMachine
            ? SAME_MACHINE_TEXT
            : "This relay runs on another machine than the server's."}
        </p>
      )}
    </form>
  );
}
