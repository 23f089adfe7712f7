/**
 * The relay the presenter names for the room (protocol §7, page §14): typed in the presenter's bar,
 * kept in the presenter's browser only (the server never names it), its key configuration read
 * from the relay itself, and put with its hash in every QR code the presenter's pages draw.
 * @module
 */
import { signal } from "@preact/signals";
import { useEffect } from "react";
import { messageOf } from "../../lib/client/text.ts";
import { relayAddress, type RelayPin } from "../../lib/client/relay/fragment.ts";
import { heldPin, readPagePin } from "./relay_state.ts";

/** Browser-storage key of the presenter's relay address. */
export const PRESENTER_RELAY_KEY = "ringvote/presenter-relay";

/** The presenter's relay: none, being read, read (its pin), or why it could not be. */
export type PresenterRelay =
  | { kind: "none" }
  | { kind: "reading"; relay: string }
  | { kind: "pinned"; pin: RelayPin }
  | { kind: "failed"; relay: string; reason: string };

/** The presenter's relay as this page knows it. */
export const presenterRelay = signal<PresenterRelay>({ kind: "none" });

/** The relay address kept in this browser, or null. */
export function storedPresenterRelay(): string | null {
  return typeof localStorage === "undefined" ? null : localStorage.getItem(PRESENTER_RELAY_KEY);
}

let reading = 0;

/**
 * Names `text` as the room's relay (empty: none), keeps it in this browser, and reads its key
 * configuration's hash from the relay. A RangeError says why `text` is not a relay address.
 */
export async function setPresenterRelay(text: string): Promise<void> {
  const mine = ++reading;
  if (text.trim() === "") {
    localStorage.removeItem(PRESENTER_RELAY_KEY);
    presenterRelay.value = { kind: "none" };
    return;
  }
  const relay = relayAddress(text);
  localStorage.setItem(PRESENTER_RELAY_KEY, relay);
  presenterRelay.value = { kind: "reading", relay };
  try {
    // The relay's code loads only in a presenter's browser that names one.
    const { servedKeyHash } = await import("../../lib/client/relay/relayed_transport.ts");
    const ohttp = await servedKeyHash({ relay, origin: location.origin, fetch });
    if (mine === reading) presenterRelay.value = { kind: "pinned", pin: { relay, ohttp } };
  } catch (error) {
    if (mine === reading) {
      presenterRelay.value = { kind: "failed", relay, reason: messageOf(error) };
    }
  }
}

let started = false;

/**
 * The pin QR codes on this page carry: the presenter's relay once read, else the one the page
 * holds from its own address. Reads the kept presenter relay on first use.
 */
export function useQrPin(): RelayPin | null {
  useEffect(() => {
    if (started) return;
    started = true;
    const kept = storedPresenterRelay();
    if (kept !== null) setPresenterRelay(kept).catch(() => {});
    readPagePin();
  }, []);
  const current = presenterRelay.value;
  if (current.kind === "pinned") return current.pin;
  if (current.kind !== "none") return null;
  return heldPin.value?.pin ?? null;
}
