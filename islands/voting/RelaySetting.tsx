/**
 * The presenter's relay field (page §14, protocol §7): the address of the relay phones send
 * through after they join, kept in this browser only, its key configuration read from the relay
 * and its hash shown, as the room's QR code will carry it. `prefill` (the server's `OHTTP_RELAY`)
 * fills the field while this browser keeps none.
 * @module
 */
import { useState } from "react";
import { shortHash } from "../../lib/client/relay/fragment.ts";
import { messageOf } from "../../lib/client/text.ts";
import {
  presenterRelay,
  setPresenterRelay,
  storedPresenterRelay,
  useQrPin,
} from "../hooks/presenter_relay.ts";

/** The field, its button and the line saying what the room's code will carry. */
export default function RelaySetting({ prefill = "" }: { prefill?: string }) {
  useQrPin();
  const [text, setText] = useState(() => storedPresenterRelay() ?? prefill);
  const [refused, setRefused] = useState<string | null>(null);
  const state = presenterRelay.value;

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
      <p
        class="relay-setting-status"
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
    </form>
  );
}
