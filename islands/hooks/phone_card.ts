/**
 * The card a phone holds (page §14.7): `#card=<code>` in the page's address is read once, removed
 * from the address bar at once (as the presenter's token is), and kept in this browser
 * (`ringvote/card`), so later rounds of the meeting reuse it; a code typed on the phone is kept the
 * same way. Light for first paint: the code that reads a card loads only when there is one.
 * @module
 */
import { signal } from "@preact/signals";
import {
  cardInFragment,
  fragmentWithoutCard,
  PHONE_CARD_KEY,
} from "../../lib/client/cards/card_keep.ts";

/** The phone's card (display form) once read, and a sentence when the address held a bad one. */
export type PhoneCard = { code: string | null; notice: string | null };

/** The phone's card as this page knows it; null until {@link readPhoneCard} has answered. */
export const phoneCard = signal<PhoneCard | null>(null);

let reading: Promise<PhoneCard> | null = null;

/**
 * Reads the card of the address (removed from the address bar) or the one kept before; a card
 * in the address replaces the kept one. Read once per page load.
 */
export function readPhoneCard(): Promise<PhoneCard> {
  reading ??= (async () => {
    if (typeof localStorage === "undefined") return { code: null, notice: null };
    const kept = localStorage.getItem(PHONE_CARD_KEY);
    const given = cardInFragment(location.hash);
    if (given === null) return { code: kept, notice: null };
    const url = new URL(location.href);
    history.replaceState(
      history.state,
      "",
      url.pathname + url.search + fragmentWithoutCard(url.hash),
    );
    const { parseCardCode } = await import("../../lib/protocol/cards.ts");
    const parsed = parseCardCode(given);
    if (!parsed.ok) {
      return {
        code: kept,
        notice: `The card in this address was not read: ${parsed.reason}. Type its code below.`,
      };
    }
    localStorage.setItem(PHONE_CARD_KEY, parsed.code);
    return { code: parsed.code, notice: null };
  })().then((card) => (phoneCard.value = card));
  return reading;
}

/** Keeps `code` (display form) as this phone's card. */
export function keepPhoneCard(code: string): void {
  localStorage.setItem(PHONE_CARD_KEY, code);
  phoneCard.value = { code, notice: null };
}
