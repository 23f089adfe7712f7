/**
 * The Deno KV key layout of protocol §5 and the commit helpers every KV write goes through: typed
 * key builders and the records stored under them, commit-with-retry, read-back, batching within the
 * KV limits, and the MAC that binds a key record's precomputation to its key.
 * @module
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { assertBytes, bytesToHex, utf8 } from "../../lib/protocol/bytes.ts";
import {
  isStoredPrecomputation,
  type KeyPrecomputation,
  PRECOMPUTATION_BYTES,
} from "../../lib/protocol/key_precomputation.ts";

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
/** A registered key, stored under its id. */
export type StoredKey = { key: string };
/**
 * The id a registered key holds, stored under the key (the uniqueness index), with what its votes
 * need precomputed (lib/protocol/key_precomputation.ts) and the MAC binding it to the key
 * (protocol §5.2). A precomputation is used only with a MAC that verifies: keys registered before
 * either was stored, or whose record fails its MAC, have their votes check them from their bytes.
 */
export type KeyIdRecord = { id: number; pre?: KeyPrecomputation; mac?: Uint8Array };

// ---- the key record's MAC (protocol §5.2) ----
//
// Why a MAC, and not a check of the stored combs against P and a recomputed Hp(P): that check
// needs Hp(P) and the 204 doublings of the combs' rows, about 0.8 ms per record, so more than a
// tenth of a ring-8 verification for each member read from KV; HMAC-SHA-256 over the record's 4 KB
// takes 12 to 20 µs natively (node:crypto), 35 to 45 µs with noble's JavaScript HMAC. With every
// vote reading its 8 records from KV (a directory beyond the memory budgets),
// bench/record_binding.ts measures ingest at about 1.04 times its time without the check natively,
// 1.06 with noble's; with records held in memory, 1.00. The secret is derived from the server
// seed, so the MAC guards against records altered, corrupted or copied from another key or
// database, not against a party that can read that seed and write KV, who could sign heads as
// well (protocol §7).

/** Domain label of the MAC binding a stored precomputation to its key. */
export const KEY_RECORD_MAC_LABEL = "ringvote/v1/key-record";
/** Domain label deriving the key records' MAC secret from the server seed. */
export const KEY_RECORD_SECRET_LABEL = "ringvote/v1/key-record-secret";
/** Bytes of a key record's MAC, and of its secret. */
export const KEY_RECORD_MAC_BYTES = 32;

const macLabel = utf8(KEY_RECORD_MAC_LABEL);

/**
 * The secret of key-record MACs: HMAC-SHA-256(serverSeed, utf8("ringvote/v1/key-record-secret")).
 * Derived, so nothing new is stored, and under its own label, so it is never the seed itself.
 * RangeError unless `serverSeed` is 32 bytes.
 */
export function keyRecordSecret(serverSeed: Uint8Array): Uint8Array {
  assertBytes(serverSeed, 32, "serverSeed");
  return new Uint8Array(
    createHmac("sha256", serverSeed).update(utf8(KEY_RECORD_SECRET_LABEL)).digest(),
  );
}

/**
 * HMAC-SHA-256(secret, utf8("ringvote/v1/key-record") ‖ key ‖ pre): binds every byte of a stored
 * precomputation to the 32-byte key it is stored for (each part has a fixed length).
 * TypeError/RangeError for a part of the wrong type or length.
 */
export function keyRecordMac(
  pre: KeyPrecomputation,
  { key, secret }: { key: Uint8Array; secret: Uint8Array },
): Uint8Array {
  assertBytes(pre, PRECOMPUTATION_BYTES, "pre");
  assertBytes(key, 32, "key");
  assertBytes(secret, KEY_RECORD_MAC_BYTES, "secret");
  return new Uint8Array(
    createHmac("sha256", secret).update(macLabel).update(key).update(pre).digest(),
  );
}

/**
 * True when `record` holds a precomputation in the current form and its {@link keyRecordMac} for
 * `key` under `secret`: only then may its combs be used for `key`. False for a record altered
 * anywhere, copied from another key or another server, or written without a MAC (before records
 * carried one). The MACs are compared in constant time. Throws only for a `key` or `secret` that
 * is not 32 bytes.
 */
export function isBoundRecord(
  record: { pre?: unknown; mac?: unknown },
  { key, secret }: { key: Uint8Array; secret: Uint8Array },
): record is { pre: KeyPrecomputation; mac: Uint8Array } {
  assertBytes(key, 32, "key");
  assertBytes(secret, KEY_RECORD_MAC_BYTES, "secret");
  const { pre, mac } = record;
  if (!isStoredPrecomputation(pre)) return false;
  if (!(mac instanceof Uint8Array) || mac.length !== KEY_RECORD_MAC_BYTES) return false;
  return timingSafeEqual(keyRecordMac(pre, { key, secret }), mac);
}

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
type CfgName = "open" | "head" | "keys" | "votes" | "server-key";

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
    /** {@link ServerKeyRecord}: the server's head-signing key. */
    serverKey: () => cfg("server-key"),
    /** {@link StoredKey}: the key with this id. */
    key: (id: number): Deno.KvKey => at("key", id),
    /** {@link KeyIdRecord}: the id of this key. */
    keyId: (key: string): Deno.KvKey => at("keyid", key),
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

