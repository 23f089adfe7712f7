/**
 * Browser-safe. What the pages keep and say about join cards (page §14.7, protocol §2.11): the
 * codes the presenter's browser keeps per set until "Forget the codes", the sets it made, a card's
 * printed address, and the sentences of the phone's card lines and the projector's card count.
 * Nothing here draws, derives or signs: lib/protocol/cards.ts does. The phone's card in the
 * address is card_fragment.ts.
 * @module
 */

/** The part of the Web Storage API these entries use. */
type PageStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

/** Browser-storage key of the card sets this presenter's browser made: JSON `[{set, count}]`. */
export const CARD_SETS_KEY = "ringvote/card-sets";
/** Prefix of the presenter's kept codes of one set: `ringvote/card-codes/{set}`, a JSON array. */
export const CARD_CODES_PREFIX = "ringvote/card-codes/";

/** Message the print view sends the page that opened it, once it can take the names. */
export const PRINT_READY = "ringvote/print-ready";
/** The opener's answer: the names of one set's cards in card order, in memory only. */
export const PRINT_NAMES = "ringvote/print-names";

/** A set this browser made: its id and how many cards it holds. */
export type KnownSet = { set: string; count: number };

/**
 * A card's printed address: `scanned` (the voting page's address with the presenter's pins) with
 * `#card=<code>` first in its fragment, the pins after it (`#card=…&relay=…&ohttp=…&witness=…`).
 */
export function cardAddress(scanned: string, code: string): string {
  const at = scanned.indexOf("#");
  const base = at < 0 ? scanned : scanned.slice(0, at);
  const rest = at < 0 ? "" : scanned.slice(at + 1);
  return `${base}#card=${encodeURIComponent(code)}${rest === "" ? "" : `&${rest}`}`;
}

/** The phone's join button with a card: `Join with card 7KQ2-…`. */
export function joinWithCardText(code: string): string {
  return `Join with card ${code.slice(0, 4)}-…`;
}

/** What a phone without a card reads in a carded round. */
export const CARD_ASK_TEXT =
  "This round admits card holders only: scan your card, or type its code";

/** What a phone whose card's pins failed the page's check reads: the card is kept. */
export const CARD_KEPT_TEXT = "Your card is kept on this phone. Scan the projector's code to " +
  "open this page with the room's relay, then join with your card.";

/** The server's card refusals (protocol §2.11), in words. */
export function cardRefusalText(code: string, reason: string): string {
  switch (code) {
    case "card_used":
      return "This card has already joined this round with another key: one card admits one key " +
        "per round. Nothing was kept on this phone.";
    case "card_unknown":
      return "The server says this card is not one of the round's cards. Nothing was kept on this " +
        "phone.";
    case "card_signature":
      return "The server refused this card's signature. Nothing was kept on this phone.";
    case "card_required":
      return "The server asks for a card for this round. Nothing was kept on this phone.";
    default:
      return `The server refused the key: ${reason}. Nothing was kept on this phone.`;
  }
}

/** The sets this browser made, oldest first; none when nothing readable is kept. */
export function readKnownSets(storage: PageStorage): KnownSet[] {
  try {
    const list = JSON.parse(storage.getItem(CARD_SETS_KEY) ?? "[]");
    if (!Array.isArray(list)) return [];
    return list.filter((entry): entry is KnownSet =>
      typeof entry?.set === "string" && /^[0-9a-f]{16}$/.test(entry.set) &&
      Number.isInteger(entry.count)
    );
  } catch {
    return [];
  }
}

/** Records that this browser made `known` (once), newest last. */
export function keepKnownSet(storage: PageStorage, known: KnownSet): KnownSet[] {
  const next = [...readKnownSets(storage).filter((entry) => entry.set !== known.set), known];
  storage.setItem(CARD_SETS_KEY, JSON.stringify(next));
  return next;
}

/** The codes this browser keeps of `set`, in card order, or null when it keeps none. */
export function readKeptCodes(storage: PageStorage, set: string): string[] | null {
  try {
    const codes = JSON.parse(storage.getItem(CARD_CODES_PREFIX + set) ?? "null");
    return Array.isArray(codes) && codes.every((code) => typeof code === "string") ? codes : null;
  } catch {
    return null;
  }
}

/** Keeps the codes of `set` in card order. */
export function keepCodes(storage: PageStorage, set: string, codes: readonly string[]): void {
  storage.setItem(CARD_CODES_PREFIX + set, JSON.stringify(codes));
}

/** "Forget the codes": removes the codes of `set`; the set's id stays known. */
export function forgetCodes(storage: PageStorage, set: string): void {
  storage.removeItem(CARD_CODES_PREFIX + set);
}

/** The card's "Card 7 of 40" line. */
export function cardOfText(number: number, count: number): string {
  return `Card ${number} of ${count}`;
}

/** The projector's card line in a carded round: `31 keys from 31 cards of 40`. */
export function keysFromCardsText(
  { keys, cards, count }: { keys: number; cards: number; count: number },
): string {
  return `${keys} ${keys === 1 ? "key" : "keys"} from ${cards} ${
    cards === 1 ? "card" : "cards"
  } of ${count}`;
}

/** Names as typed, one per line: line k names card k; blank lines name none. */
export function cardNames(text: string): string[] {
  return text.split("\n").map((line) => line.trim());
}
