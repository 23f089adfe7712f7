// The Deno KV key layout of protocol §5 and the commit helpers every KV write goes through:
// typed key builders, the records stored under them, commit-with-retry and read-back helpers,
// and batching within the KV limits (mutations and bytes per commit, keys per getMany).
import type { KeyPrecomputation } from "../lib/protocol/key_precomputation.ts";

/** The guard: the block new votes go into. */
export type OpenRecord = { height: number };
/** The last sealed block. */
export type HeadRecord = { height: number; hash: string };
/** How many keys the directory holds; the next key id is `total + 1`. */
export type KeyCountRecord = { total: number };
/** A registered key, stored under its id. */
export type KeyEntry = { key: string };
/**
 * The id a registered key holds, stored under the key (the uniqueness index), with what its votes
 * need precomputed (lib/protocol/key_precomputation.ts). Keys registered before precomputation was
 * stored have none: their votes check them from their bytes.
 */
export type KeyIdRecord = { id: number; pre?: KeyPrecomputation };
/** Where a vote was committed: the block it is (or will be) sealed in. */
export type VoteRef = { height: number };
/** Who used a tag. */
export type TagUse = { voteId: string; height: number };
/** The close time of a block, fixing its timestamp (and so its hash) before finalize. */
export type SealRecord = { closedAt: number };
/** A vote's leaf index and RFC 9162 inclusion proof, written at sealing. */
export type VoteIndex = { index: number; path: string[] };
/** Which vote sits at a leaf index of a sealed block. */
export type LeafRecord = { voteId: string };

function cfg(name: "open" | "head" | "keys"): Deno.KvKey {
  return ["cfg", name];
}

/** Key builders of a collection with one entry per block height, or per vote id. */
function byHeight(collection: string): (height: number) => Deno.KvKey {
  return (height) => [collection, height];
}
function byVoteId(collection: string): (voteId: string) => Deno.KvKey {
  return (voteId) => [collection, voteId];
}

/** Keys are arrays, collection name first (protocol §5); the value each holds is named. */
export const kvKeys = {
  /** {@link OpenRecord}: the guard every vote commit checks. */
  open: () => cfg("open"),
  /** {@link HeadRecord}: the last sealed block. */
  head: () => cfg("head"),
  /** {@link KeyCountRecord}: the directory size. */
  keyCount: () => cfg("keys"),
  /** {@link KeyEntry}: the key with this id. */
  key: (id: number): Deno.KvKey => ["key", id],
  /** {@link KeyIdRecord}: the id of this key. */
  keyId: (key: string): Deno.KvKey => ["keyid", key],
  /** The vote record; listing a block's votes in key order gives leaf order. */
  vote: (height: number, voteId: string): Deno.KvKey => ["vote", height, voteId],
  /** {@link LeafRecord}: the vote at a leaf index of a sealed block. */
  leaf: (height: number, index: number): Deno.KvKey => ["leaf", height, index],
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
  tag: (tag: string): Deno.KvKey => ["tag", tag],
};

/** The check that `key` holds nothing yet. */
export function absent(key: Deno.KvKey): Deno.AtomicCheck {
  return { key, versionstamp: null };
}

/** Most keys one `getMany` may read. */
export const GET_MANY_LIMIT = 10;
/** Default most mutations per batched commit (KV allows 1000). */
export const BATCH_MAX_MUTATIONS = 900;
/** Default most bytes of keys and values per batched commit (KV allows 800 KiB). */
export const BATCH_MAX_BYTES = 700_000;
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

/** Commits `op`; a transient throw is reported as `null` (outcome unknown), anything else rethrows. */
export async function tryCommit(
  op: Deno.AtomicOperation,
): Promise<Deno.KvCommitResult | Deno.KvCommitError | null> {
  try {
    return await op.commit();
  } catch (error) {
    if (isTransientKvError(error)) return null;
    throw error;
  }
}

/** Runs a read, retrying while the database reports a transient lock. */
export async function readRetrying<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 0;; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (!isTransientKvError(error) || attempt >= MAX_ATTEMPTS) throw error;
      await backoff(attempt);
    }
  }
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

/** Limits of {@link commitInBatches}, and who to tell after each commit. */
export type BatchOptions = {
  /** Most mutations per commit; {@link BATCH_MAX_MUTATIONS} by default. */
  maxMutations?: number;
  /** Most estimated bytes per commit; {@link BATCH_MAX_BYTES} by default. */
  maxBytes?: number;
  /** Called, and awaited, after the k-th commit (from 1); a throw stops the writing there. */
  afterCommit?: (k: number) => void | Promise<void>;
};

/**
 * Sets idempotent `groups` of entries in as few commits as the limits allow, never splitting a
 * group across commits. Each group comes with its estimated size in bytes.
 */
export async function commitInBatches(
  kv: Deno.Kv,
  groups: Iterable<{ entries: [Deno.KvKey, unknown][]; bytes: number }>,
  options: BatchOptions = {},
): Promise<void> {
  const maxMutations = options.maxMutations ?? BATCH_MAX_MUTATIONS;
  const maxBytes = options.maxBytes ?? BATCH_MAX_BYTES;
  let batch: [Deno.KvKey, unknown][] = [];
  let batchBytes = 0;
  let commits = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await commitIdempotent(kv, batch);
    batch = [];
    batchBytes = 0;
    await options.afterCommit?.(++commits);
  };
  for (const { entries, bytes } of groups) {
    if (batch.length + entries.length > maxMutations || batchBytes + bytes > maxBytes) {
      await flush();
    }
    batch.push(...entries);
    batchBytes += bytes;
  }
  await flush();
}