/** Most keys one `getMany` may read. */
export const GET_MANY_LIMIT = 10;
/** Most entries one round trip of a listing may bring (the `batchSize` KV allows). */
export const LIST_BATCH_MAX = 1000;
/** Default most mutations per batched commit (KV allows 1000). */
export const BATCH_MAX_MUTATIONS = 900;
/**
 * Default most bytes per batched commit as KV counts them, {@link entryBytes} (KV allows 800 KiB).
 */
export const BATCH_MAX_BYTES = 700_000;
/** Default most bytes of the keys one batched commit sets, {@link keyBytes} (KV allows 80 KiB). */
export const BATCH_MAX_KEY_BYTES = 72_000;
/** Upper bound on optimistic retries; reaching it means something is wrong, not contention. */
export const MAX_ATTEMPTS = 10_000;

/**
 * True for the transient errors a commit throws when several processes share one SQLite file
 * (`database is locked`); the commit may or may not have landed, so callers read back.
 */
export function isTransientKvError(error: unknown): boolean {
  return error instanceof Error && /database is locked|database is busy|SQLITE_BUSY/i.test(
    error.message,
  );
}

// ---- waiting on the database ----
//
// Every KV call of the store goes through tryCommit or readRetrying, which count the calls in
// flight in this process and when the database last answered one. Over KV Connect the Deno client
// retries a call that gets no answer every ~250 ms, for ever: a database that is down shows here
// as calls in flight and no answer for as long as it is down. The API's deadline (server/app.ts)
// reads this to answer 503 `kv_unavailable` rather than wait (protocol §5.5).

const waiting = { calls: 0, since: 0 };

/** KV calls of this process in flight now. */
export function kvCallsInFlight(): number {
  return waiting.calls;
}

/**
 * For how long, in ms, calls have waited on the database with no answer to any of them: 0 when
 * none is in flight. Each answer (a call finished, or a listing's next entry) starts it afresh.
 */
export function kvSilentForMs(now = Date.now()): number {
  return waiting.calls === 0 ? 0 : now - waiting.since;
}

/** Notes an answer from the database: calls still in flight wait afresh from now. */
export function markKvAnswer(): void {
  waiting.since = Date.now();
}

/** Runs one KV call, counted in flight until it settles (an error is an answer too). */
async function tracked<T>(call: () => Promise<T>): Promise<T> {
  if (waiting.calls++ === 0) waiting.since = Date.now();
  try {
    return await call();
  } finally {
    waiting.calls--;
    markKvAnswer();
  }
}

/** Commits `op`; a transient throw is reported as `null` (outcome unknown), anything else rethrows. */
export async function tryCommit(
  op: Deno.AtomicOperation,
): Promise<Deno.KvCommitResult | Deno.KvCommitError | null> {
  try {
    return await tracked(() => op.commit());
  } catch (error) {
    if (isTransientKvError(error)) return null;
    throw error;
  }
}

/** Runs a read, retrying while the database reports a transient lock. */
export async function readRetrying<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 0;; attempt++) {
    try {
      return await tracked(read);
    } catch (error) {
      if (!isTransientKvError(error) || attempt >= MAX_ATTEMPTS) throw error;
      await backoff(attempt);
    }
  }
}

/**
 * Every entry of `selector`, in order, read inside {@link readRetrying} (so a lock mid-way lists
 * again from the start; `each` must allow that: it is called afresh with `restart` first). Each
 * entry is an answer from the database for {@link kvSilentForMs}. `options` should give a
 * `batchSize` (or a `limit`) fitted to the listing: without one the client fetches 100 entries a
 * round trip, and needs one more to learn that a range of exactly 100 has ended.
 */
export async function listEntries<T>(
  kv: Deno.Kv,
  { selector, options, restart, each }: {
    selector: Deno.KvListSelector;
    options?: Deno.KvListOptions;
    restart?: () => void;
    each: (entry: Deno.KvEntry<T>) => void;
  },
): Promise<void> {
  await readRetrying(async () => {
    restart?.();
    for await (const entry of kv.list<T>(selector, options)) {
      markKvAnswer();
      each(entry);
    }
  });
}

