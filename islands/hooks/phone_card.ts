/**
 * The card a phone holds (page §14.7): `#card=<code>` in the page's address is read once, removed
 * from the address bar at once (as the presenter's token is), and kept in this browser
 * (`ringvote/card`), so later rounds of the meeting reuse it; a code typed on the phone is kept the
 * same way, in its display form. Read by Crockford's rules where it is used (CardJoin.tsx), which
 * keeps it again in its display form and says when it is no card. No state library: this loads
 * with the card code, apart from the page's first load.
 * @module
 */
import {
  cardInFragment,
  fragmentWithoutCard,
  PHONE_CARD_KEY,
} from "../../lib/client/cards/card_fragment.ts";

let reading: Promise<string | null> | null = null;

/**
 * The card of the address (removed from the address bar), which replaces the kept one, or the
 * one kept before; null when there is none. Read once per page load.
 */
export function readPhoneCard(): Promise<string | null> {
  reading ??= Promise.resolve().then(() => {
    const kept = localStorage.getItem(PHONE_CARD_KEY);
    const given = cardInFragment(location.hash);
    if (given === null) return kept;
    const url = new URL(location.href);
    history.replaceState(
      history.state,
      "",
      url.pathname + url.search + fragmentWithoutCard(url.hash),
    );
    localStorage.setItem(PHONE_CARD_KEY, given);
    return given;
  });
  return reading;
}

/** Keeps `code` (display form) as this phone's card. */
export function keepPhoneCard(code: string): void {
  localStorage.setItem(PHONE_CARD_KEY, code);
  reading = Promise.resolve(code);
}
