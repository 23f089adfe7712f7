/**
 * Browser-safe. The card in a page's address (page §14.7): `#card=<code>` read from the fragment,
 * and the fragment without it, for the address bar. Kept apart from the rest of the card code so
 * the voting page's first load carries only this.
 * @module
 */

/** Browser-storage key of the phone's card: its display form `XXXX-XXXX-XXXX-XXXX-C`. */
export const PHONE_CARD_KEY = "ringvote/card";

/** The fragment parameter `card`'s raw value in `fragment` (`#…&card=…`), or null. */
export function cardInFragment(fragment: string): string | null {
  for (const part of fragment.replace(/^#/, "").split("&")) {
    if (part.startsWith("card=")) {
      try {
        return decodeURIComponent(part.slice("card=".length));
      } catch {
        return part.slice("card=".length);
      }
    }
  }
  return null;
}

/** `fragment` less its `card` parameter, with its `#`, or "" when nothing else is left. */
export function fragmentWithoutCard(fragment: string): string {
  const kept = fragment.replace(/^#/, "").split("&")
    .filter((part) => part !== "" && part !== "card" && !part.startsWith("card="));
  return kept.length === 0 ? "" : `#${kept.join("&")}`;
}
