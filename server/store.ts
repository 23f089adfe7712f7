// The ledger over Deno KV (protocol §5): the key directory, vote submission, the bulletin-board
// reads, and the close and finalize steps the sealer (server/sealer.ts) drives. The key layout
// and the commit helpers live in server/kv_layout.ts.
import { genesisBlock } from "../lib/protocol/chain.ts";
import { bytesToBase64, hexToBytes } from "../lib/protocol/bytes.ts";
// The wire shapes of protocol §4: the store answers in them, so the API passes them on unchanged.
import type * as wire from "../lib/protocol/schemas.ts";
import { rankTally } from "../lib/protocol/tally.ts";
import {
  type KeyPrecomputation,
  PRECOMPUTATION_BYTES,
} from "../lib/protocol/key_precomputation.ts";
import { createLruCache, type LruCache } from "../lib/protocol/member_cache.ts";
import { duplicateKey, duplicateTag, quote, refusal } from "./errors.ts";
import {
  absent,
  backoff,
  type BatchOptions,
  commitInBatches,
  getManyChunked,
  type HeadRecord,
  isBoundRecord,
  type KeyCountRecord,
  type KeyIdRecord,
  keyRecordMac,
  keyRecordSecret,
  kvKeys,
  type LeafRecord,
  MAX_ATTEMPTS,
  type OpenRecord,
  readRetrying,
  type SealRecord,
  type ServerKeyRecord,
  type StoredKey,
  type TagUse,
  tryCommit,
  type VoteIndex,
  type VoteRef,
} from "./kv_layout.ts";

/** A closed block waiting for finalize: its fixed close time and the head it will follow. */
export type ClosedBlock = { closedAt: number; prev: HeadRecord };

/**
 * A registered key's record as the store answers it: its id, and its precomputation only when the
 * stored MAC binds it to this key (protocol §5.2); without one, votes check the key from its bytes.
 */
export type CheckedKeyRecord = { id: number; pre?: KeyPrecomputation };

/** One vote's proof as the sealer computed it, to be stored under its vote id. */
export type ProofToStore = { voteId: string; proof: VoteIndex };

/** The ledger operations the API and the sealer call. */
export interface Store {
  /**
   * Registers `key` with the next id, storing `pre` (its precomputation) with it; 409
   * `duplicate_key` if it is registered already.
   */
  registerKey(key: string, pre?: KeyPrecomputation): Promise<wire.KeyRecord>;
  /** The key with id `id`; 404 `unknown_key` if there is none. */
  keyById(id: number): Promise<wire.KeyRecord>;
  /** Up to `limit` keys from id `offset + 1`, and the directory size. */
  keyPage(offset: number, limit: number): Promise<wire.KeyPage>;
  /**
   * The stored record of each of `keys` (id, and precomputation if bound to the key by its MAC),
   * null where not registered. Records read or written here are kept in memory within the store's
   * record budget.
   */
  lookupKeys(keys: string[]): Promise<(CheckedKeyRecord | null)[]>;
  /** Key records held in memory now, and the most the record budget allows. */
  recordStats(): { held: number; capacity: number };
  /** True when a vote with `tag` is stored already. */
  isTagUsed(tag: string): Promise<boolean>;
  /** Commits a verified vote into the open block; 409 `duplicate_tag` if the tag has voted. */
  submitVote(vote: wire.VoteRecord, tag: string): Promise<wire.VoteAccepted>;
  /** The head block and the open block. */
  status(): Promise<wire.BlockStatus>;
  /** The sealed block at `height`, or null. */
  block(height: number): Promise<wire.BlockRecord | null>;
  /** Up to `limit` sealed blocks from height `from`, and the head height. */
  blocks(from: number, limit: number): Promise<wire.BlockList>;
  /** A sealed vote with its stored proof; 404 `unknown_vote` or `block_not_sealed`. */
  voteProof(height: number, voteId: string): Promise<wire.VoteProof>;
  /** Up to `limit` votes of sealed block `height` from leaf `offset`; 404 `unknown_block`. */
  blockVotes(height: number, offset: number, limit: number): Promise<wire.BlockVotes>;
  /** Counts per payload over sealed votes, count descending. */
  tally(): Promise<wire.Tally>;
  /** Which vote used `tag`; 404 `unknown_tag`. */
  tagUse(tag: string): Promise<wire.TagRecord>;
  /** The seed of the server's head-signing key, made once at first start (protocol §4). */
  serverSeed(): Uint8Array;
  /** The height of a block closed but not finalized (a crash, or another sealer), or null. */
  pendingBlock(): Promise<number | null>;
  /**
   * Close (one commit): moves the guard from N to N+1 and fixes `["seal", N]` at `now`, only
   * when block N holds a vote. Returns the height to finalize: N, or a block another process
   * closed meanwhile; null when there is nothing to close.
   */
  closeOpenBlock(now: number): Promise<number | null>;
  /** The block at `height` if it is sealed already, else its close record; throws if not closed. */
  closedBlock(height: number): Promise<{ sealed: wire.BlockRecord } | ClosedBlock>;
  /** `leafOf` of every vote of block `height`, in leaf (vote id) order, with the vote ids. */
  mapBlockVotes<T>(
    height: number,
    leafOf: (vote: wire.VoteRecord) => T,
  ): Promise<{ voteIds: string[]; leaves: T[] }>;
  /** Stores every proof and leaf of block `height` in commits within the KV limits. */
  writeProofs(
    height: number,
    proofs: Iterable<ProofToStore>,
    options?: BatchOptions,
  ): Promise<void>;
  /**
   * Writes `block` and moves the head to it in one commit checked against both; returns the
   * stored block (this one, or an identical one a concurrent sealer wrote).
   */
  appendBlock(block: wire.BlockRecord): Promise<wire.BlockRecord>;
}