/** Short randomised pause before retrying a commit that lost a race. */
export function backoff(attempt: number): Promise<void> {
  const ms = Math.min(50, 1 + attempt) * Math.random();
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Reads `keys` with as many `getMany` calls as {@link GET_MANY_LIMIT} needs, retrying locks;
 * the entries come back in the order of `keys`.
 */
export async function getManyChunked<T>(
  kv: Deno.Kv,
  keys: Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<T>[]> {
  const entries: Deno.KvEntryMaybe<T>[] = [];
  for (let i = 0; i < keys.length; i += GET_MANY_LIMIT) {
    const chunk = keys.slice(i, i + GET_MANY_LIMIT);
    entries.push(...await readRetrying(() => kv.getMany<T[]>(chunk)));
  }
  return entries;
}

/** Sets `entries` in one commit, retrying while the database is locked (sets are idempotent). */
async function commitIdempotent(
  kv: Deno.Kv,
  entries: [Deno.KvKey, unknown][],
): Promise<void> {
  for (let attempt = 0;; attempt++) {
    const op = kv.atomic();
    for (const [key, value] of entries) op.set(key, value);
    const res = await tryCommit(op);
    if (res?.ok) return;
    if (res !== null || attempt >= MAX_ATTEMPTS) {
      throw new Error("A commit of idempotent sets failed");
    }
    await backoff(attempt);
  }
}

// ---- the size of a commit, as KV counts it ----
//
// KV refuses a commit whose keys and values come to more than 800 KiB, counting each key it sets
// twice (once among the commit's keys, once with its value) and each value as stored: V8's
// serialization of it. It also refuses more than 80 KiB of keys set in one commit.

/**
 * The bytes of `key` in KV's encoding (the FoundationDB tuple layer): per part a type byte, then a
 * string's UTF-8 or a byte array's bytes with each 0x00 escaped by one more byte and a 0x00 after
 * them, a number's 8 bytes, a bigint's magnitude (with a length byte beyond 8 bytes), nothing more
 * for a boolean.
 */
export function keyBytes(key: Deno.KvKey): number {
  let bytes = 0;
  for (const part of key) {
    if (typeof part === "string" || part instanceof Uint8Array) {
      const raw = typeof part === "string" ? utf8(part) : part;
      bytes += 2 + raw.length;
      for (const byte of raw) if (byte === 0) bytes++;
    } else if (typeof part === "number") {
      bytes += 9;
    } else if (typeof part === "bigint") {
      bytes += 2 + Math.ceil((part < 0n ? -part : part).toString(16).length / 2);
    } else {
      bytes += 1;
    }
  }
  return bytes;
}

/** What setting `key` to a value of at most `valueBytes` serialized bytes counts in a commit. */
export function entryBytes(key: Deno.KvKey, valueBytes: number): number {
  return 2 * keyBytes(key) + valueBytes;
}

/**
 * At most the serialized bytes of `record`: its path's bytes, and 48 for the serializer's header,
 * the two field names, the index (at most a double's 9 bytes) and the byte array's framing.
 */
export function voteIndexBytes(record: VoteIndex): number {
  return record.path.length + 48;
}

/**
 * At most the serialized bytes of `record`: 2 per UTF-16 unit of the vote id (V8 stores a string
 * with any unit beyond Latin-1 as two bytes a unit), and 24 for the header, the field name and the
 * framing.
 */
export function leafRecordBytes(record: LeafRecord): number {
  return 2 * record.voteId.length + 24;
}

/** Limits of {@link commitInBatches}, and who to tell after each commit. */
export type BatchOptions = {
  /** Most mutations per commit; {@link BATCH_MAX_MUTATIONS} by default. */
  maxMutations?: number;
  /** Most estimated bytes per commit; {@link BATCH_MAX_BYTES} by default. */
  maxBytes?: number;
  /** Most bytes of keys set per commit; {@link BATCH_MAX_KEY_BYTES} by default. */
  maxKeyBytes?: number;
  /** Called, and awaited, after the k-th commit (from 1); a throw stops the writing there. */
  afterCommit?: (k: number) => void | Promise<void>;
};

/**
 * Sets idempotent `groups` of entries in as few commits as the limits allow, never splitting a
 * group across commits. Each group comes with its size as KV counts it, estimated from above
 * ({@link entryBytes}); the bytes of its keys are counted here.
 */
export async function commitInBatches(
  kv: Deno.Kv,
  groups: Iterable<{ entries: [Deno.KvKey, unknown][]; bytes: number }>,
  options: BatchOptions = {},
): Promise<void> {
  const maxMutations = options.maxMutations ?? BATCH_MAX_MUTATIONS;
  const maxBytes = options.maxBytes ?? BATCH_MAX_BYTES;
  const maxKeyBytes = options.maxKeyBytes ?? BATCH_MAX_KEY_BYTES;
  let batch: [Deno.KvKey, unknown][] = [];
  let batchBytes = 0;
  let batchKeyBytes = 0;
  let commits = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await commitIdempotent(kv, batch);
    batch = [];
    batchBytes = batchKeyBytes = 0;
    await options.afterCommit?.(++commits);
  };
  for (const { entries, bytes } of groups) {
    let groupKeyBytes = 0;
    for (const [key] of entries) groupKeyBytes += keyBytes(key);
    if (
      batch.length + entries.length > maxMutations || batchBytes + bytes > maxBytes ||
      batchKeyBytes + groupKeyBytes > maxKeyBytes
    ) {
      await flush();
    }
    batch.push(...entries);
    batchBytes += bytes;
    batchKeyBytes += groupKeyBytes;
  }
  await flush();
}
