// Browser-safe. The wire shapes of join cards (protocol §2.11, §4.9) as zod/mini schemas: a card
// set as posted and served, a round's cards, and a card's admission of a voter key.
import * as z from "zod/mini";

/** Fewest and most cards in a set (protocol §2.11). */
export const CARD_SET_SIZE = { min: 8, max: 1000 } as const;

/** A card key on the wire: 32 bytes, base64url without padding (43 characters). */
export const CardKeyText = z.string().check(
  z.regex(/^[A-Za-z0-9_-]{43}$/, "must be 43 base64url characters"),
);
/** A card's admission signature on the wire: 64 bytes, base64url without padding. */
export const CardSigText = z.string().check(
  z.regex(/^[A-Za-z0-9_-]{86}$/, "must be 86 base64url characters"),
);
/** A card set's id: the first 16 hex characters of its sha256. */
export const CardSetId = z.string().check(
  z.regex(/^[0-9a-f]{16}$/, "must be 16 lowercase hex characters"),
);
const Sha256Hex = z.string().check(
  z.regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters"),
);
const Count = z.int().check(z.gte(0, "must be a non-negative integer"));

/**
 * The keys of a set a presenter makes, in card order: 8 to 1,000 of them, none repeated. A set
 * posted is held to it, and so is a set a round's genesis commits to, by the phone and the audit.
 */
export const CardSetKeys = z.array(CardKeyText).check(
  z.minLength(CARD_SET_SIZE.min, `must hold at least ${CARD_SET_SIZE.min} card keys`),
  z.maxLength(CARD_SET_SIZE.max, `must hold at most ${CARD_SET_SIZE.max} card keys`),
  z.refine((keys) => new Set(keys).size === keys.length, "must not repeat a card key"),
);
/** Body of `POST /api/cards` (presenter): the card keys in card order. */
export const CardSetPost = z.object({ keys: CardSetKeys });
/** Answer of `POST /api/cards` (201, or 200 for a set already stored). */
export const CardSetCreated = z.object({ set: CardSetId, count: Count, sha256: Sha256Hex });
/** Answer of `GET /api/cards/{set}`: the keys in card order. */
export const CardSet = z.object({
  set: CardSetId,
  count: Count,
  sha256: Sha256Hex,
  keys: z.array(CardKeyText),
});
/** Answer of `GET /api/rounds/{id}/cards`: `used` counts cards that admitted a key. */
export const RoundCards = z.object({
  set: CardSetId,
  count: Count,
  sha256: Sha256Hex,
  used: Count,
});
/** A card's admission of a voter key: the card key and its signature. */
export const CardAdmissionWire = z.object({ key: CardKeyText, sig: CardSigText });

export type CardSetPost = z.infer<typeof CardSetPost>;
export type CardSetCreated = z.infer<typeof CardSetCreated>;
export type CardSet = z.infer<typeof CardSet>;
export type RoundCards = z.infer<typeof RoundCards>;
export type CardAdmissionWire = z.infer<typeof CardAdmissionWire>;
