/**
 * The Deno KV key layout of protocol §5.2: typed key builders of a ledger and the records stored
 * under them. The calls that read and write them are in ./kv_calls.ts and ./batches.ts; the MAC
 * binding a key record to its key in ./key_record_mac.ts.
 * @module
 */
import { bytesToHex } from "../../lib/protocol/bytes.ts";
import type { KeyPrecomputation } from "../../lib/protocol/key_precomputation.ts";

/** The guard: the block new votes go into. */
export type OpenRecord = { height: number };
/**
 * The last sealed block, with its timestamp so that a status is one read (heads written before it
 * was kept lack it: their block is read for it).
 */
export type HeadRecord = { height: number; hash: string; timestamp?: number };
/** How many keys the directory holds; the next key id is `total + 1`. */
export type KeyCountRecord = { total: number };
/** How many votes a ledger with a vote capacity has accepted. */
export type VoteCountRecord = { total: number };
/** A card's admission of a key: the card key and its signature, base64url (protocol §2.11). */
export type CardAdmission = { key: string; sig: string };
/** A registered key, stored under its id; in a carded round, with the card that admitted it. */
export type StoredKey = { key: string; card?: CardAdmission };
/**
 * The key a card admitted in a carded round, stored under the card key, with the `total` first
 * answered: a retry with the same card and key is answered the same again (protocol §2.11).
 */
export type CardUseRecord = { id: number; key: string; total: number };
/**
 * The id a registered key holds, stored under the key (the uniqueness index), with what its votes
 * need precomputed (lib/protocol/key_precomputation.ts) and the MAC binding it to the key
 * (protocol §5.2). A precomputation is used only with a MAC that verifies: keys registered before
 * either was stored, or whose record fails its MAC, have their votes check them from their bytes.
 */
export type KeyIdRecord = { id: number; pre?: KeyPrecomputation; mac?: Uint8Array };

/**
 * The block the ledger's last vote commit went into, set by every vote commit: the open block holds
 * a vote exactly when this names it (./work.ts).
 */
export type WorkRecord = { height: number };
/** Where a vote was committed: the block it is (or will be) sealed in. */
export type VoteRef = { height: number };
/** Who used a tag. */
export type TagUse = { voteId: string; height: number };
/** The close time of a block, fixing its timestamp (and so its hash) before finalize. */
export type SealRecord = { closedAt: number };
/**
 * A vote's leaf index and RFC 9162 inclusion proof, written at sealing: the path's 32-byte hashes
 * in order, concatenated (448 bytes for the 14 hashes of a 10,000-leaf tree).
 */
export type VoteIndex = { index: number; path: Uint8Array };
/**
 * A {@link VoteIndex} as read: blocks sealed before paths were stored as bytes hold each hash as
 * hex, and are read as they are ({@link pathHex}).
 */
export type StoredVoteIndex = VoteIndex | { index: number; path: string[] };
/** Which vote sits at a leaf index of a sealed block: kept every {@link LEAF_STRIDE} leaves. */
export type LeafRecord = { voteId: string };

/**
 * Leaves of a sealed block whose index is a multiple of this have a {@link LeafRecord} (leaf 0
 * always): a page of votes lists from the one at or before its offset, never more than
 * `LEAF_STRIDE - 1` votes early. Blocks sealed before the index was sparse have every leaf, and
 * their pages start at the offset itself.
 */
export const LEAF_STRIDE = 100;

/** Bytes of one hash of an audit path. */
const HASH_BYTES = 32;

/**
 * A stored audit path as the API answers it, one hex string per hash, whichever form it was
 * stored in (a copy of the hex strings of blocks sealed before paths were bytes). Throws for bytes
 * that are not whole hashes: a damaged record, not a path.
 */
export function pathHex(path: Uint8Array | string[]): string[] {
  if (!(path instanceof Uint8Array)) return [...path];
  if (path.length % HASH_BYTES !== 0) {
    throw new Error(`A stored path of ${path.length} bytes is not whole ${HASH_BYTES}-byte hashes`);
  }
  const hashes: string[] = [];
  for (let at = 0; at < path.length; at += HASH_BYTES) {
    hashes.push(bytesToHex(path.subarray(at, at + HASH_BYTES)));
  }
  return hashes;
}

/** The server's Ed25519 head-signing key (protocol §4 "Signed heads"): its 32-byte seed. */
export type ServerKeyRecord = { seed: Uint8Array };