/** Options of {@link createStore}. */
export type StoreOptions = {
  /** Clock for the genesis timestamp, ms since the epoch. */
  now?: () => number;
  /** Source of vote ids; 16 random bytes, base64url, by default. */
  newVoteId?: () => string;
  /** Bytes of key records kept in memory; {@link DEFAULT_RECORD_BUDGET} by default. */
  recordBudgetBytes?: number;
};

/**
 * Default memory for key records on the request thread: 16 MiB, about 3,700 keys. With the
 * verifier's member budget (lib/protocol/member_cache.ts) it makes the process's one bound on
 * per-key memory, whatever the directory size or the core count.
 */
export const DEFAULT_RECORD_BUDGET = 16 * 1024 * 1024;

/** Heap bytes of one cached key record: its precomputation, the key string and the map entry. */
export const RECORD_BYTES = PRECOMPUTATION_BYTES + 512;

/**
 * A store over `kv`. Creates the genesis block, the guard and the head once, at first start;
 * later starts (and other processes sharing the database) find them in place.
 */
export async function createStore(kv: Deno.Kv, options: StoreOptions = {}): Promise<Store> {
  const now = options.now ?? Date.now;
  const newVoteId = options.newVoteId ?? randomVoteId;
  await ensureGenesis(kv, now());
  const serverSeed = await ensureServerKey(kv);
  const recordSecret = keyRecordSecret(serverSeed);
  const registrar = createRegistrar(kv, recordSecret);
  const records = createLruCache<CheckedKeyRecord>(
    Math.floor((options.recordBudgetBytes ?? DEFAULT_RECORD_BUDGET) / RECORD_BYTES),
  );
  const tallyCache: TallyCache = { height: 0, counts: new Map(), total: 0, pending: null };
  return {
    async registerKey(key, pre) {
      const registered = await registrar.register(key, pre);
      records.set(key, pre ? { id: registered.id, pre } : { id: registered.id });
      return registered;
    },
    keyById: (id) => keyById(kv, id),
    keyPage: (offset, limit) => keyPage(kv, offset, limit),
    lookupKeys: (keys) => lookupKeys(kv, { records, secret: recordSecret }, keys),
    recordStats: () => ({ held: records.size, capacity: records.capacity }),
    isTagUsed: async (tag) =>
      (await readRetrying(() => kv.get<TagUse>(kvKeys.tag(tag)))).versionstamp !== null,
    submitVote: (vote, tag) => submitVote(kv, { vote, tag, voteId: newVoteId() }),
    status: () => blockStatus(kv),
    block: async (height) => (await kv.get<wire.BlockRecord>(kvKeys.block(height))).value,
    blocks: (from, limit) => blockRange(kv, from, limit),
    voteProof: (height, voteId) => voteProof(kv, height, voteId),
    blockVotes: (height, offset, limit) => blockVotes(kv, height, offset, limit),
    tally: () => tally(kv, tallyCache),
    tagUse: (tag) => tagUse(kv, tag),
    serverSeed: () => serverSeed.slice(),
    pendingBlock: () => pendingBlock(kv),
    closeOpenBlock: (at) => closeOpenBlock(kv, at),
    closedBlock: (height) => closedBlock(kv, height),
    mapBlockVotes: (height, leafOf) => mapBlockVotes(kv, height, leafOf),
    writeProofs: (height, proofs, batch) => writeProofs(kv, height, proofs, batch),
    appendBlock: (block) => appendBlock(kv, block),
  };
}

