/**
 * The bulletin-board reads of a ledger (protocol §4.4): the chain's pointers and blocks, a vote's
 * stored proof, a block's votes in leaf order, tag lookups, and the tally, kept per process and
 * extended block by block.
 * @module
 */
import { rankTally } from "../../lib/protocol/tally.ts";
import type * as wire from "../../lib/protocol/schemas.ts";
import { quote, refusal } from "../errors.ts";
import { kvSilentForMs, LIST_BATCH_MAX, listEntries, readRetrying } from "./kv_calls.ts";
import {
  type HeadRecord,
  type KvLedger,
  lastPart,
  LEAF_STRIDE,
  type LeafRecord,
  type OpenRecord,
  pathHex,
  type StoredVoteIndex,
  type TagUse,
  type VoteRef,
} from "./layout.ts";

/**
 * The guard and the head, read together, with the entries of `also` in the same `getMany`; throws
 * if the ledger has no genesis block.
 */
export async function readPointers({ kv, keys }: KvLedger, also: Deno.KvKey[] = []) {
  const [open, head, ...rest] = await readRetrying(() =>
    kv.getMany<[OpenRecord, HeadRecord, ...unknown[]]>([keys.open(), keys.head(), ...also])
  );
  if (!open.value || !head.value) throw new Error("The ledger has no genesis block");
  return { open, head, also: rest as Deno.KvEntryMaybe<unknown>[] };
}

/**
 * The head block and the open block: one `getMany` of the guard and the head, which carries its
 * block's timestamp (protocol §5.2); a head written before it did costs one more read.
 */
export async function blockStatus(ledger: KvLedger): Promise<wire.BlockStatus> {
  const { open, head } = await readPointers(ledger);
  const timestamp = head.value.timestamp ?? await headTimestamp(ledger, head.value.height);
  return {
    height: head.value.height,
    hash: head.value.hash,
    timestamp,
    openBlock: open.value.height,
  };
}

/**
 * A status as `GET /api/block/status` answers it. When the database has not answered within
 * {@link STATUS_WAIT_MS}, it is the last status this process read, marked `stale: true` with
 * `knownAt`, when that read answered (ms since the epoch): protocol §5.5.
 */
export type StatusAnswer = wire.BlockStatus & { stale?: true; knownAt?: number };

/** How long a status waits for the database before answering what the process last read, ms. */
export const STATUS_WAIT_MS = 1_000;

/**
 * The status of `ledger`, read afresh each call, or, when the database keeps silent for
 * {@link STATUS_WAIT_MS}, the last one read, marked stale. While the database is silent, calls
 * join the read in flight rather than queue one each behind it. Before any read has answered there
 * is nothing to fall back on: the call waits (the API's deadline bounds it).
 */
export function createStatusReader(ledger: KvLedger): () => Promise<StatusAnswer> {
  let known: { status: wire.BlockStatus; startedAt: number; knownAt: number } | null = null;
  let reading: Promise<wire.BlockStatus> | null = null;
  const read = () => {
    const startedAt = Date.now();
    const run = blockStatus(ledger).then((status) => {
      // A slow read that started before the one remembered must not replace it.
      if (known === null || known.startedAt <= startedAt) {
        known = { status, startedAt, knownAt: Date.now() };
      }
      return status;
    });
    reading = run;
    run.then(() => {}, () => {}).finally(() => {
      if (reading === run) reading = null;
    });
    return run;
  };
  return async () => {
    const fresh = reading !== null && kvSilentForMs() >= STATUS_WAIT_MS ? reading : read();
    if (known === null) return await fresh;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>((resolve) =>
      timer = setTimeout(() => resolve(null), STATUS_WAIT_MS)
    );
    try {
      const answer = await Promise.race([fresh, late]);
      if (answer !== null) return answer;
    } finally {
      clearTimeout(timer);
    }
    const { status, knownAt }: { status: wire.BlockStatus; knownAt: number } = known;
    return { ...status, stale: true, knownAt };
  };
}

