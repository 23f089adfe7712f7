/**
 * What the page knows of its relay (protocol §7, page §2), kept light for first paint: the pin of
 * the page's address (kept per origin in the browser's storage), the alert shown when the relay's
 * key configuration is not the pinned one, and the wait a vote is in before it is sent.
 * @module
 */
import { signal } from "@preact/signals";
import { useEffect, useState } from "react";
import type { RelayPin } from "../../lib/client/relay/fragment.ts";
import type { Wait } from "../../lib/client/relay/page_transport.ts";

/** Browser-storage key of the page's pin: one JSON value `{relay, ohttp}` (serializePin). */
export const RELAY_PIN_KEY = "ringvote/relay-pin";

/** Browser-storage key saying this browser registered a key with a relay pinned. */
export const RELAY_REGISTERED_KEY = "ringvote/relay-registered";

/** The sentence of `[data-relay-alert]`: the relay's key is not the pinned one (null: none). */
export const relayAlert = signal<string | null>(null);

/** The relay that did not answer the page's last relayed call (null: it answered, or none yet). */
export const relayDown = signal<string | null>(null);

/** The sentence of `[data-relay-down]`: the relay at `relay` does not answer, and calls retry. */
export function relayDownText(relay: string): string {
  return `The relay at ${relay} does not answer: retrying…`;
}

/** The wait the page is in before a relayed call (a vote held for its send window). */
export const relayWait = signal<Wait | null>(null);

/**
 * Set when the server declares that this room's votes go through a relay (`OHTTP_RELAY`): a page
 * with none pinned then asks to scan the presenter's code instead of sending its vote.
 */
export const relayRequired = signal<"declared" | "refused" | null>(null);

/** Records that this origin declares relays. */
export function declareRelays(): void {
  if (relayRequired.peek() === null) relayRequired.value = "declared";
}

/** When this page loaded: the module runs once per page. */
export const pageLoadedAt = Date.now();

/** The pin a page holds and the sentence saying a new address changed it. */
export type HeldPin = { pin: RelayPin | null; notice: string | null };

const NONE: HeldPin = { pin: null, notice: null };

/** The page's pin once read ({@link readPagePin}); null before. */
export const heldPin = signal<HeldPin | null>(null);

let reading: Promise<HeldPin> | null = null;

/**
 * The relay pin of this page: the one in the address's fragment, kept in the browser's storage,
 * or the one kept before; with a sentence when the fragment changed it. Read once per page load;
 * the code that reads a fragment loads only on a page that has one or keeps one.
 */
export function readPagePin(): Promise<HeldPin> {
  reading ??= (async () => {
    if (typeof localStorage === "undefined") return NONE;
    const stored = localStorage.getItem(RELAY_PIN_KEY);
    if (stored === null && !/(?:^#|&)(?:relay|ohttp)=/.test(location.hash)) return NONE;
    const { adoptPin } = await import("../../lib/client/relay/fragment.ts");
    const adopted = adoptPin(location.hash, stored, { pageProtocol: location.protocol });
    if (adopted.store !== null) localStorage.setItem(RELAY_PIN_KEY, adopted.store);
    return { pin: adopted.pin, notice: adopted.notice };
  })().then((held) => (heldPin.value = held));
  return reading;
}

/** The page's pin as read so far: none until {@link readPagePin} has answered. */
export function pagePin(): HeldPin {
  return heldPin.peek() ?? NONE;
}

/** The page's pin and its notice, once the page runs in a browser. */
export function usePagePin(): HeldPin {
  const [held, setHeld] = useState<HeldPin>(NONE);
  useEffect(() => {
    readPagePin().then(setHeld);
  }, []);
  return held;
}