/** A fresh vote id: 16 random bytes as unpadded base64url (URL-safe, opaque). */
export function randomVoteId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return bytesToBase64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

async function ensureGenesis(kv: Deno.Kv, now: number): Promise<void> {
  for (let attempt = 0;; attempt++) {
    const existing = await readRetrying(() => kv.get<wire.BlockRecord>(kvKeys.block(0)));
    if (existing.value) return;
    const genesis = genesisBlock(now);
    const res = await tryCommit(
      kv.atomic()
        .check(absent(kvKeys.block(0)))
        .check(absent(kvKeys.head()))
        .check(absent(kvKeys.open()))
        .set(kvKeys.block(0), genesis)
        .set(kvKeys.head(), { height: 0, hash: genesis.hash } satisfies HeadRecord)
        .set(kvKeys.open(), { height: 1 } satisfies OpenRecord),
    );
    if (res?.ok) return;
    if (attempt >= MAX_ATTEMPTS) throw new Error("Could not create the genesis block");
    await backoff(attempt);
  }
}

/**
 * The head-signing key's seed: read, or made and stored with a check that nothing is there yet,
 * so that processes starting together on one database all end with the one stored key.
 */
async function ensureServerKey(kv: Deno.Kv): Promise<Uint8Array> {
  for (let attempt = 0;; attempt++) {
    const existing = await readRetrying(() => kv.get<ServerKeyRecord>(kvKeys.serverKey()));
    if (existing.value) return existing.value.seed;
    const seed = crypto.getRandomValues(new Uint8Array(32));
    const res = await tryCommit(
      kv.atomic()
        .check({ key: kvKeys.serverKey(), versionstamp: null })
        .set(kvKeys.serverKey(), { seed } satisfies ServerKeyRecord),
    );
    if (res?.ok) return seed;
    if (attempt >= MAX_ATTEMPTS) throw new Error("Could not store the server key");
    await backoff(attempt);
  }
}

// ---- key directory ----

/** A registration waiting for its commit; `mac` binds `pre` to `key` (protocol §5.2). */
type Registration = {
  key: string;
  pre?: KeyPrecomputation;
  mac?: Uint8Array;
  resolve(record: wire.KeyRecord): void;
  reject(error: Error): void;
};

/**
 * Most keys one registration commit takes: each adds a uniqueness check, and the id counter takes
 * one more, within the 10 checks a commit may make (protocol §5 limits).
 */
const REGISTRATION_BATCH = 9;

/**
 * Registrations of one process, committed in batches: concurrent registrations would otherwise
 * all race for the id counter, and all but one retry. Each commit takes up to
 * REGISTRATION_BATCH waiting keys, still checked against other processes like a single one.
 */
