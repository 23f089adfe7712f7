/**
 * The relay the presenter names for the room (protocol §7.4, page §14.6): typed in the presenter's
 * bar, or the server's `OHTTP_RELAY` while the presenter named none, kept in the presenter's browser
 * only (the server never names it), its key configuration read from the relay itself and held to
 * the server's, and put with its hash in every QR code the presenter's pages draw. While it is
 * being read or could not be, the presenter's page draws no code at all, never the plain one.
 * @module
 */
import { signal } from "@preact/signals";
import { useEffect } from "react";
import { messageOf } from "../../lib/client/text.ts";
import { readRelayStats } from "../../lib/client/board/who_saw.ts";
import { relayAddress, type RelayPin } from "../../lib/client/relay/fragment.ts";
import { heldPin, readPagePin } from "./relay_state.ts";

/** Browser-storage key of the presenter's relay address ("" once the presenter named none). */
export const PRESENTER_RELAY_KEY = "ringvote/presenter-relay";

/** The presenter's relay: none, being read, read (its pin), or why it could not be. */
export type PresenterRelay =
  | { kind: "none" }
  | { kind: "reading"; relay: string }
  | { kind: "pinned"; pin: RelayPin; sameMachine: boolean | null }
  | { kind: "failed"; relay: string; reason: string };

/** The presenter's relay as this page knows it. */
export const presenterRelay = signal<PresenterRelay>({ kind: "none" });

/** The relay address kept in this browser ("" for none named), or null when nothing is kept. */
export function storedPresenterRelay(): string | null {
  return typeof localStorage === "undefined" ? null : localStorage.getItem(PRESENTER_RELAY_KEY);
}

let reading = 0;

/**
 * Names `text` as the room's relay (empty: none), keeps it in this browser (unless `keep` is
 * false: the server's `OHTTP_RELAY`), and reads its key configuration's hash from the relay. A RangeError says why `text` is not a relay address.
 */
export async function setPresenterRelay(
  text: string,
  { keep = true }: { keep?: boolean } = {},
): Promise<void> {
  const mine = ++reading;
  if (text.trim() === "") {
    // Kept as named: the server's OHTTP_RELAY no longer fills in for it in this browser.
    localStorage.setItem(PRESENTER_RELAY_KEY, "");
    presenterRelay.value = { kind: "none" };
    return;
  }
  const relay = relayAddress(text);
  if (keep) localStorage.setItem(PRESENTER_RELAY_KEY, relay);
  presenterRelay.value = { kind: "reading", relay };
  try {
    // The relay's code loads only in a presenter's browser that names one.
    const { servedKeyHash } = await import("../../lib/client/relay/relayed_transport.ts");
    const ohttp = await servedKeyHash({ relay, origin: location.origin, fetch });
    if (mine !== reading) return;
    presenterRelay.value = { kind: "pinned", pin: { relay, ohttp }, sameMachine: null };
    // Whether the relay runs on the server's machine (a demonstration): said beside its address.
    const stats = await readRelayStats(fetch, relay).catch(() => null);
    if (mine === reading && stats !== null) {
      presenterRelay.value = {
        kind: "pinned",
        pin: { relay, ohttp },
        sameMachine: stats.sameMachine,
      };
    }
  } catch (error) {
    if (mine === reading) {
      presenterRelay.value = { kind: "failed", relay, reason: messageOf(error) };
    }
  }
}

let started = false;

/**
 * Reads the presenter's relay once per page: the one kept in this browser, else `prefill` (the
 * server's `OHTTP_RELAY`), read at once so that the room's code carries it from the first press.
 */
function startReading(prefill?: string): void {
  if (started) return;
  started = true;
  const kept = storedPresenterRelay();
  // The server's relay is read, not kept: this browser names none until its presenter does.
  const relay = kept ?? prefill ?? "";
  if (relay !== "") setPresenterRelay(relay, { keep: kept !== null }).catch(() => {});
  readPagePin();
}

/**
 * The pin QR codes on this page carry: the presenter's relay once read, else the one the page
 * holds from its own address. Reads the kept presenter relay (or `prefill`) on first use.
 */
export function useQrPin(prefill?: string): RelayPin | null {
  useEffect(() => startReading(prefill), []);
  const current = presenterRelay.value;
  if (current.kind === "pinned") return current.pin;
  if (current.kind !== "none") return null;
  return heldPin.value?.pin ?? null;
}

/**
 * What the presenter's code may be: with this pin (null: none named), or no code at all while the
 * named relay is read (`reading`) or because it could not be (`failed`, with the sentence).
 */
export type QrState =
  | { kind: "code"; pin: RelayPin | null }
  | { kind: "reading"; relay: string }
  | { kind: "failed"; text: string };

/** The presenter's code's state (see {@link QrState}). */
export function useQrState(prefill?: string): QrState {
  const pin = useQrPin(prefill);
  const current = presenterRelay.value;
  if (current.kind === "reading") return { kind: "reading", relay: current.relay };
  if (current.kind === "failed") {
    return {
      kind: "failed",
      text: `No code: the relay ${current.relay} could not be read (${current.reason}). ` +
        "Phones would send their votes without it. Name a relay that answers.",
    };
  }
  return { kind: "code", pin };
}
