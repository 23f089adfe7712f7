/**
 * Browser-safe. The audit's cross checks over the ledger its reading phases gathered: leaf order and
 * Merkle roots, block sizes, and the tally recounted. Each vote's own rules were judged as it was
 * read (./reads.ts, by lib/protocol/check_vote.ts).
 * @module
 */
import { bytesToHex, hexToBytes } from "../../protocol/bytes.ts";
import { merkleRoot } from "../../protocol/merkle.ts";
import type { TallyEntry } from "../../protocol/schemas.ts";
import { compareTallyRows, rankTally } from "../../protocol/tally.ts";
import {
  type AuditedVote,
  type AuditSource,
  type Ledger,
  type PhaseContext,
  unreadBlocks,
} from "./reads.ts";

/** Runs of the whole audit when the chain keeps growing under it. */
export const MAX_AUDIT_RUNS = 3;

/** The chain grew between the start of a run and its tally: the run is started again. */
export class ChainGrew extends Error {}

/**
 * Merkle phase: leaf order (leaf indexes in sequence, vote ids strictly ascending within a block
 * and never reused, protocol §3), and each block's root recomputed from the leaves of its votes.
 */
export function checkMerkleRoots(ledger: Ledger, ctx: PhaseContext) {
  const leaves = new Map<number, Uint8Array[]>();
  // Remembered vote ids included: an id is listed once in the whole chain.
  const blockOf = ledger.voteIds;
  let previous: AuditedVote | undefined;
  for (const v of ledger.votes) {
    if (v.index !== v.position) ctx.failVote(v, { kind: "leaf-index", expected: v.position });
    // Vote ids are base64url (ASCII), so string order is the store's key order.
    if (previous?.height === v.height && !(previous.voteId < v.voteId)) {
      ctx.failVote(v, { kind: "vote-order", previous: previous.voteId });
    }
    const earlier = blockOf.get(v.voteId);
    if (earlier !== undefined) ctx.failVote(v, { kind: "vote-id-repeated", height: earlier });
    else blockOf.set(v.voteId, v.height);
    previous = v;
    const list = leaves.get(v.height) ?? [];
    list.push(v.leaf !== null ? hexToBytes(v.leaf, 32) : new Uint8Array(32));
    leaves.set(v.height, list);
  }
  const sealed = unreadBlocks(ledger);
  sealed.forEach((block, i) => {
    const mine = leaves.get(block.height) ?? [];
    if (bytesToHex(merkleRoot(mine)) !== block.merkle_root) {
      ctx.fail({ kind: "merkle-root", height: block.height, votes: mine.length });
    }
    ctx.progress(i + 1, sealed.length);
  });
}

/**
 * Sizes phase: each block holds as many votes as were read of it — counted, not taken from the
 * listing's `total` — and its listing's `total` is its size (one failure per block).
 */
export function checkSizes(ledger: Ledger, ctx: PhaseContext) {
  const sealed = unreadBlocks(ledger);
  sealed.forEach(({ height, size }, i) => {
    const { read, wrongTotal } = ledger.listings.get(height) ?? { read: 0, wrongTotal: null };
    if (read !== size) ctx.fail({ kind: "block-size", height, size, read });
    if (wrongTotal !== null) ctx.fail({ kind: "listing-total", height, size, total: wrongTotal });
    ctx.progress(i + 1, sealed.length);
  });
}

/** Tally phase: recount from every vote and compare with the served tally, row by row. */
export async function checkTally(
  api: AuditSource,
  { ledger, height, lastRun, ctx }: {
    ledger: Ledger;
    height: number;
    lastRun: boolean;
    ctx: PhaseContext;
  },
): Promise<TallyEntry[]> {
  ctx.progress(0, 1);
  // The remembered counts, and every vote read since.
  const counts = new Map(ledger.remembered?.tally);
  for (const { payload } of ledger.votes) counts.set(payload, (counts.get(payload) ?? 0) + 1);
  const mine = rankTally(counts);
  const votes = ledger.votes.length + (ledger.remembered?.votes ?? 0);
  const served = await api.tally();
  // Heights only grow: the same height after the tally means it counts exactly the blocks read.
  const now = (await api.blockStatus()).height;
  if (now !== height) {
    if (!lastRun) throw new ChainGrew();
    ctx.fail({ kind: "tally-not-comparable", from: height, to: now, runs: MAX_AUDIT_RUNS });
    return mine;
  }
  if (served.total !== votes) ctx.fail({ kind: "tally-total", total: served.total, votes });
  const counted = new Map(mine.map((t) => [t.payload, t.count]));
  const theirs = new Map<string, number>();
  let sum = 0;
  for (const t of served.results) {
    // A Map keeps the last of two rows; a repeated row must not hide a padded one.
    if (theirs.has(t.payload)) ctx.fail({ kind: "tally-row-repeated", payload: t.payload });
    else theirs.set(t.payload, t.count);
    sum += t.count;
  }
  if (sum !== served.total) ctx.fail({ kind: "tally-sum", sum, total: served.total });
  for (const [payload, count] of counted) {
    if (theirs.get(payload) !== count) {
      ctx.fail({ kind: "tally-count", payload, count, served: theirs.get(payload) ?? 0 });
    }
  }
  for (const payload of theirs.keys()) {
    if (!counted.has(payload)) ctx.fail({ kind: "tally-extra", payload });
  }
  // The order of §4.4, ties included, so the served tally has one form (and a record one byte form).
  const rows = served.results;
  if (rows.some((t, i) => i > 0 && t.count > rows[i - 1].count)) ctx.fail({ kind: "tally-order" });
  const tie = rows.findIndex((t, i) =>
    i > 0 && t.count === rows[i - 1].count && compareTallyRows(rows[i - 1], t) > 0
  );
  if (tie > 0) {
    const [first, second] = [rows[tie - 1].payload, rows[tie].payload];
    ctx.fail({ kind: "tally-tie-order", first, second, count: rows[tie].count });
  }
  ctx.progress(1, 1);
  return mine;
}