function createRegistrar(kv: Deno.Kv, secret: Uint8Array) {
  const waiting: Registration[] = [];
  let running = false;

  async function drain(): Promise<void> {
    running = true;
    try {
      while (waiting.length > 0) {
        const batch: Registration[] = [];
        const keys = new Set<string>();
        // A key sent twice at once goes into a later batch, where it meets its own first copy.
        for (let i = 0; i < waiting.length && batch.length < REGISTRATION_BATCH; i++) {
          if (keys.has(waiting[i].key)) continue;
          keys.add(waiting[i].key);
          batch.push(...waiting.splice(i--, 1));
        }
        try {
          await commitRegistrations(kv, batch);
        } catch (error) {
          for (const registration of batch) registration.reject(error as Error);
        }
      }
    } finally {
      running = false;
    }
  }

  return {
    register(key: string, pre?: KeyPrecomputation): Promise<wire.KeyRecord> {
      const mac = pre && keyRecordMac(pre, { key: hexToBytes(key, 32, "key"), secret });
      const answer = new Promise<wire.KeyRecord>((resolve, reject) => {
        waiting.push({ key, pre, mac, resolve, reject });
      });
      if (!running) drain();
      return answer;
    },
  };
}

/**
 * Commits `batch` with contiguous ids after the counter: one commit checking the counter and that
 * every key is new. A key found registered already is refused with 409 and left out; a lost race
 * or a lock error reads back and retries.
 */
async function commitRegistrations(kv: Deno.Kv, batch: Registration[]): Promise<void> {
  let pending = batch;
  for (let attempt = 0;; attempt++) {
    const [count, ...existing] = await readRetrying(() =>
      kv.getMany<[KeyCountRecord, ...KeyIdRecord[]]>([
        kvKeys.keyCount(),
        ...pending.map((r) => kvKeys.keyId(r.key)),
      ])
    );
    pending = pending.filter((registration, i) => {
      const found = existing[i].value as KeyIdRecord | null;
      if (found) registration.reject(duplicateKey(registration.key, found.id));
      return !found;
    });
    if (pending.length === 0) return;
    const first = ((count.value as KeyCountRecord | null)?.total ?? 0) + 1;
    const total = first + pending.length - 1;
    const op = kv.atomic().check(count).set(kvKeys.keyCount(), { total } satisfies KeyCountRecord);
    pending.forEach(({ key, pre, mac }, i) => {
      op.check(absent(kvKeys.keyId(key)))
        .set(kvKeys.key(first + i), { key } satisfies StoredKey)
        .set(
          kvKeys.keyId(key),
          (pre ? { id: first + i, pre, mac } : { id: first + i }) satisfies KeyIdRecord,
        );
    });
    const res = await tryCommit(op);
    if (res?.ok === true) {
      pending.forEach(({ key, resolve }, i) => resolve({ id: first + i, key, total }));
      return;
    }
    if (res === null) {
      // The commit threw: it may have landed, all of it or nothing. A key holding the id this
      // attempt gave it is registered as answered (by this commit or an identical concurrent
      // one); any other key, even in the same batch, is read again and retried.
      const held = await readRetrying(() =>
        kv.getMany<KeyIdRecord[]>(pending.map(({ key }) => kvKeys.keyId(key)))
      );
      pending = pending.filter(({ key, resolve }, i) => {
        const mine = held[i].value?.id === first + i;
        if (mine) resolve({ id: first + i, key, total });
        return !mine;
      });
      if (pending.length === 0) return;
    }
    if (attempt >= MAX_ATTEMPTS) throw new Error(`Key registration kept conflicting`);
    await backoff(attempt);
  }
}

/**
 * Each key's record, from memory where it is held, else from KV. A registered key's record never
 * changes, so a record once read is as good as a fresh read; a key not found is not remembered,
 * since another process may register it at any moment. Records are shared between callers:
 * read-only.
 *
 * A precomputation read from KV is used only when its MAC binds it to this key (protocol §5.2).
 * One whose MAC fails (altered, or copied from another key or database), one written without a
 * MAC (before records carried one) and one in an earlier stored form are dropped on reading: the
 * record is the id alone and votes check the key from its bytes. So a crafted record cannot change
 * which tag verifies for a key, and a dropped one neither travels with every vote nor takes more
 * than RECORD_BYTES.
 */
