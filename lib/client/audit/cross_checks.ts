/**
 * Browser-safe. The audit's cross checks over the ledger its reading phases gathered: leaf order and
 * Merkle roots, ring membership, unique tags, sizes and payloads, and the tally recounted.
 * @module
 */
import { bytesToHex, hexToBytes } from "../../protocol/bytes.ts";
import { merkleRoot } from "../../protocol/merkle.ts";
import {
  codePointLength,
  MAX_PAYLOAD_CODE_POINTS,
  type TallyEntry,
} from "../../protocol/schemas.ts";
import { compareTallyRows, tallyOf } from "../../protocol/tally.ts";
import type { AuditedVote, AuditSource, Ledger, PhaseContext } from "./reads.ts";

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
  const blockOf = new Map<string, number>();
  let previous: AuditedVote | undefined;
  for (const v of ledger.votes) {
    if (v.index !== v.position) ctx.failVote(v, `expected leaf index ${v.position}`);
    // Vote ids are base64url (ASCII), so string order is the store's key order.
    if (previous?.height === v.height && !(previous.voteId < v.voteId)) {
      ctx.failVote(v, `vote id not after the previous leaf's ${previous.voteId}: out of order`);
    }
    const earlier = blockOf.get(v.voteId);
    if (earlier !== undefined) ctx.failVote(v, `vote id already listed in block ${earlier}`);
    else blockOf.set(v.voteId, v.height);
    previous = v;
    const list = leaves.get(v.height) ?? [];
    list.push(v.finding.leaf ? hexToBytes(v.finding.leaf, 32) : new Uint8Array(32));
    leaves.set(v.height, list);
  }
  const sealed = ledger.blocks.slice(1);
  sealed.forEach((block, i) => {
    const mine = leaves.get(block.height) ?? [];
    if (bytesToHex(merkleRoot(mine)) !== block.merkle_root) {
      ctx.fail(`block ${block.height}: Merkle root does not match its ${mine.length} votes`);
    }
    ctx.progress(i + 1, sealed.length);
  });
}

/** Votes between two progress reports of a phase that walks every vote. */
const PROGRESS_EVERY = 256;

/** Runs `check` on every vote in chain order, reporting progress now and then. */
function eachVote(ledger: Ledger, ctx: PhaseContext, check: (v: AuditedVote) => void) {
  const total = ledger.votes.length;
  ledger.votes.forEach((v, i) => {
    check(v);
    if ((i + 1) % PROGRESS_EVERY === 0 || i + 1 === total) ctx.progress(i + 1, total);
  });
}

/** Membership phase: every ring member of every vote is in the key directory. */
export function checkMembership(ledger: Ledger, ctx: PhaseContext) {
  eachVote(ledger, ctx, (v) => {
    for (const key of v.vote.publicKeys) {
      if (!ledger.registered.has(key)) ctx.failVote(v, `ring member ${key} is not registered`);
    }
  });
}

/** Tags phase: no tag appears twice in the chain (one key, one vote). */
export function checkTags(ledger: Ledger, ctx: PhaseContext) {
  const seen = new Map<string, number>();
  eachVote(ledger, ctx, (v) => {
    const tag = v.finding.tag;
    if (tag === null) return;
    const earlier = seen.get(tag);
    if (earlier !== undefined) ctx.failVote(v, `tag ${tag} already voted in block ${earlier}`);
    else seen.set(tag, v.height);
  });
}

/**
 * Sizes phase: each block holds as many votes as were read of it — counted, not taken from the
 * listing's `total` — and its listing's `total` is its size (one line per block); payloads within
 * the limit.
 */
export function checkSizes(ledger: Ledger, ctx: PhaseContext) {
  for (const { height, size } of ledger.blocks.slice(1)) {
    const { read, wrongTotal } = ledger.listings.get(height) ?? { read: 0, wrongTotal: null };
    if (read !== size) ctx.fail(`block ${height}: size ${size}, but ${read} votes read`);
    if (wrongTotal !== null) {
      ctx.fail(`block ${height}: size ${size}, but its votes listing says total ${wrongTotal}`);
    }
  }
  eachVote(ledger, ctx, (v) => {
    if (codePointLength(v.vote.payload) > MAX_PAYLOAD_CODE_POINTS) {
      ctx.failVote(v, `payload longer than ${MAX_PAYLOAD_CODE_POINTS} characters`);
    }
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
  const mine = tallyOf(ledger.votes.map((v) => v.vote.payload));
  const served = await api.tally();
  // Heights only grow: the same height after the tally means it counts exactly the blocks read.
  const now = (await api.blockStatus()).height;
  if (now !== height) {
    if (!lastRun) throw new ChainGrew();
    ctx.fail(
      `tally: the chain grew from height ${height} to ${now} during each of ${MAX_AUDIT_RUNS} ` +
        "runs of the audit, so the served tally could not be compared",
    );
    return mine;
  }
  if (served.total !== ledger.votes.length) {
    ctx.fail(`tally: total ${served.total}, but the chain holds ${ledger.votes.length} votes`);
  }
  const counted = new Map(mine.map((t) => [t.payload, t.count]));
  const theirs = new Map<string, number>();
  let sum = 0;
  for (const t of served.results) {
    // A Map keeps the last of two rows; a repeated row must not hide a padded one.
    if (theirs.has(t.payload)) ctx.fail(`tally: "${t.payload}" is served in more than one row`);
    else theirs.set(t.payload, t.count);
    sum += t.count;
  }
  if (sum !== served.total) {
    ctx.fail(`tally: the served counts add up to ${sum}, but the served total is ${served.total}`);
  }
  for (const [payload, count] of counted) {
    if (theirs.get(payload) !== count) {
      ctx.fail(`tally: "${payload}" has ${count} votes, served ${theirs.get(payload) ?? 0}`);
    }
  }
  for (const payload of theirs.keys()) {
    if (!counted.has(payload)) ctx.fail(`tally: "${payload}" is served but no vote carries it`);
  }
  // The order of §4.4, ties included, so the served tally has one form (and a record one byte form).
  const rows = served.results;
  if (rows.some((t, i) => i > 0 && t.count > rows[i - 1].count)) {
    ctx.fail("tally: not in count-descending order");
  }
  const tie = rows.findIndex((t, i) =>
    i > 0 && t.count === rows[i - 1].count && compareTallyRows(rows[i - 1], t) > 0
  );
  if (tie > 0) {
    ctx.fail(
      `tally: "${rows[tie - 1].payload}" and "${rows[tie].payload}" have ${
        rows[tie].count
      } votes ` +
        "each but are not in payload order (UTF-16 code units, ascending)",
    );
  }
  ctx.progress(1, 1);
  return mine;
}
