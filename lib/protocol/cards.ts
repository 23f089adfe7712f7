// Browser-safe. Join cards (protocol §2.11): a card is 80 random bits written as 16 Crockford
// base32 symbols and Crockford's check symbol; its code derives an Ed25519 card key; a card set is
// an ordered list of card keys with one SHA-256; and a card admits a voter key in a round by
// signing `utf8("ringvote/v1/card-admit") ‖ set sha256 ‖ u64be(round) ‖ voter key`.
//
// Signatures are verified as head signatures are ({@link verifyStrict}): cofactorless, canonical
// R and A, both torsion-free and not of small order, s < L.
import { ed25519 } from "@noble/curves/ed25519.js";
import {
  assertBytes,
  base64urlToBytes,
  bytesToBase64url,
  bytesToHex,
  concatBytes,
  u32be,
  u64be,
  utf8,
} from "./bytes.ts";
import { sha256 } from "./hash.ts";
export { CARD_SET_SIZE } from "./card_schemas.ts";
import { verifyStrict } from "./head.ts";
import { decodePoint } from "./keys.ts";

/** Bytes of a card's random value V. */
export const CARD_BYTES = 10;
/** Crockford's base32 data symbols, value 0 to 31. */
export const CARD_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/** Crockford's check symbols, value 0 to 36: the data symbols and `*~$=U`. */
export const CARD_CHECK_ALPHABET = CARD_ALPHABET + "*~$=U";
/** Domain label of the card key derivation. */
export const CARD_KEY_LABEL = "ringvote/v1/card-key";
/** Domain label of a card set's hash. */
export const CARD_SET_LABEL = "ringvote/v1/card-set";
/** Domain label of the admission message a card signs. */
export const CARD_ADMIT_LABEL = "ringvote/v1/card-admit";

const DATA_SYMBOLS = 16;

/** A card as its holder has it: V's 10 bytes and the display form `XXXX-XXXX-XXXX-XXXX-C`. */
export type CardCode = { bytes: Uint8Array; code: string };

/** Why a typed code is not a card: the page names it before anything is sent. */
export type CardTypo = "empty" | "length" | "symbol" | "check";

/** The outcome of {@link parseCardCode}. */
export type ParsedCard = ({ ok: true } & CardCode) | {
  ok: false;
  typo: CardTypo;
  reason: string;
};

/** V, the 10 bytes read as a big-endian integer. */
function cardValue(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of assertBytes(bytes, CARD_BYTES, "card")) v = (v << 8n) | BigInt(b);
  return v;
}

/** The display form of the card whose value is the 10 bytes `bytes`. */
export function formatCardCode(bytes: Uint8Array): string {
  const v = cardValue(bytes);
  let symbols = "";
  for (let i = DATA_SYMBOLS - 1; i >= 0; i--) {
    symbols += CARD_ALPHABET[Number((v >> BigInt(5 * i)) & 31n)];
  }
  const groups = symbols.match(/.{4}/g)!;
  return `${groups.join("-")}-${CARD_CHECK_ALPHABET[Number(v % 37n)]}`;
}

/** A new card from 10 random bytes the caller draws (the page: `crypto.getRandomValues`). */
export function cardFromRandom(random: Uint8Array): CardCode {
  const bytes = assertBytes(random, CARD_BYTES, "random").slice();
  return { bytes, code: formatCardCode(bytes) };
}

/**
 * Reads a typed or scanned code by Crockford's decoding rules: dashes and white space dropped,
 * upper case, `I` and `L` read as `1`, `O` as `0`; then exactly 16 data symbols and a check symbol
 * equal to V mod 37. Never throws: anything else is a typo with its reason.
 */
export function parseCardCode(text: unknown): ParsedCard {
  if (typeof text !== "string") return typo("empty", "No card code was given");
  const symbols = text.replace(/[-\s]/g, "").toUpperCase().replace(/[IL]/g, "1").replace(
    /O/g,
    "0",
  );
  if (symbols.length === 0) return typo("empty", "No card code was given");
  if (symbols.length !== DATA_SYMBOLS + 1) {
    return typo(
      "length",
      `A card code has ${DATA_SYMBOLS + 1} characters, this one has ${symbols.length}`,
    );
  }
  let v = 0n;
  for (const symbol of symbols.slice(0, DATA_SYMBOLS)) {
    const value = CARD_ALPHABET.indexOf(symbol);
    if (value < 0) return typo("symbol", `"${symbol}" is not a card code character`);
    v = (v << 5n) | BigInt(value);
  }
  const check = CARD_CHECK_ALPHABET.indexOf(symbols[DATA_SYMBOLS]);
  if (check < 0) {
    return typo("symbol", `"${symbols[DATA_SYMBOLS]}" cannot end a card code`);
  }
  if (BigInt(check) !== v % 37n) {
    return typo("check", "The code's last character does not match: a character is mistyped");
  }
  const bytes = new Uint8Array(CARD_BYTES);
  for (let i = CARD_BYTES - 1; i >= 0; i--, v >>= 8n) bytes[i] = Number(v & 0xffn);
  return { ok: true, bytes, code: formatCardCode(bytes) };
}

function typo(kind: CardTypo, reason: string): ParsedCard {
  return { ok: false, typo: kind, reason };
}

/** Domain label of the attack lab's practice cards, whose codes are public (protocol §4.7). */
export const PRACTICE_CARD_LABEL = "ringvote/v1/practice-card";
/** How many practice cards the attack lab's carded directory takes. */
export const PRACTICE_CARDS = 8;
/** The round id practice cards sign for: the practice directory is no round. */
export const PRACTICE_ROUND = 0;