async function headTimestamp(ledger: KvLedger, height: number): Promise<number> {
  const block = await readRetrying(() =>
    ledger.kv.get<wire.BlockRecord>(ledger.keys.block(height))
  );
  if (!block.value) throw new Error(`Head block ${height} is missing`);
  return block.value.timestamp;
}

/** Most votes of the open block that {@link openBlockVotes} counts (protocol §4.9). */
export const OPEN_VOTES_COUNTED = 1000;

/** The open block's height and how many votes wait in it, counted up to {@link OPEN_VOTES_COUNTED}. */
export async function openBlockVotes(
  { kv, keys }: KvLedger,
): Promise<{ height: number; votes: number }> {
  const open = await readRetrying(() => kv.get<OpenRecord>(keys.open()));
  if (!open.value) throw new Error("The ledger has no genesis block");
  const height = open.value.height;
  let votes = 0;
  await listEntries(kv, {
    selector: { prefix: keys.votesOf(height) },
    options: { limit: OPEN_VOTES_COUNTED, batchSize: OPEN_VOTES_COUNTED },
    restart: () => votes = 0,
    each: () => votes++,
  });
  return { height, votes };
}

async function headHeight({ kv, keys }: KvLedger): Promise<number> {
  const head = await readRetrying(() => kv.get<HeadRecord>(keys.head()));
  if (!head.value) throw new Error("The ledger has no genesis block");
  return head.value.height;
}

/** Up to `limit` sealed blocks from height `from`, and the head height. */
export async function blockRange(
  ledger: KvLedger,
  from: number,
  limit: number,
): Promise<wire.BlockList> {
  const { kv, keys } = ledger;
  const height = await headHeight(ledger);
  const blocks: wire.BlockRecord[] = [];
  if (limit > 0) {
    await listEntries<wire.BlockRecord>(kv, {
      selector: { start: keys.block(from), end: keys.block(from + limit) },
      options: { limit, batchSize: limit },
      restart: () => blocks.length = 0,
      each: (entry) => blocks.push(entry.value),
    });
  }
  return { blocks, height };
}

/**
 * A vote's proof from stored data: one `getMany` of four point reads. The path is answered in hex
 * whether it was stored as bytes or, by blocks sealed before, as hex.
 */
export async function voteProof(
  { kv, keys }: KvLedger,
  height: number,
  voteId: string,
): Promise<wire.VoteProof> {
  const [ref, block, index, vote] = await readRetrying(() =>
    kv.getMany<[VoteRef, wire.BlockRecord, StoredVoteIndex, wire.VoteRecord]>([
      keys.voteRef(voteId),
      keys.block(height),
      keys.voteIndex(voteId),
      keys.vote(height, voteId),
    ])
  );
  if (!ref.value || ref.value.height !== height || !vote.value) {
    throw refusal("unknown_vote", `No vote "${quote(voteId)}" in block ${height}`);
  }
  if (!block.value || !index.value) {
    throw refusal("block_not_sealed", `Block ${height} is not sealed yet`);
  }
  return {
    vote: vote.value,
    index: index.value.index,
    path: pathHex(index.value.path),
    block: block.value,
  };
}

/**
 * Up to `limit` votes of sealed block `height` from leaf `offset`; 404 `unknown_block`. Two round
 * trips: the block with the stored leaf at `offset` or, when there is none, the one before it
 * (one is stored every {@link LEAF_STRIDE} leaves), then the block's votes listed from that leaf's
 * vote on, the ones before `offset` skipped. A block's votes in key order are its leaves in order
 * (finalize numbered them so, and no vote enters a closed block), so the k-th vote listed from
 * leaf `i` is leaf `i + k`. Blocks sealed before the leaf index was sparse store every leaf: their
 * pages list from `offset` itself.
 */
