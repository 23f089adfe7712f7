/**
 * The sealing steps of a ledger (protocol §5.3 "Close" and "Finalize"), which server/sealer.ts
 * drives through the store: every step either checks what it replaces or is idempotent, so several
 * sealers and a re-run after a crash agree byte for byte.
 * @module
 */
import type * as wire from "../../lib/protocol/schemas.ts";
import {
  backoff,
  LIST_BATCH_MAX,
  listEntries,
  MAX_ATTEMPTS,
  readRetrying,
  tryCommit,
} from "./kv_calls.ts";
import {
  type BatchOptions,
  commitInBatches,
  entryBytes,
  leafRecordBytes,
  voteIndexBytes,
} from "./batches.ts";
import {
  absent,
  type HeadRecord,
  type KvLedger,
  lastPart,
  LEAF_STRIDE,
  type LeafRecord,
  type LedgerKeys,
  type OpenRecord,
  type SealRecord,
  type VoteIndex,
  type WorkRecord,
} from "./layout.ts";
import { readPointers } from "./ledger.ts";

/**
 * A closed block waiting for finalize: its fixed close time, and the head it will follow with the
 * versionstamp it was read at.
 */
export type ClosedBlock = { closedAt: number; prev: HeadRecord; prevVersionstamp: string };

/** One vote's proof as the sealer computed it, to be stored under its vote id. */
export type ProofToStore = { voteId: string; proof: VoteIndex };

/** The height of a block closed but not finalized, or null. */
export async function pendingBlock(ledger: KvLedger): Promise<number | null> {
  const { open, head } = await readPointers(ledger);
  return open.value.height === head.value.height + 2 ? head.value.height + 1 : null;
}

/**
 * The block a sealer finalizes next: one closed before and not finalized (`pending`), or one
 * closed by this call or by another process meanwhile. `closed` is the close record when this
 * call's own commit closed it: the commit checked the head, and wrote the seal, so finalize need
 * not read them again.
 */
export type SealStep = { height: number; pending: boolean; closed: ClosedBlock | null };

/**
 * Close (one commit): moves the guard from N to N+1 and fixes `seal N` at `now`, only when block N
 * holds a vote; answers the height to finalize, or null.
 */
export async function closeOpenBlock(ledger: KvLedger, now: number): Promise<number | null> {
  return (await closeNext(ledger, now))?.height ?? null;
}

/**
 * What {@link closeOpenBlock} does, answering the {@link SealStep}: a block closed but not
 * finalized (found in the same read as the guard, the head and the work record, so a tick with
 * nothing pending costs no read of its own), else the block this call closes, or null.
 */
export async function closeNext(ledger: KvLedger, now: number): Promise<SealStep | null> {
  const { kv, keys } = ledger;
  for (let attempt = 0;; attempt++) {
    const { open, head, also: [work] } = await readPointers(ledger, [keys.work()]);
    const height = open.value.height;
    if (height === head.value.height + 2) {
      return { height: height - 1, pending: true, closed: null };
    }
    if (height !== head.value.height + 1) {
      throw new Error(`Open block ${height} does not follow head ${head.value.height}`);
    }
    // The work record names the open block once a vote landed in it; the listing answers for
    // votes written without one (before work records were kept).
    const named = (work.value as WorkRecord | null)?.height === height;
    if (!named && !(await holdsVotes(ledger, height))) return null;
    const res = await tryCommit(
      kv.atomic()
        .check(open)
        .check(head)
        .check(absent(keys.seal(height)))
        .set(keys.open(), { height: height + 1 } satisfies OpenRecord)
        .set(keys.seal(height), { closedAt: now } satisfies SealRecord),
    );
    if (res?.ok) {
      const closed = { closedAt: now, prev: head.value, prevVersionstamp: head.versionstamp };
      return { height, pending: false, closed };
    }
    const seal = await readRetrying(() => kv.get<SealRecord>(keys.seal(height)));
    if (seal.value) return { height, pending: false, closed: null };
    if (attempt >= MAX_ATTEMPTS) throw new Error(`Closing block ${height} kept conflicting`);
    await backoff(attempt);
  }
}

async function holdsVotes({ kv, keys }: KvLedger, height: number): Promise<boolean> {
  let holds = false;
  await listEntries(kv, {
    selector: { prefix: keys.votesOf(height) },
    options: { limit: 1 },
    each: () => holds = true,
  });
  return holds;
}

/** The block at `height` if sealed already, else its close record; throws if not closed. */
export async function closedBlock(
  { kv, keys }: KvLedger,
  height: number,
): Promise<{ sealed: wire.BlockRecord } | ClosedBlock> {
  const [seal, head, existing] = await readRetrying(() =>
    kv.getMany<[SealRecord, HeadRecord, wire.BlockRecord]>([
      keys.seal(height),
      keys.head(),
      keys.block(height),
    ])
  );
  if (existing.value) return { sealed: existing.value };
  if (!seal.value) throw new Error(`Block ${height} is not closed`);
  if (!head.value || head.value.height !== height - 1) {
    throw new Error(`Block ${height} cannot follow head ${head.value?.height}`);
  }
  return {
    closedAt: seal.value.closedAt,
    prev: head.value,
    prevVersionstamp: head.versionstamp,
  };
}