/**
 * The attack lab's practice cards (protocol §4.7): card k (1-based) has
 * V = SHA-256(utf8("ringvote/v1/practice-card") ‖ u32be(k))[0..10]. Anyone can derive them: they
 * admit keys to the lab's practice directory and nowhere else.
 */
export function practiceCards(): CardCode[] {
  return Array.from(
    { length: PRACTICE_CARDS },
    (_, i) =>
      cardFromRandom(sha256(utf8(PRACTICE_CARD_LABEL), u32be(i + 1)).subarray(0, CARD_BYTES)),
  );
}

/** A card's key pair: the 32-byte RFC 8032 seed and its public key. */
export type CardKeyPair = { seed: Uint8Array; publicKey: Uint8Array };

/** seed = SHA-256(utf8("ringvote/v1/card-key") ‖ V), public key = Ed25519 public key of seed. */
export function cardKeyPair(bytes: Uint8Array): CardKeyPair {
  const seed = sha256(utf8(CARD_KEY_LABEL), assertBytes(bytes, CARD_BYTES, "card"));
  return { seed, publicKey: ed25519.getPublicKey(seed) };
}

/**
 * Why `bytes` cannot be a card key (protocol §2.7 checks 3–5: canonical, not the identity,
 * torsion-free), or null when it can. Throws only when `bytes` is not 32 bytes.
 */
export function checkCardKey(bytes: Uint8Array): string | null {
  return decodePoint(bytes, "card key").reason ?? null;
}

/**
 * A card key from its wire form (43 base64url characters) when it decodes to a valid card key;
 * otherwise the reason. Never throws.
 */
export function readCardKey(text: unknown): { key: Uint8Array } | { reason: string } {
  let key: Uint8Array;
  try {
    key = base64urlToBytes(text, 32, "card key");
  } catch (error) {
    return { reason: (error as Error).message };
  }
  const reason = checkCardKey(key);
  return reason === null ? { key } : { reason };
}

/** SHA-256(utf8("ringvote/v1/card-set") ‖ u32be(n) ‖ K_0 ‖ … ‖ K_{n−1}). */
export function cardSetHash(keys: readonly Uint8Array[]): Uint8Array {
  const parts = keys.map((key, i) => assertBytes(key, 32, `card key ${i + 1}`));
  return sha256(utf8(CARD_SET_LABEL), u32be(parts.length), ...parts);
}

/** A set's id: the first 16 hex characters of its hash (hex or bytes). */
export function cardSetId(hash: Uint8Array | string): string {
  const hex = typeof hash === "string" ? hash : bytesToHex(assertBytes(hash, 32, "hash"));
  return hex.slice(0, 16);
}

/** The set's id, hash (hex) and count, from its keys in card order. */
export function describeCardSet(keys: readonly Uint8Array[]): {
  set: string;
  count: number;
  sha256: string;
} {
  const hash = bytesToHex(cardSetHash(keys));
  return { set: cardSetId(hash), count: keys.length, sha256: hash };
}

/** utf8("ringvote/v1/card-admit") ‖ set sha256 (32 bytes) ‖ u64be(round id) ‖ voter key (32). */
export function cardAdmitMessage(
  setHash: Uint8Array,
  roundId: number,
  voterKey: Uint8Array,
): Uint8Array {
  return concatBytes(
    utf8(CARD_ADMIT_LABEL),
    assertBytes(setHash, 32, "set hash"),
    u64be(roundId),
    assertBytes(voterKey, 32, "voter key"),
  );
}

/** The card's RFC 8032 signature admitting `voterKey` to round `roundId` of the set. */
export function signCardAdmission(
  cardSeed: Uint8Array,
  setHash: Uint8Array,
  roundId: number,
  voterKey: Uint8Array,
): Uint8Array {
  return ed25519.sign(
    cardAdmitMessage(setHash, roundId, voterKey),
    assertBytes(cardSeed, 32, "card seed"),
  );
}

/**
 * True when `signature` (64 bytes) is the card key's strict RFC 8032 signature admitting
 * `voterKey` to round `roundId` of the set. False for anything that does not verify, including
 * a non-canonical, torsioned or small-order card key or R, and s ≥ L.
 */
export function verifyCardAdmission(
  cardKey: Uint8Array,
  signature: Uint8Array,
  setHash: Uint8Array,
  roundId: number,
  voterKey: Uint8Array,
): boolean {
  return verifyStrict(signature, cardAdmitMessage(setHash, roundId, voterKey), cardKey);
}

/** The wire form `{key, sig}` of a card's admission of `voterKey` (both base64url). */
export function cardAdmission(
  card: CardKeyPair,
  setHash: Uint8Array,
  roundId: number,
  voterKey: Uint8Array,
): { key: string; sig: string } {
  return {
    key: bytesToBase64url(card.publicKey),
    sig: bytesToBase64url(signCardAdmission(card.seed, setHash, roundId, voterKey)),
  };
}

/**
 * Checks a wire admission `{key, sig}` against the set's hash, the round and the voter key: null
 * when valid, otherwise why not. Never throws. Membership of the key in the set is the caller's.
 */
export function checkCardAdmission(
  card: { key: unknown; sig: unknown },
  setHash: Uint8Array,
  roundId: number,
  voterKey: Uint8Array,
): string | null {
  let key: Uint8Array, sig: Uint8Array;
  try {
    key = base64urlToBytes(card.key, 32, "card key");
    sig = base64urlToBytes(card.sig, 64, "card signature");
  } catch (error) {
    return (error as Error).message;
  }
  return verifyCardAdmission(key, sig, setHash, roundId, voterKey)
    ? null
    : "the card signature does not verify";
}
