// Join cards for tests (protocol §2.11): a set of cards from fixed bytes, its wire form, and the
// registration bodies a card signs.
import { bytesToBase64url, bytesToHex } from "../../lib/protocol/bytes.ts";
import {
  cardAdmission,
  cardFromRandom,
  type CardKeyPair,
  cardKeyPair,
  describeCardSet,
} from "../../lib/protocol/cards.ts";
import { hexToBytes } from "../../lib/protocol/bytes.ts";

/** One test card: its code, bytes and key pair. */
export type TestCard = { code: string; bytes: Uint8Array; pair: CardKeyPair; key: string };

/** `n` cards from bytes derived from `seed` (distinct seeds give distinct sets). */
export function makeCards(n: number, seed = 1): TestCard[] {
  return Array.from({ length: n }, (_, i) => {
    const random = new Uint8Array(10);
    const view = new DataView(random.buffer);
    view.setUint32(0, seed);
    view.setUint32(6, i + 1);
    const { code, bytes } = cardFromRandom(random);
    const pair = cardKeyPair(bytes);
    return { code, bytes, pair, key: bytesToBase64url(pair.publicKey) };
  });
}

/** The set's id, count and sha256 as the server answers them. */
export function setOf(cards: TestCard[]) {
  return describeCardSet(cards.map((card) => card.pair.publicKey));
}

/** The registration body of voter key `key` (hex) admitted by `card` to round `round`. */
export function cardBody(card: TestCard, sha256: string, round: number, key: string) {
  return {
    key,
    card: cardAdmission(card.pair, hexToBytes(sha256, 32), round, hexToBytes(key, 32)),
  };
}

/** A fresh voter key, hex, with its seed. */
export function voterKey(): string {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  return bytesToHex(cardKeyPair(seed.subarray(0, 10)).publicKey);
}