/** `leafOf` of every vote of block `height`, in leaf (vote id) order, with the vote ids. */
export async function mapBlockVotes<T>(
  { kv, keys }: KvLedger,
  height: number,
  leafOf: (vote: wire.VoteRecord) => T,
) {
  const voteIds: string[] = [];
  const leaves: T[] = [];
  // The whole listing is retried, so a lock mid-way does not leave a partial list.
  await listEntries<wire.VoteRecord>(kv, {
    selector: { prefix: keys.votesOf(height) },
    options: { batchSize: LIST_BATCH_MAX },
    restart: () => voteIds.length = leaves.length = 0,
    each: (entry) => {
      voteIds.push(lastPart<string>(entry.key));
      leaves.push(leafOf(entry.value));
    },
  });
  return { voteIds, leaves };
}

/**
 * Each proof's commit group: its {@link VoteIndex}, with the {@link LeafRecord} of its leaf when
 * the leaf index is a multiple of {@link LEAF_STRIDE}, so that the two are written together.
 */
function* proofGroups(
  { keys, height }: { keys: LedgerKeys; height: number },
  proofs: Iterable<ProofToStore>,
) {
  for (const { voteId, proof } of proofs) {
    const indexKey = keys.voteIndex(voteId);
    const entries: [Deno.KvKey, unknown][] = [[indexKey, proof]];
    let bytes = entryBytes(indexKey, voteIndexBytes(proof));
    if (proof.index % LEAF_STRIDE === 0) {
      const leafKey = keys.leaf(height, proof.index);
      const leaf: LeafRecord = { voteId };
      entries.push([leafKey, leaf]);
      bytes += entryBytes(leafKey, leafRecordBytes(leaf));
    }
    yield { entries, bytes };
  }
}

/**
 * Stores every proof of block `height`, and its leaf index every {@link LEAF_STRIDE} leaves, in
 * commits within the KV limits.
 */
export function writeProofs(
  { kv, keys }: KvLedger,
  height: number,
  proofs: Iterable<ProofToStore>,
  options: BatchOptions = {},
): Promise<void> {
  return commitInBatches(kv, proofGroups({ keys, height }, proofs), options);
}

/**
 * At most the serialized bytes of a small record: 2 per UTF-16 unit of its JSON (V8 stores a
 * string with any unit beyond Latin-1 as two bytes a unit, a number in at most 9), and 64 for the
 * header and the framing.
 */
function recordBytes(record: unknown): number {
  return 2 * JSON.stringify(record).length + 64;
}

/**
 * Stores every proof of block `height`, its leaf index every {@link LEAF_STRIDE} leaves, and the
 * block: the proofs in commits within the KV limits, the last of them with the block and the head
 * ({@link appendBlock}, whose checks it carries), so a block is never stored before its proofs.
 * Answers the stored block (this one, or an identical one a concurrent sealer wrote).
 */
export async function writeProofsAndBlock(
  ledger: KvLedger,
  { proofs, block, closed, options = {} }: {
    proofs: Iterable<ProofToStore>;
    block: wire.BlockRecord;
    closed?: ClosedBlock;
    options?: BatchOptions;
  },
): Promise<wire.BlockRecord> {
  const { keys } = ledger;
  const height = block.height;
  const head: HeadRecord = { height, hash: block.hash, timestamp: block.timestamp };
  // The block and the head come last, as one group: the batch that takes them has room for them.
  const blockGroup = {
    entries: [[keys.block(height), block], [keys.head(), head]] as [Deno.KvKey, unknown][],
    bytes: entryBytes(keys.block(height), recordBytes(block)) +
      entryBytes(keys.head(), recordBytes(head)),
  };
  let stored: wire.BlockRecord | null = null;
  await commitInBatches(
    ledger.kv,
    (function* () {
      yield* proofGroups({ keys, height }, proofs);
      yield blockGroup;
    })(),
    {
      ...options,
      lastCommit: async (entries) => {
        stored = await appendBlock(ledger, block, closed, entries.slice(0, -2));
      },
    },
  );
  return stored!;
}

/**
 * Writes `block` and moves the head to it in one checked commit, with the idempotent sets of
 * `alsoSet` (the last proofs); answers the stored block. Given the `closed` record finalize read
 * or its close wrote, the first commit checks the head as read there rather than read it again (a
 * head moved since fails the check, and the block is then read back).
 */
export async function appendBlock(
  { kv, keys }: KvLedger,
  block: wire.BlockRecord,
  closed?: ClosedBlock,
  alsoSet: [Deno.KvKey, unknown][] = [],
): Promise<wire.BlockRecord> {
  const height = block.height;
  for (let attempt = 0;; attempt++) {
    const head: Deno.KvEntryMaybe<HeadRecord> = attempt === 0 && closed
      ? { key: keys.head(), value: closed.prev, versionstamp: closed.prevVersionstamp }
      : await readRetrying(() => kv.get<HeadRecord>(keys.head()));
    const follows = head.value?.height === height - 1 && head.value.hash === block.prev_hash;
    const op = kv.atomic()
      .check(absent(keys.block(height)))
      .check(head)
      .set(keys.block(height), block)
      .set(
        keys.head(),
        { height, hash: block.hash, timestamp: block.timestamp } satisfies HeadRecord,
      );
    for (const [key, value] of alsoSet) op.set(key, value);
    const res = follows ? await tryCommit(op) : { ok: false as const };
    if (res?.ok) return block;
    const stored = await readRetrying(() => kv.get<wire.BlockRecord>(keys.block(height)));
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
