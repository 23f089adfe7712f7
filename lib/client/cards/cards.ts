/**
 * Browser-safe. What a page does with join cards (protocol §2.11), with no I/O of its own: check
 * a card set as served against the keys the presenter's browser made and against a round's
 * genesis, find a card's number in a set, and make a registration body signed by a card. The
 * caller fetches (`GET /api/cards/{set}`, `GET /api/rounds/{id}/cards`, block 0 of the round).
 * @module
 */
import {
  base64urlToBytes,
  bytesToBase64url,
  bytesToHex,
  hexToBytes,
} from "../../protocol/bytes.ts";
import { cardAdmission, cardKeyPair, cardSetHash, cardSetId } from "../../protocol/cards.ts";
import { CardSet } from "../../protocol/card_schemas.ts";
import type { BlockRecord, KeyRegistration } from "../../protocol/schemas.ts";
import { isGenesis } from "../../protocol/chain.ts";

/** A served card set that checks out: its keys (wire form) in card order, and its hash. */
export type CheckedCardSet = { set: string; sha256: string; keys: string[] };

/** The outcome of a check: the set, or why it cannot be trusted. */
export type CardSetCheck = ({ ok: true } & CheckedCardSet) | { ok: false; reason: string };

/**
 * Checks an answer of `GET /api/cards/{set}`: its shape, that its keys hash to its `sha256`, that
 * `set` and `count` follow from them and, given `expected` (the keys the presenter's browser
 * made, in order), that it lists exactly those. Never throws.
 */
export function checkServedCardSet(served: unknown, expected?: readonly string[]): CardSetCheck {
  const parsed = CardSet.safeParse(served);
  if (!parsed.success) return { ok: false, reason: "The server's card set is not readable" };
  const { set, count, sha256, keys } = parsed.data;
  let hash: string;
  try {
    hash = bytesToHex(cardSetHash(keys.map((key) => base64urlToBytes(key, 32, "card key"))));
  } catch {
    return { ok: false, reason: "The server's card set holds a malformed card key" };
  }
  if (hash !== sha256 || cardSetId(hash) !== set || count !== keys.length) {
    return { ok: false, reason: "The server's card set does not hash to the hash it names" };
  }
  if (expected !== undefined) {
    const same = expected.length === keys.length && expected.every((key, i) => key === keys[i]);
    if (!same) {
      const extra = keys.filter((key) => !expected.includes(key)).length;
      return {
        ok: false,
        reason: extra > 0
          ? `The server lists ${extra} card key${extra === 1 ? "" : "s"} this browser did not make`
          : "The server's card set is not the one this browser made",
      };
    }
  }
  return { ok: true, set, sha256, keys };
}

/**
 * Checks that `genesis` (block 0 of a round) commits to the card set `served`: a genesis block
 * whose `prev_hash` is the set's sha256 (protocol §2.11). Never throws.
 */
export function checkRoundCardSet(genesis: BlockRecord, served: unknown): CardSetCheck {
  const set = checkServedCardSet(served);
  if (!set.ok) return set;
  if (!isGenesis(genesis, set.sha256)) {
    return { ok: false, reason: "The round's genesis block does not commit to this card set" };
  }
  return set;
}

/** The card's number in `set` (1-based, "Card 7 of 40"), or null when its key is not in it. */
export function cardNumber(
  set: Pick<CheckedCardSet, "keys">,
  cardBytes: Uint8Array,
): number | null {
  const key = bytesToBase64url(cardKeyPair(cardBytes).publicKey);
  const at = set.keys.indexOf(key);
  return at < 0 ? null : at + 1;
}

/** The card key (wire form) of a card's 10 bytes (as parseCardCode answers them). */
export function cardKeyText(cardBytes: Uint8Array): string {
  return bytesToBase64url(cardKeyPair(cardBytes).publicKey);
}

/**
 * The body of `POST /api/rounds/{id}/pki/key` in a carded round: the voter key (hex) and the
 * card's admission of it, signed with the card of `cardBytes` over the set's sha256 (hex).
 */
export function cardRegistrationBody(
  { voterKey, cardBytes, setSha256, roundId }: {
    voterKey: string;
    cardBytes: Uint8Array;
    setSha256: string;
    roundId: number;
  },
): KeyRegistration {
  const card = cardAdmission(
    cardKeyPair(cardBytes),
    hexToBytes(setSha256, 32, "set sha256"),
    roundId,
    hexToBytes(voterKey, 32, "key"),
  );
  return { key: voterKey, card };
}
