/**
 * Browser-safe. What a phone does with its card (page §14.7, protocol §2.11), by the rules of
 * lib/protocol/cards.ts and lib/client/cards/cards.ts, with no verification code: read a typed or
 * scanned code by Crockford's rules, derive its card key, sign its admission of a voter key, and
 * check a served card set against its hash and the round's genesis. The phone never verifies a
 * card signature, so this module leaves out the strict verifier (lib/protocol/head.ts) that those
 * modules import, and with it the rest of the page's code that would otherwise be split into more
 * pieces on the voting page's first load; it loads with the signing code (ring_signing.ts).
 * tests/client/card_code_test.ts checks that it answers as lib/protocol/cards.ts and
 * lib/client/cards/cards.ts do, code for code, key for key, signature for signature.
 * @module
 */
import { ed25519 } from "@noble/curves/ed25519.js";
import {
  base64urlToBytes,
  bytesToBase64url,
  bytesToHex,
  hexToBytes,
  u32be,
  u64be,
  utf8,
} from "../../protocol/bytes.ts";
import { sha256 } from "../../protocol/hash.ts";
import type { BlockRecord } from "../../protocol/schemas.ts";
import type * as Chain from "../../protocol/chain.ts";

/** The genesis checks of lib/protocol/chain.ts, passed in by the page, whose first load has them. */
export type GenesisChecks = Pick<typeof Chain, "isGenesis" | "verifyBlockHash">;

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const CHECK_ALPHABET = ALPHABET + "*~$=U";
const DATA_SYMBOLS = 16;
const CARD_BYTES = 10;

/** A code read: its 10 bytes and display form, or why it is a typo. */
export type ReadCard =
  | { ok: true; bytes: Uint8Array; code: string }
  | { ok: false; reason: string };

/** The display form `XXXX-XXXX-XXXX-XXXX-C` of V. */
function display(v: bigint): string {
  let symbols = "";
  for (let i = DATA_SYMBOLS - 1; i >= 0; i--) {
    symbols += ALPHABET[Number((v >> BigInt(5 * i)) & 31n)];
  }
  return `${symbols.match(/.{4}/g)!.join("-")}-${CHECK_ALPHABET[Number(v % 37n)]}`;
}

/** Reads a code as lib/protocol/cards.ts `parseCardCode` does (the same reasons). */
export function readCardCode(text: string): ReadCard {
  const symbols = text.replace(/[-\s]/g, "").toUpperCase().replace(/[IL]/g, "1").replace(/O/g, "0");
  if (symbols.length === 0) return { ok: false, reason: "No card code was given" };
  if (symbols.length !== DATA_SYMBOLS + 1) {
    return {
      ok: false,
      reason: `A card code has ${DATA_SYMBOLS + 1} characters, this one has ${symbols.length}`,
    };
  }
  let v = 0n;
  for (const symbol of symbols.slice(0, DATA_SYMBOLS)) {
    const value = ALPHABET.indexOf(symbol);
    if (value < 0) return { ok: false, reason: `"${symbol}" is not a card code character` };
    v = (v << 5n) | BigInt(value);
  }
  const check = CHECK_ALPHABET.indexOf(symbols[DATA_SYMBOLS]);
  if (check < 0) return { ok: false, reason: `"${symbols[DATA_SYMBOLS]}" cannot end a card code` };
  if (BigInt(check) !== v % 37n) {
    return {
      ok: false,
      reason: "The code's last character does not match: a character is mistyped",
    };
  }
  const code = display(v);
  const bytes = new Uint8Array(CARD_BYTES);
  for (let i = CARD_BYTES - 1; i >= 0; i--, v >>= 8n) bytes[i] = Number(v & 0xffn);
  return { ok: true, bytes, code };
}

/** The card's seed: SHA-256(utf8("ringvote/v1/card-key") ‖ V). */
function cardSeed(bytes: Uint8Array): Uint8Array {
  return sha256(utf8("ringvote/v1/card-key"), bytes);
}

/** The card key (wire form, base64url) of a card's 10 bytes. */
export function cardKeyOf(bytes: Uint8Array): string {
  return bytesToBase64url(ed25519.getPublicKey(cardSeed(bytes)));
}

/** The card's admission `{key, sig}` of voter key `voterKey` (hex) in round `round` of the set. */
export function admitWithCard(
  { bytes, setSha256, round, voterKey }: {
    bytes: Uint8Array;
    setSha256: string;
    round: number;
    voterKey: string;
  },
): { key: string; sig: string } {
  const seed = cardSeed(bytes);
  const message = new Uint8Array([
    ...utf8("ringvote/v1/card-admit"),
    ...hexToBytes(setSha256, 32, "set sha256"),
    ...u64be(round),
    ...hexToBytes(voterKey, 32, "key"),
  ]);
  return {
    key: bytesToBase64url(ed25519.getPublicKey(seed)),
    sig: bytesToBase64url(ed25519.sign(message, seed)),
  };
}

/** A served set that checks out: its id, hash (hex) and keys in card order. */
export type ServedSet = { set: string; sha256: string; keys: string[] };

/**
 * Checks a served set (`GET /api/cards/{set}`) as lib/client/cards/cards.ts `checkRoundCardSet`
 * does: its keys hash to its `sha256`, `set` and `count` follow, and `genesis` (block 0 of the
 * round, its hash recomputed) is a genesis block whose `prev_hash` is that `sha256`. Never throws.
 */
export function checkRoundSet(
  genesis: BlockRecord,
  served: unknown,
  { isGenesis, verifyBlockHash }: GenesisChecks,
): ({ ok: true } & ServedSet) | { ok: false; reason: string } {
  const { set, count, sha256: hash, keys } = (served ?? {}) as Record<string, unknown>;
  if (
    typeof set !== "string" || !/^[0-9a-f]{16}$/.test(set) || typeof hash !== "string" ||
    !/^[0-9a-f]{64}$/.test(hash) || !Number.isInteger(count) || (count as number) < 0 ||
    !Array.isArray(keys) ||
    !keys.every((key) => typeof key === "string" && /^[A-Za-z0-9_-]{43}$/.test(key))
  ) {
    return { ok: false, reason: "The server's card set is not readable" };
  }
  let computed: string;
  try {
    const parts = keys.map((key) => base64urlToBytes(key, 32, "card key"));
    computed = bytesToHex(sha256(utf8("ringvote/v1/card-set"), u32be(parts.length), ...parts));
  } catch {
    return { ok: false, reason: "The server's card set holds a malformed card key" };
  }
  if (computed !== hash || computed.slice(0, 16) !== set || count !== keys.length) {
    return { ok: false, reason: "The server's card set does not hash to the hash it names" };
  }
  // A set of repeated keys, or of too few or too many, is none the presenter's page makes (protocol
  // §2.11): it could only pad the "of N" the room is shown. The rule is card_schemas.ts's
  // CardSetKeys, written out here so that the schemas stay off the page's first load.
  if (keys.length < 8 || keys.length > 1000 || new Set(keys).size !== keys.length) {
    return { ok: false, reason: "The server's card set is not one a presenter makes" };
  }
  let genesisOk: boolean;
  try {
    genesisOk = genesis.height === 0 && verifyBlockHash(genesis) && isGenesis(genesis, hash);
  } catch {
    genesisOk = false;
  }
  if (!genesisOk) {
    return { ok: false, reason: "The round's genesis block does not commit to this card set" };
  }
  return { ok: true, set, sha256: hash, keys };
}
