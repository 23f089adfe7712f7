/**
 * What the page knows of its relay (protocol §7.4, page §14.6), kept light for first paint: the
 * phone's pin (kept per origin in the browser's storage), the pin each round was joined under (per
 * round), the candidate pin of this page's address (never stored before it is checked), the alert
 * shown when a pin is refused or another relay is named, and the wait a vote is in before it is sent.
 * @module
 */
import { signal } from "@preact/signals";
import { useEffect, useState } from "react";
import type { RelayPin } from "../../lib/client/relay/fragment.ts";
import type { Wait } from "../../lib/client/relay/page_transport.ts";

/** Browser-storage key of the phone's pin: one JSON value `{relay, ohttp}` (serializePin). */
export const RELAY_PIN_KEY = "ringvote/relay-pin";

/** Browser-storage prefix of the pin each round was joined under: `ringvote/relay-round/{id}`. */
export const RELAY_ROUND_PREFIX = "ringvote/relay-round/";

/** The sentence of `[data-relay-alert]`: a pin refused, or another relay named (null: none). */
export const relayAlert = signal<string | null>(null);

/**
 * A new round's relay waiting for its holder's word (`[data-relay-confirm]`): the sentence, and
 * the answer (true: the projector shows it, take it; false: keep the last relay).
 */
export const relayConfirm = signal<{ text: string; answer(take: boolean): void } | null>(null);

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

/**
 * The pin a page holds: `pin`, the one its calls go through (the phone's, or for a phone that
 * never held one the candidate of its address, used once checked); `candidate`, another pin its
 * address names (not stored); and the sentence saying the address gave a first pin, or was not used.
 */
export type HeldPin = { pin: RelayPin | null; candidate: RelayPin | null; notice: string | null };

const NONE: HeldPin = { pin: null, candidate: null, notice: null };

/** The page's pin once read ({@link readPagePin}); null before. */
export const heldPin = signal<HeldPin | null>(null);

let reading: Promise<HeldPin> | null = null;

/**
 * The relay pins of this page: the phone's stored pin and the candidate of the address's fragment,
 * with a notice or an alert when the fragment names a pin. Read once per page load; the code that
 * reads a fragment loads only on a page that has one or keeps one.
 */
export function readPagePin(): Promise<HeldPin> {
  reading ??= (async () => {
    if (typeof localStorage === "undefined") return NONE;
    const stored = localStorage.getItem(RELAY_PIN_KEY);
    if (stored === null && !/(?:^#|&)(?:relay|ohttp)=/.test(location.hash)) return NONE;
    const { parsePin } = await import("../../lib/client/relay/fragment.ts");
    const { readAddressPins } = await import("../../lib/client/relay/round_pins.ts");
    const read = readAddressPins(location.hash, parsePin(stored), {
      pageProtocol: location.protocol,
    });
    if (read.alert !== null) relayAlert.value = read.alert;
    return { pin: read.current ?? read.candidate, candidate: read.candidate, notice: read.notice };
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
  return heldPin.value ?? held;
}