export async function blockVotes(
  { kv, keys }: KvLedger,
  height: number,
  offset: number,
  limit: number,
): Promise<wire.BlockVotes> {
  // The leaf at `offset`, and the stored one before it when `offset` is between two.
  const before = offset - offset % LEAF_STRIDE;
  const starts = before === offset ? [offset] : [offset, before];
  const [block, ...leaves] = await readRetrying(() =>
    kv.getMany<[wire.BlockRecord, ...LeafRecord[]]>([
      keys.block(height),
      ...starts.map((index) => keys.leaf(height, index)),
    ])
  );
  if (!block.value) throw refusal("unknown_block", `No sealed block at height ${height}`);
  const votes: wire.BlockVotes["votes"] = [];
  const count = Math.min(limit, block.value.size - offset);
  if (count > 0) {
    const found = leaves.findIndex((leaf) => leaf.value !== null);
    if (found < 0) throw new Error(`No leaf of block ${height} is stored at or before ${offset}`);
    const start = { voteId: leaves[found].value!.voteId, skip: offset - starts[found] };
    const listed = start.skip + count;
    let skipped = 0;
    await listEntries<wire.VoteRecord>(kv, {
      selector: { prefix: keys.votesOf(height), start: keys.vote(height, start.voteId) },
      options: { limit: listed, batchSize: Math.min(listed, LIST_BATCH_MAX) },
      restart: () => votes.length = skipped = 0,
      each: (entry) => {
        if (skipped < start.skip) {
          skipped++;
          return;
        }
        votes.push({
          voteId: lastPart<string>(entry.key),
          index: offset + votes.length,
          vote: entry.value,
        });
      },
    });
    if (votes.length !== count) {
      throw new Error(
        `Block ${height} lists ${votes.length} votes from leaf ${offset}, not ${count}`,
      );
    }
  }
  return { votes, total: block.value.size };
}

/** Which vote used `tag`; 404 `unknown_tag`. */
export async function tagUse({ kv, keys }: KvLedger, tag: string): Promise<wire.TagRecord> {
  const used = await readRetrying(() => kv.get<TagUse>(keys.tag(tag)));
  if (!used.value) throw refusal("unknown_tag", `No vote with tag "${quote(tag)}"`);
  return { voteId: used.value.voteId, blockId: used.value.height };
}

/**
 * Counts per payload over sealed blocks, kept per process and extended block by block: a
 * sealed block never changes, so only blocks sealed since the last call are read.
 */
export type TallyCache = {
  height: number;
  counts: Map<string, number>;
  total: number;
  pending: Promise<void> | null;
};

/** Counts per payload over sealed votes, count descending, extending `cache`. */
export async function tally(ledger: KvLedger, cache: TallyCache): Promise<wire.Tally> {
  const head = await headHeight(ledger);
  while (cache.height < head) {
    if (!cache.pending) {
      cache.pending = extendTally(ledger, cache, head).finally(() => {
        cache.pending = null;
      });
    }
    await cache.pending;
  }
  const results = rankTally(cache.counts);
  return { total: cache.total, results };
}

/**
 * Adds the votes of blocks `cache.height + 1` to `head` to `cache`. The votes of consecutive blocks
 * are consecutive keys, so they are listed as one range, a thousand a round trip, whatever the
 * number of blocks; they are counted aside and merged at the end, so a failed read leaves the
 * cache as it was.
 */
async function extendTally(
  { kv, keys }: KvLedger,
  cache: TallyCache,
  head: number,
): Promise<void> {
  const counts = new Map<string, number>();
  let total = 0;
  await listEntries<wire.VoteRecord>(kv, {
    selector: { start: keys.votesOf(cache.height + 1), end: keys.votesOf(head + 1) },
    options: { batchSize: LIST_BATCH_MAX },
    restart: () => {
      counts.clear();
      total = 0;
    },
    each: ({ value: { payload } }) => {
      counts.set(payload, (counts.get(payload) ?? 0) + 1);
      total++;
    },
  });
  for (const [payload, n] of counts) {
    cache.counts.set(payload, (cache.counts.get(payload) ?? 0) + n);
  }
  cache.total += total;
  cache.height = head;
}