/** The entries of one ledger's `cfg` collection. */
type CfgName = "open" | "head" | "keys" | "votes" | "server-key" | "work";

/**
 * The key builders of a ledger stored under `prefix` (protocol §5.2): every key is the prefix
 * followed by the key of the layout, collection name first. The election's ledger has the empty
 * prefix; the attack lab's practice ledger `["lab", generation]` (protocol §4.7).
 */
export function ledgerKeys(prefix: Deno.KvKey = []) {
  const at = (...parts: Deno.KvKeyPart[]): Deno.KvKey => [...prefix, ...parts];
  const cfg = (name: CfgName) => at("cfg", name);
  const byHeight = (collection: string) => (height: number) => at(collection, height);
  const byVoteId = (collection: string) => (voteId: string) => at(collection, voteId);
  return {
    /** The prefix every key of this ledger starts with. */
    prefix,
    /** {@link OpenRecord}: the guard every vote commit checks. */
    open: () => cfg("open"),
    /** {@link HeadRecord}: the last sealed block. */
    head: () => cfg("head"),
    /** {@link KeyCountRecord}: the directory size. */
    keyCount: () => cfg("keys"),
    /** {@link VoteCountRecord}: votes accepted, kept only by a ledger with a vote capacity. */
    voteCount: () => cfg("votes"),
    /** {@link WorkRecord}: the block the last vote commit went into (./work.ts). */
    work: () => cfg("work"),
    /** {@link ServerKeyRecord}: the server's head-signing key. */
    serverKey: () => cfg("server-key"),
    /** {@link StoredKey}: the key with this id. */
    key: (id: number): Deno.KvKey => at("key", id),
    /** {@link KeyIdRecord}: the id of this key. */
    keyId: (key: string): Deno.KvKey => at("keyid", key),
    /** {@link CardUseRecord}: the key this card (base64url card key) admitted. */
    cardUse: (cardKey: string): Deno.KvKey => at("carduse", cardKey),
    /** The vote record; listing a block's votes in key order gives leaf order. */
    vote: (height: number, voteId: string): Deno.KvKey => at("vote", height, voteId),
    /** {@link LeafRecord}: the vote at a leaf index of a sealed block. */
    leaf: (height: number, index: number): Deno.KvKey => at("leaf", height, index),
    /** Prefix of every vote of block `height`. */
    votesOf: byHeight("vote"),
    /** {@link SealRecord}: the close time of block `height`. */
    seal: byHeight("seal"),
    /** The block record, written last. */
    block: byHeight("block"),
    /** {@link VoteRef}: where a vote went, and the "did my commit land?" marker. */
    voteRef: byVoteId("voteref"),
    /** {@link VoteIndex}: a vote's leaf index and proof, written at sealing. */
    voteIndex: byVoteId("voteidx"),
    /** {@link TagUse}: who used a tag, checked unused in the vote commit. */
    tag: (tag: string): Deno.KvKey => at("tag", tag),
    /** The latest verified witness cosignature per witness key (./cosignatures.ts). */
    cosignatures: (): Deno.KvKey => at("cosig", "latest"),
    /** What pushing to the witness of this vkey last came to (./cosignatures.ts). */
    witnessPush: (vkey: string): Deno.KvKey => at("witness", vkey),
  };
}

/** The key builders of one ledger; see {@link ledgerKeys}. */
export type LedgerKeys = ReturnType<typeof ledgerKeys>;

/** Keys are arrays, collection name first (protocol §5); the election's ledger, no prefix. */
export const kvKeys: LedgerKeys = ledgerKeys();

/** One ledger in KV: the database and the key builders of its prefix. */
export type KvLedger = { kv: Deno.Kv; keys: LedgerKeys };

/**
 * The most entries of one kind (keys, votes) a bounded ledger holds, and the refusal of one more
 * (the attack lab's practice ledger, protocol §4.7).
 */
export type CapacityBound = { max: number; refuse(max: number): Error };

/** The last part of an entry's key: an id, leaf index or vote id, whatever the prefix. */
export function lastPart<T extends Deno.KvKeyPart>(key: Deno.KvKey): T {
  return key[key.length - 1] as T;
}

/** The check that `key` holds nothing yet. */
export function absent(key: Deno.KvKey): Deno.AtomicCheck {
  return { key, versionstamp: null };
}