async function lookupKeys(
  kv: Deno.Kv,
  { records, secret }: { records: LruCache<CheckedKeyRecord>; secret: Uint8Array },
  keys: string[],
): Promise<(CheckedKeyRecord | null)[]> {
  const found = keys.map((key) => records.get(key) ?? null);
  const unread = keys.flatMap((_, i) => (found[i] ? [] : [i]));
  if (unread.length === 0) return found;
  const entries = await getManyChunked<KeyIdRecord>(kv, unread.map((i) => kvKeys.keyId(keys[i])));
  entries.forEach(({ value }, k) => {
    if (!value) return;
    const key = keys[unread[k]];
    const record = checkedRecord(key, value, secret);
    found[unread[k]] = record;
    records.set(key, record);
  });
  return found;
}

/**
 * `value` with its precomputation if its MAC binds it to `key`, else its id alone. A MAC that is
 * there and fails means the record was altered or copied: that is reported, never silently used.
 */
function checkedRecord(key: string, value: KeyIdRecord, secret: Uint8Array): CheckedKeyRecord {
  let bytes: Uint8Array;
  try {
    bytes = hexToBytes(key, 32, "key");
  } catch {
    return { id: value.id };
  }
  if (isBoundRecord(value, { key: bytes, secret })) return { id: value.id, pre: value.pre };
  if (value.mac !== undefined) {
    console.warn(`The stored precomputation of key "${quote(key)}" fails its MAC: not used`);
  }
  return { id: value.id };
}

async function keyTotal(kv: Deno.Kv): Promise<number> {
  const count = await readRetrying(() => kv.get<KeyCountRecord>(kvKeys.keyCount()));
  return count.value?.total ?? 0;
}

async function keyById(kv: Deno.Kv, id: number): Promise<wire.KeyRecord> {
  const [record, count] = await readRetrying(() =>
    kv.getMany<[StoredKey, KeyCountRecord]>([kvKeys.key(id), kvKeys.keyCount()])
  );
  if (!record.value) throw refusal("unknown_key", `No key with id ${id}`);
  return { id, key: record.value.key, total: count.value?.total ?? 0 };
}

async function keyPage(kv: Deno.Kv, offset: number, limit: number): Promise<wire.KeyPage> {
  const keys: wire.KeyPage["keys"] = [];
  if (limit > 0) {
    const entries = kv.list<StoredKey>({
      start: kvKeys.key(offset + 1),
      end: kvKeys.key(offset + limit + 1),
    });
    for await (const entry of entries) {
      keys.push({ id: entry.key[1] as number, key: entry.value.key });
    }
  }
  return { keys, total: await keyTotal(kv) };
}

// ---- vote ledger ----

/**
 * Commits a verified vote into the open block (protocol §5 "Submit"): one commit that checks the
 * guard is unchanged, the tag unused and the vote id unused, and sets the vote, its reference
 * and the tag. After a lost race or a thrown commit it reads back the reference (landed: answer
 * it) and the tag (taken: 409), and otherwise retries into the new open block.
 */
