/**
 * The phone's lines about its relay (page §14.6, protocol §7.4): the relay's host, to compare with
 * the projector; the sentence saying an address gave this browser its first relay;
 * `[data-relay-alert]` when the relay's key configuration is not the one in the presenter's code
 * (nothing is then sent), or when an address names another relay than the one this phone joined
 * through (it goes on with its own), with the question a new round's relay asks before the phone
 * joins through it (`[data-relay-confirm]`); `[data-relay-down]` while the relay
 * does not answer (calls retry through it, never directly), and "Keep this page open until your
 * vote is sent." while a vote waits for its send window.
 * @module
 */
import { useEffect } from "react";
import { KEEP_OPEN_TEXT } from "../../lib/client/relay/send_window.ts";
import { checkRelayAtLoad } from "../hooks/page_fetch.ts";
import {
  relayAlert,
  relayConfirm,
  relayDown,
  relayDownText,
  relayRequired,
  relayWait,
  usePagePin,
} from "../hooks/relay_state.ts";

/** A relay address's host, as the projector shows it (the fragment's code loads only with a pin). */
function hostOf(relay: string): string {
  try {
    return new URL(relay).host;
  } catch {
    return relay;
  }
}

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
  const confirm = relayConfirm.value;
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
      {pin !== null && (
        <p class="relay-host" data-relay-host={hostOf(pin.relay)}>
          Relay: {hostOf(pin.relay)} (key {pin.ohttp.slice(0, 8)})
        </p>
      )}
      {notice !== null && <p class="notice relay-notice" data-relay-notice="">{notice}</p>}
      {confirm !== null && (
        <div class="relay-alert" data-relay-alert="" data-relay-confirm="" role="alert">
          <p>{confirm.text}</p>
          <button
            type="button"
            data-action="relay-confirm"
            onClick={() =>
              confirm.answer(true)}
          >
            The presenter's screen shows it: join through it
          </button>{" "}
          <button
            type="button"
            data-action="relay-keep"
            onClick={() =>
              confirm.answer(false)}
          >
            Keep the last relay
          </button>
        </div>
      )}
      {alert !== null && confirm === null && (
        <p class="relay-alert" data-relay-alert="" role="alert">{alert}</p>
      )}
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
