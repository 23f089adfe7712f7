/**
 * What the page knows of its relay (protocol §7, page §2), kept light for first paint: the pin of
 * the page's address (kept per origin in the browser's storage), the alert shown when the relay's
 * key configuration is not the pinned one, and the wait a vote is in before it is sent.
 * @module
 */
import { signal } from "@preact/signals";
import { useEffect, useState } from "react";
import { adoptPin, RELAY_PIN_KEY, type RelayPin } from "../../lib/client/relay/fragment.ts";
import type { Wait } from "../../lib/client/relay/page_transport.ts";

/** Browser-storage key saying this browser registered a key with a relay pinned. */
export const RELAY_REGISTERED_KEY = "ringvote/relay-registered";

/** The sentence of `[data-relay-alert]`: the relay's key is not the pinned one (null: none). */
export const relayAlert = signal<string | null>(null);

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

let adopted: ReturnType<typeof adoptPin> | null = null;

/**
 * The relay pin of this page: the one in the address's fragment, kept in the browser's storage,
 * or the one kept before; with a sentence when the fragment changed it. Read once per page load.
 */
export function pagePin(): { pin: RelayPin | null; notice: string | null } {
  if (adopted === null) {
    if (typeof localStorage === "undefined") return { pin: null, notice: null };
    adopted = adoptPin(location.hash, localStorage.getItem(RELAY_PIN_KEY), {
      pageProtocol: location.protocol,
    });
    if (adopted.store !== null) localStorage.setItem(RELAY_PIN_KEY, adopted.store);
  }
  return adopted;
}

/** The page's pin and its notice, once the page runs in a browser. */
export function usePagePin(): { pin: RelayPin | null; notice: string | null } {
  const [held, setHeld] = useState<{ pin: RelayPin | null; notice: string | null }>({
    pin: null,
    notice: null,
  });
  useEffect(() => setHeld(pagePin()), []);
  return held;
}
