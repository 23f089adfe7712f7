/**
 * The bulletin-board reads of a ledger (protocol §4.4): the chain's pointers and blocks, a vote's
 * stored proof, a block's votes in leaf order, tag lookups, and the tally, kept per process and
 * extended block by block.
 * @module
 */
import { rankTally } from "../../lib/protocol/tally.ts";
import type * as wire from "../../lib/protocol/schemas.ts";
import { quote, refusal } from "../errors.ts";
import {
  getManyChunked,
  type HeadRecord,
  type KvLedger,
  lastPart,
  type LeafRecord,
  type OpenRecord,
  readRetrying,
  type TagUse,
  type VoteIndex,
  type VoteRef,
} from "./layout.ts";

/** The guard and the head, read together; throws if the ledger has no genesis block. */
export async function readPointers({ kv, keys }: KvLedger) {
  const [open, head] = await readRetrying(() =>
    kv.getMany<[OpenRecord, HeadRecord]>([keys.open(), keys.head()])
  );
  if (!open.value || !head.value) throw new Error("The ledger has no genesis block");
  return { open, head };
}

/** The head block and the open block. */
export async function blockStatus(ledger: KvLedger): Promise<wire.BlockStatus> {
  const { open, head } = await readPointers(ledger);
  const block = await readRetrying(() =>
    ledger.kv.get<wire.BlockRecord>(ledger.keys.block(head.value.height))
  );
  if (!block.value) throw new Error(`Head block ${head.value.height} is missing`);
  return {
    height: head.value.height,
    hash: head.value.hash,
    timestamp: block.value.timestamp,
    openBlock: open.value.height,
  };
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
  const votes = await readRetrying(async () => {
    let n = 0;
    const listing = kv.list({ prefix: keys.votesOf(height) }, {
      limit: OPEN_VOTES_COUNTED,
      batchSize: OPEN_VOTES_COUNTED,
    });
    for await (const _ of listing) n++;
    return n;
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
    const entries = kv.list<wire.BlockRecord>({
      start: keys.block(from),
      end: keys.block(from + limit),
    });
    for await (const entry of entries) blocks.push(entry.value);
  }
  return { blocks, height };
}

/** A vote's proof from stored data: one `getMany` of four point reads. */
export async function voteProof(
  { kv, keys }: KvLedger,
  height: number,
  voteId: string,
): Promise<wire.VoteProof> {
  const [ref, block, index, vote] = await readRetrying(() =>
    kv.getMany<[VoteRef, wire.BlockRecord, VoteIndex, wire.VoteRecord]>([
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
  return { vote: vote.value, index: index.value.index, path: index.value.path, block: block.value };
}

/** Up to `limit` votes of sealed block `height` from leaf `offset`; 404 `unknown_block`. */
export async function blockVotes(
  { kv, keys }: KvLedger,
  height: number,
  offset: number,
  limit: number,
): Promise<wire.BlockVotes> {
  const block = await readRetrying(() => kv.get<wire.BlockRecord>(keys.block(height)));
  if (!block.value) throw refusal("unknown_block", `No sealed block at height ${height}`);
  const leaves: { voteId: string; index: number }[] = [];
  if (limit > 0) {
    const entries = kv.list<LeafRecord>({
      start: keys.leaf(height, offset),
      end: keys.leaf(height, offset + limit),
    });
    for await (const entry of entries) {
      leaves.push({ voteId: entry.value.voteId, index: lastPart<number>(entry.key) });
    }
  }
  const found = await getManyChunked<wire.VoteRecord>(
    kv,
    leaves.map((leaf) => keys.vote(height, leaf.voteId)),
  );
  const votes = leaves.map((leaf, i) => {
    const vote = found[i].value;
    if (!vote) throw new Error(`Vote ${leaf.voteId} of block ${height} is missing`);
    return { ...leaf, vote };
  });
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

async function extendTally(
  { kv, keys }: KvLedger,
  cache: TallyCache,
  head: number,
): Promise<void> {
  for (let height = cache.height + 1; height <= head; height++) {
    // Read the whole block before merging, so a failed read leaves the cache as it was.
    const payloads: string[] = [];
    for await (const entry of kv.list<wire.VoteRecord>({ prefix: keys.votesOf(height) })) {
      payloads.push(entry.value.payload);
    }
    for (const payload of payloads) {
      cache.counts.set(payload, (cache.counts.get(payload) ?? 0) + 1);
    }
    cache.total += payloads.length;
    cache.height = height;
  }
}
