/**
 * The phone's lines about its relay (page §2, protocol §7): the sentence saying a new address
 * changed the relay this browser keeps, `[data-relay-alert]` when the relay's key configuration is
 * not the one in the presenter's code (nothing is then sent), and "Keep this page open until your
 * vote is sent." while a vote waits for its send window.
 * @module
 */
import { useEffect } from "react";
import { KEEP_OPEN_TEXT } from "../../lib/client/relay/send_window.ts";
import { checkRelayAtLoad } from "../hooks/page_fetch.ts";
import { relayAlert, relayWait, usePagePin } from "../hooks/relay_state.ts";

/** The relay lines of the voting page; nothing without a relay. */
export default function RelayStatus() {
  const { pin, notice } = usePagePin();
  useEffect(() => {
    checkRelayAtLoad().catch((error) => console.error(error));
  }, []);
  const alert = relayAlert.value;
  const waiting = relayWait.value?.kind === "vote";
  if (pin === null && notice === null) return null;
  return (
    <div class="relay-status" data-relay={pin?.relay ?? ""}>
      {notice !== null && <p class="notice relay-notice" data-relay-notice="">{notice}</p>}
      {alert !== null && <p class="relay-alert" data-relay-alert="" role="alert">{alert}</p>}
      {waiting && alert === null && (
        <p class="notice notice-working relay-wait" data-relay-wait="" role="status">
          {KEEP_OPEN_TEXT}
        </p>
      )}
    </div>
  );
}
