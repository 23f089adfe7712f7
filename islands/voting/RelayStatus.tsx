/**
 * The phone's lines about its relay (page §2, protocol §7): the sentence saying a new address
 * changed the relay this browser keeps, `[data-relay-alert]` when the relay's key configuration is
 * not the one in the presenter's code (nothing is then sent), `[data-relay-down]` while the relay
 * does not answer (calls retry through it, never directly), and "Keep this page open until your
 * vote is sent." while a vote waits for its send window.
 * @module
 */
import { useEffect } from "react";
import { KEEP_OPEN_TEXT } from "../../lib/client/relay/send_window.ts";
import { checkRelayAtLoad } from "../hooks/page_fetch.ts";
import {
  relayAlert,
  relayDown,
  relayDownText,
  relayRequired,
  relayWait,
  usePagePin,
} from "../hooks/relay_state.ts";

/** What a page without a relay says where the room's votes go through one. */
export const SCAN_TEXT = "This room's votes go through a relay, and this page has none: " +
  "scan the presenter's QR code to open it with the relay, then vote.";

/** The relay lines of the voting page; nothing without a relay. */
export default function RelayStatus() {
  const { pin, notice } = usePagePin();
  useEffect(() => {
    checkRelayAtLoad().catch((error) => console.error(error));
  }, []);
  const alert = relayAlert.value;
  const waiting = relayWait.value?.kind === "vote";
  const down = relayDown.value;
  if (pin === null && notice === null) {
    return relayRequired.value === null
      ? null
      : (
        <p class="relay-alert" data-relay-required={relayRequired.value} role="alert">
          {SCAN_TEXT}
        </p>
      );
  }
  return (
    <div class="relay-status" data-relay={pin?.relay ?? ""}>
      {notice !== null && <p class="notice relay-notice" data-relay-notice="">{notice}</p>}
      {alert !== null && <p class="relay-alert" data-relay-alert="" role="alert">{alert}</p>}
      {down !== null && alert === null && (
        <p class="relay-alert" data-relay-down={down} role="alert">{relayDownText(down)}</p>
      )}
      {waiting && alert === null && (
        <p class="notice notice-working relay-wait" data-relay-wait="" role="status">
          {KEEP_OPEN_TEXT}
        </p>
      )}
    </div>
  );
}
