// The key directory, vote ledger and bulletin-board reads over Deno KV, with the key layout and
// the commit protocol of protocol §5. Sealing (close and finalize) lives in server/sealer.ts.
import { genesisBlock } from "../lib/protocol/chain.ts";
import { bytesToBase64 } from "../lib/protocol/bytes.ts";
import type {
  Block,
  BlockStatus,
  KeyPage,
  KeyRecord,
  Tally,
  Vote,
} from "../lib/protocol/schemas.ts";
import { rankTally } from "../lib/protocol/tally.ts";
import { ApiError, quote } from "./errors.ts";

/** The guard: the block new votes go into. */
export type OpenRecord = { height: number };
/** The last sealed block. */
export type HeadRecord = { height: number; hash: string };
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

/** Keys are arrays, collection name first (protocol §5). */
export const kvKeys = {
  open: (): Deno.KvKey => ["cfg", "open"],
  head: (): Deno.KvKey => ["cfg", "head"],
  keyCount: (): Deno.KvKey => ["cfg", "keys"],
  key: (id: number): Deno.KvKey => ["key", id],
  keyId: (key: string): Deno.KvKey => ["keyid", key],
  vote: (height: number, voteId: string): Deno.KvKey => ["vote", height, voteId],
  votesOf: (height: number): Deno.KvKey => ["vote", height],
  voteRef: (voteId: string): Deno.KvKey => ["voteref", voteId],
  tag: (tag: string): Deno.KvKey => ["tag", tag],
  seal: (height: number): Deno.KvKey => ["seal", height],
  voteIndex: (voteId: string): Deno.KvKey => ["voteidx", voteId],
  leaf: (height: number, index: number): Deno.KvKey => ["leaf", height, index],
  block: (height: number): Deno.KvKey => ["block", height],
};

/** Most keys one `getMany` may read. */
export const GET_MANY_LIMIT = 10;

/** The ledger operations the API calls; `kv` is exposed for the sealer and tests. */
export interface Store {
  readonly kv: Deno.Kv;
  registerKey(key: string): Promise<KeyRecord>;
  keyById(id: number): Promise<KeyRecord>;
  keyPage(offset: number, limit: number): Promise<KeyPage>;
  unregisteredKeys(keys: string[]): Promise<string[]>;
  submitVote(vote: Vote, tag: string): Promise<{ voteId: string; blockId: number }>;
  status(): Promise<BlockStatus>;
  block(height: number): Promise<Block | null>;
  blocks(from: number, limit: number): Promise<{ blocks: Block[]; height: number }>;
  voteProof(height: number, voteId: string): Promise<{
    vote: Vote;
    index: number;
    path: string[];
    block: Block;
  }>;
  blockVotes(height: number, offset: number, limit: number): Promise<{
    votes: { voteId: string; index: number; vote: Vote }[];
    total: number;
  }>;
  tally(): Promise<Tally>;
  tagUse(tag: string): Promise<{ voteId: string; blockId: number }>;
}

/** Options of {@link createStore}. */
export type StoreOptions = {
  /** Clock for the genesis timestamp, ms since the epoch. */
  now?: () => number;
  /** Source of vote ids; 16 random bytes, base64url, by default. */
  newVoteId?: () => string;
};

/**
 * A store over `kv`. Creates the genesis block, the guard and the head once, at first start;
 * later starts (and other processes sharing the database) find them in place.
 */
export async function createStore(kv: Deno.Kv, options: StoreOptions = {}): Promise<Store> {
  const now = options.now ?? Date.now;
  const newVoteId = options.newVoteId ?? randomVoteId;
  await ensureGenesis(kv, now());
  const tallyCache: TallyCache = { height: 0, counts: new Map(), total: 0, pending: null };
  return {
    kv,
    registerKey: (key) => registerKey(kv, key),
    keyById: (id) => keyById(kv, id),
    keyPage: (offset, limit) => keyPage(kv, offset, limit),
    unregisteredKeys: (keys) => unregisteredKeys(kv, keys),
    submitVote: (vote, tag) => submitVote(kv, { vote, tag, voteId: newVoteId() }),
    status: () => blockStatus(kv),
    block: async (height) => (await kv.get<Block>(kvKeys.block(height))).value,
    blocks: (from, limit) => blockRange(kv, from, limit),
    voteProof: (height, voteId) => voteProof(kv, height, voteId),
    blockVotes: (height, offset, limit) => blockVotes(kv, height, offset, limit),
    tally: () => tally(kv, tallyCache),
    tagUse: (tag) => tagUse(kv, tag),
  };
}