async function submitVote(
  kv: Deno.Kv,
  { vote, tag, voteId }: { vote: wire.VoteRecord; tag: string; voteId: string },
): Promise<wire.VoteAccepted> {
  for (let attempt = 0;; attempt++) {
    const open = await readRetrying(() => kv.get<OpenRecord>(kvKeys.open()));
    if (!open.value) throw new Error("The ledger has no open block");
    const height = open.value.height;
    const res = await tryCommit(
      kv.atomic()
        .check(open)
        .check(absent(kvKeys.tag(tag)))
        .check(absent(kvKeys.voteRef(voteId)))
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

// ---- reads ----

async function readPointers(kv: Deno.Kv) {
  const [open, head] = await readRetrying(() =>
    kv.getMany<[OpenRecord, HeadRecord]>([kvKeys.open(), kvKeys.head()])
  );
  if (!open.value || !head.value) throw new Error("The ledger has no genesis block");
  return { open, head };
}

async function blockStatus(kv: Deno.Kv): Promise<wire.BlockStatus> {
  const { open, head } = await readPointers(kv);
  const block = await readRetrying(() => kv.get<wire.BlockRecord>(kvKeys.block(head.value.height)));
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

async function blockRange(kv: Deno.Kv, from: number, limit: number): Promise<wire.BlockList> {
  const height = await headHeight(kv);
  const blocks: wire.BlockRecord[] = [];
  if (limit > 0) {
    const entries = kv.list<wire.BlockRecord>({
      start: kvKeys.block(from),
      end: kvKeys.block(from + limit),
    });
    for await (const entry of entries) blocks.push(entry.value);
  }
  return { blocks, height };
}

/** A vote's proof from stored data: one `getMany` of four point reads. */
async function voteProof(kv: Deno.Kv, height: number, voteId: string): Promise<wire.VoteProof> {
  const [ref, block, index, vote] = await readRetrying(() =>
    kv.getMany<[VoteRef, wire.BlockRecord, VoteIndex, wire.VoteRecord]>([
      kvKeys.voteRef(voteId),
      kvKeys.block(height),
      kvKeys.voteIndex(voteId),
      kvKeys.vote(height, voteId),
    ])
  );
  if (!ref.value || ref.value.height !== height || !vote.value) {
    throw refusal("unknown_vote", `No vote "${quote(voteId)}" in block ${height}`);
  }
  if (!block.value || !index.value) {
    throw refusal("block_not_sealed", `Block ${height} is not sealed yet`);
  }
  return { vote: vote.value, index: index.value.index, path: index.value.path, block: block.value };
}

async function blockVotes(
  kv: Deno.Kv,
  height: number,
  offset: number,
  limit: number,
): Promise<wire.BlockVotes> {
  const block = await readRetrying(() => kv.get<wire.BlockRecord>(kvKeys.block(height)));
  if (!block.value) throw refusal("unknown_block", `No sealed block at height ${height}`);
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
  const found = await getManyChunked<wire.VoteRecord>(
    kv,
    leaves.map((leaf) => kvKeys.vote(height, leaf.voteId)),
  );
  const votes = leaves.map((leaf, i) => {
    const vote = found[i].value;
    if (!vote) throw new Error(`Vote ${leaf.voteId} of block ${height} is missing`);
    return { ...leaf, vote };
  });
  return { votes, total: block.value.size };
}

async function tagUse(kv: Deno.Kv, tag: string): Promise<wire.TagRecord> {
  const used = await readRetrying(() => kv.get<TagUse>(kvKeys.tag(tag)));
  if (!used.value) throw refusal("unknown_tag", `No vote with tag "${quote(tag)}"`);
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

async function tally(kv: Deno.Kv, cache: TallyCache): Promise<wire.Tally> {
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
    for await (const entry of kv.list<wire.VoteRecord>({ prefix: kvKeys.votesOf(height) })) {
      payloads.push(entry.value.payload);
    }
    for (const payload of payloads) {
      cache.counts.set(payload, (cache.counts.get(payload) ?? 0) + 1);
    }
    cache.total += payloads.length;
    cache.height = height;
  }
}

// ---- sealing steps (protocol §5 "Close" and "Finalize") ----

async function pendingBlock(kv: Deno.Kv): Promise<number | null> {
  const { open, head } = await readPointers(kv);
  return open.value.height === head.value.height + 2 ? head.value.height + 1 : null;
}

async function closeOpenBlock(kv: Deno.Kv, now: number): Promise<number | null> {
  for (let attempt = 0;; attempt++) {
    const { open, head } = await readPointers(kv);
    const height = open.value.height;
    if (height === head.value.height + 2) return height - 1;
    if (height !== head.value.height + 1) {
      throw new Error(`Open block ${height} does not follow head ${head.value.height}`);
    }
    if (!(await holdsVotes(kv, height))) return null;
    const res = await tryCommit(
      kv.atomic()
        .check(open)
        .check(head)
        .check(absent(kvKeys.seal(height)))
        .set(kvKeys.open(), { height: height + 1 } satisfies OpenRecord)
        .set(kvKeys.seal(height), { closedAt: now } satisfies SealRecord),
    );
    if (res?.ok) return height;
    const seal = await readRetrying(() => kv.get<SealRecord>(kvKeys.seal(height)));
    if (seal.value) return height;
    if (attempt >= MAX_ATTEMPTS) throw new Error(`Closing block ${height} kept conflicting`);
    await backoff(attempt);
  }
}

async function holdsVotes(kv: Deno.Kv, height: number): Promise<boolean> {
  return await readRetrying(async () => {
    for await (const _ of kv.list({ prefix: kvKeys.votesOf(height) }, { limit: 1 })) return true;
    return false;
  });
}

async function closedBlock(
  kv: Deno.Kv,
  height: number,
): Promise<{ sealed: wire.BlockRecord } | ClosedBlock> {
  const [seal, head, existing] = await readRetrying(() =>
    kv.getMany<[SealRecord, HeadRecord, wire.BlockRecord]>([
      kvKeys.seal(height),
      kvKeys.head(),
      kvKeys.block(height),
    ])
  );
  if (existing.value) return { sealed: existing.value };
  if (!seal.value) throw new Error(`Block ${height} is not closed`);
  if (!head.value || head.value.height !== height - 1) {
    throw new Error(`Block ${height} cannot follow head ${head.value?.height}`);
  }
  return { closedAt: seal.value.closedAt, prev: head.value };
}

async function mapBlockVotes<T>(kv: Deno.Kv, height: number, leafOf: (vote: wire.VoteRecord) => T) {
  const voteIds: string[] = [];
  const leaves: T[] = [];
  // The whole listing is retried, so a lock mid-way does not leave a partial list.
  await readRetrying(async () => {
    voteIds.length = leaves.length = 0;
    for await (const entry of kv.list<wire.VoteRecord>({ prefix: kvKeys.votesOf(height) })) {
      voteIds.push(entry.key[2] as string);
      leaves.push(leafOf(entry.value));
    }
  });
  return { voteIds, leaves };
}

function* proofGroups(height: number, proofs: Iterable<ProofToStore>) {
  let index = 0;
  for (const { voteId, proof } of proofs) {
    const leaf: LeafRecord = { voteId };
    // Generous size estimate: key bytes plus JSON value bytes plus per-entry overhead.
    const bytes = 2 * (voteId.length + 48) + JSON.stringify(proof).length +
      JSON.stringify(leaf).length;
    const entries: [Deno.KvKey, unknown][] = [
      [kvKeys.voteIndex(voteId), proof],
      [kvKeys.leaf(height, index++), leaf],
    ];
    yield { entries, bytes };
  }
}

function writeProofs(
  kv: Deno.Kv,
  height: number,
  proofs: Iterable<ProofToStore>,
  options: BatchOptions = {},
): Promise<void> {
  return commitInBatches(kv, proofGroups(height, proofs), options);
}

async function appendBlock(kv: Deno.Kv, block: wire.BlockRecord): Promise<wire.BlockRecord> {
  const height = block.height;
  for (let attempt = 0;; attempt++) {
    const head = await readRetrying(() => kv.get<HeadRecord>(kvKeys.head()));
    const follows = head.value?.height === height - 1 && head.value.hash === block.prev_hash;
    const res = follows
      ? await tryCommit(
        kv.atomic()
          .check(absent(kvKeys.block(height)))
          .check(head)
          .set(kvKeys.block(height), block)
          .set(kvKeys.head(), { height, hash: block.hash } satisfies HeadRecord),
      )
      : { ok: false as const };
    if (res?.ok) return block;
    const stored = await readRetrying(() => kv.get<wire.BlockRecord>(kvKeys.block(height)));
    if (stored.value) {
      if (stored.value.hash !== block.hash) {
        throw new Error(`Block ${height} was sealed with a different hash`);
      }
      return stored.value;
    }
    if (res !== null || attempt >= MAX_ATTEMPTS) {
      // The checks failed yet no block is stored: the head moved without this block.
      throw new Error(`Block ${height} could not be written: the head changed`);
    }
    await backoff(attempt);
  }
}