/** A fresh vote id: 16 random bytes as unpadded base64url (URL-safe, opaque). */
export function randomVoteId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return bytesToBase64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

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

/** Upper bound on optimistic retries; reaching it means something is wrong, not contention. */
export const MAX_ATTEMPTS = 10_000;

/** Short randomised pause before retrying a commit that lost a race. */
export function backoff(attempt: number): Promise<void> {
  const ms = Math.min(50, 1 + attempt) * Math.random();
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function ensureGenesis(kv: Deno.Kv, now: number): Promise<void> {
  for (let attempt = 0;; attempt++) {
    const existing = await readRetrying(() => kv.get<Block>(kvKeys.block(0)));
    if (existing.value) return;
    const genesis = genesisBlock(now);
    const res = await tryCommit(
      kv.atomic()
        .check({ key: kvKeys.block(0), versionstamp: null })
        .check({ key: kvKeys.head(), versionstamp: null })
        .check({ key: kvKeys.open(), versionstamp: null })
        .set(kvKeys.block(0), genesis)
        .set(kvKeys.head(), { height: 0, hash: genesis.hash } satisfies HeadRecord)
        .set(kvKeys.open(), { height: 1 } satisfies OpenRecord),
    );
    if (res?.ok) return;
    if (attempt >= MAX_ATTEMPTS) throw new Error("Could not create the genesis block");
    await backoff(attempt);
  }
}

// ---- key directory ----

async function registerKey(kv: Deno.Kv, key: string): Promise<KeyRecord> {
  for (let attempt = 0;; attempt++) {
    const [count, existing] = await readRetrying(() =>
      kv.getMany<[{ total: number }, { id: number }]>([kvKeys.keyCount(), kvKeys.keyId(key)])
    );
    if (existing.value) throw duplicateKey(key, existing.value.id);
    const id = (count.value?.total ?? 0) + 1;
    const res = await tryCommit(
      kv.atomic()
        .check(count)
        .check({ key: kvKeys.keyId(key), versionstamp: null })
        .set(kvKeys.keyCount(), { total: id })
        .set(kvKeys.key(id), { key })
        .set(kvKeys.keyId(key), { id }),
    );
    if (res?.ok) return { id, key, total: id };
    if (res === null) {
      // The commit threw: it may have landed. If the key now holds the id this attempt wrote,
      // the registration is ours (or an identical concurrent one) and succeeded.
      const landed = await readRetrying(() => kv.get<{ id: number }>(kvKeys.keyId(key)));
      if (landed.value?.id === id) return { id, key, total: id };
    }
    if (attempt >= MAX_ATTEMPTS) throw new Error(`Key registration kept conflicting`);
    await backoff(attempt);
  }
}

function duplicateKey(key: string, id: number): ApiError {
  return new ApiError(409, "duplicate_key", `Key "${quote(key)}" is already registered`, { id });
}

async function keyTotal(kv: Deno.Kv): Promise<number> {
  const count = await readRetrying(() => kv.get<{ total: number }>(kvKeys.keyCount()));
  return count.value?.total ?? 0;
}

async function keyById(kv: Deno.Kv, id: number): Promise<KeyRecord> {
  const [record, count] = await readRetrying(() =>
    kv.getMany<[{ key: string }, { total: number }]>([kvKeys.key(id), kvKeys.keyCount()])
  );
  if (!record.value) throw new ApiError(404, "unknown_key", `No key with id ${id}`);
  return { id, key: record.value.key, total: count.value?.total ?? 0 };
}

async function keyPage(kv: Deno.Kv, offset: number, limit: number): Promise<KeyPage> {
  const keys: KeyPage["keys"] = [];
  if (limit > 0) {
    const entries = kv.list<{ key: string }>({
      start: kvKeys.key(offset + 1),
      end: kvKeys.key(offset + limit + 1),
    });
    for await (const entry of entries) {
      keys.push({ id: entry.key[1] as number, key: entry.value.key });
    }
  }
  return { keys, total: await keyTotal(kv) };
}

async function unregisteredKeys(kv: Deno.Kv, keys: string[]): Promise<string[]> {
  const missing: string[] = [];
  for (let i = 0; i < keys.length; i += GET_MANY_LIMIT) {
    const chunk = keys.slice(i, i + GET_MANY_LIMIT);
    const found = await readRetrying(() => kv.getMany(chunk.map(kvKeys.keyId)));
    found.forEach((entry, j) => {
      if (entry.versionstamp === null) missing.push(chunk[j]);
    });
  }
  return missing;
}

// ---- vote ledger ----

/**
 * Commits a verified vote into the open block (protocol §5 "Submit"): one commit that checks the
 * guard is unchanged, the tag unused and the vote id unused, and sets the vote, its reference
 * and the tag. After a lost race or a thrown commit it reads back the reference (landed: answer
 * it) and the tag (taken: 409), and otherwise retries into the new open block.
 */
export async function submitVote(
  kv: Deno.Kv,
  { vote, tag, voteId }: { vote: Vote; tag: string; voteId: string },
): Promise<{ voteId: string; blockId: number }> {
  for (let attempt = 0;; attempt++) {
    const open = await readRetrying(() => kv.get<OpenRecord>(kvKeys.open()));
    if (!open.value) throw new Error("The ledger has no open block");
    const height = open.value.height;
    const res = await tryCommit(
      kv.atomic()
        .check(open)
        .check({ key: kvKeys.tag(tag), versionstamp: null })
        .check({ key: kvKeys.voteRef(voteId), versionstamp: null })
        .set(kvKeys.vote(height, voteId), vote)
        .set(kvKeys.voteRef(voteId), { height } satisfies VoteRef)
        .set(kvKeys.tag(tag), { voteId, height } satisfies TagUse),
    );
    if (res?.ok) return { voteId, blockId: height };
    const [ref, used] = await readRetrying(() =>
      kv.getMany<[VoteRef, TagUse]>([kvKeys.voteRef(voteId), kvKeys.tag(tag)])
    );
    if (ref.value) return { voteId, blockId: ref.value.height };
    if (used.value) throw duplicateTag(tag);
    if (attempt >= MAX_ATTEMPTS) throw new Error("Vote commit kept conflicting");
    await backoff(attempt);
  }
}

function duplicateTag(tag: string): ApiError {
  return new ApiError(409, "duplicate_tag", `Tag "${quote(tag)}" has already voted`);
}

// ---- reads ----

async function blockStatus(kv: Deno.Kv): Promise<BlockStatus> {
  const [open, head] = await readRetrying(() =>
    kv.getMany<[OpenRecord, HeadRecord]>([kvKeys.open(), kvKeys.head()])
  );
  if (!open.value || !head.value) throw new Error("The ledger has no genesis block");
  const block = await readRetrying(() => kv.get<Block>(kvKeys.block(head.value.height)));
  if (!block.value) throw new Error(`Head block ${head.value.height} is missing`);
  return {
    height: head.value.height,
    hash: head.value.hash,
    timestamp: block.value.timestamp,
    openBlock: open.value.height,
  };
}

async function headHeight(kv: Deno.Kv): Promise<number> {
  const head = await readRetrying(() => kv.get<HeadRecord>(kvKeys.head()));
  if (!head.value) throw new Error("The ledger has no genesis block");
  return head.value.height;
}

async function blockRange(
  kv: Deno.Kv,
  from: number,
  limit: number,
): Promise<{ blocks: Block[]; height: number }> {
  const height = await headHeight(kv);
  const blocks: Block[] = [];
  if (limit > 0) {
    const entries = kv.list<Block>({
      start: kvKeys.block(from),
      end: kvKeys.block(from + limit),
    });
    for await (const entry of entries) blocks.push(entry.value);
  }
  return { blocks, height };
}

/** A vote's proof from stored data: one `getMany` of four point reads. */
async function voteProof(kv: Deno.Kv, height: number, voteId: string) {
  const [ref, block, index, vote] = await readRetrying(() =>
    kv.getMany<[VoteRef, Block, VoteIndex, Vote]>([
      kvKeys.voteRef(voteId),
      kvKeys.block(height),
      kvKeys.voteIndex(voteId),
      kvKeys.vote(height, voteId),
    ])
  );
  if (!ref.value || ref.value.height !== height || !vote.value) {
    throw new ApiError(404, "unknown_vote", `No vote "${quote(voteId)}" in block ${height}`);
  }
  if (!block.value || !index.value) {
    throw new ApiError(404, "block_not_sealed", `Block ${height} is not sealed yet`);
  }
  return { vote: vote.value, index: index.value.index, path: index.value.path, block: block.value };
}

function unknownBlock(height: number): ApiError {
  return new ApiError(404, "unknown_block", `No sealed block at height ${height}`);
}

async function blockVotes(kv: Deno.Kv, height: number, offset: number, limit: number) {
  const block = await readRetrying(() => kv.get<Block>(kvKeys.block(height)));
  if (!block.value) throw unknownBlock(height);
  const leaves: { voteId: string; index: number }[] = [];
  if (limit > 0) {
    const entries = kv.list<LeafRecord>({
      start: kvKeys.leaf(height, offset),
      end: kvKeys.leaf(height, offset + limit),
    });
    for await (const entry of entries) {
      leaves.push({ voteId: entry.value.voteId, index: entry.key[2] as number });
    }
  }
  const votes: { voteId: string; index: number; vote: Vote }[] = [];
  for (let i = 0; i < leaves.length; i += GET_MANY_LIMIT) {
    const chunk = leaves.slice(i, i + GET_MANY_LIMIT);
    const found = await readRetrying(() =>
      kv.getMany<Vote[]>(chunk.map((leaf) => kvKeys.vote(height, leaf.voteId)))
    );
    found.forEach((entry, j) => {
      if (!entry.value) throw new Error(`Vote ${chunk[j].voteId} of block ${height} is missing`);
      votes.push({ ...chunk[j], vote: entry.value });
    });
  }
  return { votes, total: block.value.size };
}

async function tagUse(kv: Deno.Kv, tag: string): Promise<{ voteId: string; blockId: number }> {
  const used = await readRetrying(() => kv.get<TagUse>(kvKeys.tag(tag)));
  if (!used.value) throw new ApiError(404, "unknown_tag", `No vote with tag "${quote(tag)}"`);
  return { voteId: used.value.voteId, blockId: used.value.height };
}

/**
 * Counts per payload over sealed blocks, kept per process and extended block by block: a
 * sealed block never changes, so only blocks sealed since the last call are read.
 */
type TallyCache = {
  height: number;
  counts: Map<string, number>;
  total: number;
  pending: Promise<void> | null;
};

async function tally(kv: Deno.Kv, cache: TallyCache): Promise<Tally> {
  const head = await headHeight(kv);
  while (cache.height < head) {
    if (!cache.pending) {
      cache.pending = extendTally(kv, cache, head).finally(() => {
        cache.pending = null;
      });
    }
    await cache.pending;
  }
  const results = rankTally(cache.counts);
  return { total: cache.total, results };
}

async function extendTally(kv: Deno.Kv, cache: TallyCache, head: number): Promise<void> {
  for (let height = cache.height + 1; height <= head; height++) {
    // Read the whole block before merging, so a failed read leaves the cache as it was.
    const payloads: string[] = [];
    for await (const entry of kv.list<Vote>({ prefix: kvKeys.votesOf(height) })) {
      payloads.push(entry.value.payload);
    }
    for (const payload of payloads) {
      cache.counts.set(payload, (cache.counts.get(payload) ?? 0) + 1);
    }
    cache.total += payloads.length;
    cache.height = height;
  }
}
