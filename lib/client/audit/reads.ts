/**
 * Browser-safe. The audit's reading phases (protocol §4): the key directory, every block with its
 * hash, link and head signature, and every vote listing, page by page, checked as it arrives —
 * gathered into the ledger the cross checks compare.
 * @module
 */
import { checkLink, isGenesis, verifyBlockHash } from "../../protocol/chain.ts";
import { verifyHead } from "../../protocol/head.ts";
import {
  type BlockRecord,
  type BlockStatus,
  MAX_PAGE_LIMIT,
  type VoteRecord,
} from "../../protocol/schemas.ts";
import { type ApiClient, pagesOf } from "../api_client.ts";
import type { VoteChecker, VoteFinding } from "./vote_checks.ts";

/**
 * The calls the audit makes, and all it needs of a source: the API client of a live server, or an
 * election record read from a file (lib/client/audit/election_record_source.ts, protocol §4.8).
 */
export type AuditSource = Pick<
  ApiClient,
  "serverKey" | "checkpoint" | "blockStatus" | "keys" | "blocks" | "blockVotes" | "tally"
>;

/** One vote as the audit read it, with what it showed on its own. */
export type AuditedVote = {
  height: number;
  /** Leaf index as served. */
  index: number;
  /** Position in the block's listing: the leaf index it must have. */
  position: number;
  voteId: string;
  /** What the cross checks read of the vote: its signature, checked already, is not kept. */
  vote: Pick<VoteRecord, "payload" | "publicKeys">;
  finding: VoteFinding;
};

/** What the audit read of one block's votes listing. */
export type Listing = {
  /** Votes read, counted page by page. */
  read: number;
  /** The first `total` the listing served that differs from the block's size; null if none. */
  wrongTotal: number | null;
};

/** Everything the reading phases gathered, for the phases that compare. */
export type Ledger = {
  registered: Set<string>;
  blocks: BlockRecord[];
  votes: AuditedVote[];
  /** Per height: what was read of the block's votes listing. */
  listings: Map<number, Listing>;
};

/** What a phase may do: report progress and record failures. */
export type PhaseContext = {
  progress: (done: number, total: number) => void;
  fail: (line: string) => void;
  failVote: (vote: AuditedVote, reason: string) => void;
};

/** The fields of a served block record that its head signature covers. */
export type SignedHeadFields = { height: number; hash: string; head_signature?: string };

/** True when `head` carries a valid signature by `key`; false for one malformed too. */
export function signedBy(key: string, head: SignedHeadFields): boolean {
  const { height, hash, head_signature } = head;
  if (head_signature === undefined) return false;
  try {
    return verifyHead(key, { height, hash, head_signature });
  } catch {
    return false;
  }
}

/** Keys phase: the key directory, ids contiguous from 1, keys distinct. */
export async function readKeys(api: AuditSource, ctx: PhaseContext): Promise<Set<string>> {
  const registered = new Set<string>();
  let listed = 0;
  let directorySize = 0;
  for await (const page of pagesOf(api.keys)) {
    for (const k of page.items) {
      if (k.id !== ++listed) ctx.fail(`key directory: expected id ${listed}, got ${k.id}`);
      if (registered.has(k.key)) ctx.fail(`key directory: key ${k.key} is listed twice`);
      registered.add(k.key);
    }
    directorySize = page.total;
    ctx.progress(listed, page.total);
  }
  if (listed !== directorySize) ctx.fail(`key directory: total ${directorySize}, listed ${listed}`);
  return registered;
}

/**
 * Blocks phase: every header in height order, genesis, each hash from its fields, each link, and
 * every head signature (the status's and each block's) against the server key; the status is the
 * head block's: its hash, timestamp and signature.
 */
export async function readBlocks(
  api: AuditSource,
  { status, serverKey, ctx }: { status: BlockStatus; serverKey: string; ctx: PhaseContext },
): Promise<BlockRecord[]> {
  /** Whether `head` is signed by the server key; a failure line for `where` when not. */
  const checkHead = (where: string, head: SignedHeadFields) => {
    if (head.head_signature === undefined) {
      ctx.fail(`${where}: no head signature`);
      return false;
    }
    if (!signedBy(serverKey, head)) {
      ctx.fail(`${where}: head signature is not the server key's (${serverKey})`);
      return false;
    }
    return true;
  };
  const statusSigned = checkHead("status", status);
  const blocks: BlockRecord[] = [];
  for await (const page of pagesOf(api.blocks, { count: status.height + 1 })) {
    blocks.push(...page.items);
    ctx.progress(blocks.length, status.height + 1);
  }
  if (blocks.length <= status.height) {
    ctx.fail(
      `blocks: the chain stops at height ${blocks.length - 1}, status says ${status.height}`,
    );
  }
  if (blocks.length === 0) return blocks;
  const genesis = blocks[0];
  if (!isGenesis(genesis)) {
    ctx.fail("block 0: not a genesis block (height 0, size 0, empty root, zero prev_hash)");
  }
  if (!verifyBlockHash(genesis)) ctx.fail("block 0: hash does not match its fields");
  blocks.forEach((b, i) => {
    if (b.height !== i) ctx.fail(`block ${i}: served with height ${b.height}`);
    checkHead(`block ${i}`, b);
    if (i === 0) return;
    if (b.size === 0) ctx.fail(`block ${i}: sealed with no votes`);
    if (!verifyBlockHash(b)) ctx.fail(`block ${i}: hash does not match its fields`);
    else if (!checkLink(b, blocks[i - 1])) {
      ctx.fail(`block ${i}: prev_hash does not link to block ${i - 1}`);
    }
  });
  const head = blocks[blocks.length - 1];
  if (head.hash !== status.hash) ctx.fail(`status: head hash differs from block ${head.height}`);
  else if (head.timestamp !== status.timestamp) {
    ctx.fail(`status: head timestamp ${status.timestamp} differs from block ${head.height}'s`);
  } else if (statusSigned && head.head_signature !== status.head_signature) {
    ctx.fail(`status: head signature differs from block ${head.height}'s`);
  }
  return blocks;
}

/** One page of a block's votes listing: where it starts and how many votes it must hold. */
export type PageRequest = { height: number; size: number; offset: number; due: number };

/**
 * The pages of every sealed block's listing, in chain order: from offset 0 in steps of the page
 * limit, bounded by the block's size (never by the listing's `total`, which the server also
 * controls) and ending at the first short page, whose block is in `ended` by then. Lazy, so a
 * block claiming a huge size costs the pages it really serves.
 */
export function* pageRequests(blocks: BlockRecord[], ended: Set<number>): Generator<PageRequest> {
  for (const { height, size } of blocks.slice(1)) {
    for (let offset = 0; offset === 0 || offset < size; offset += MAX_PAGE_LIMIT) {
      if (ended.has(height)) break;
      yield { height, size, offset, due: Math.min(MAX_PAGE_LIMIT, size - offset) };
    }
  }
}

/**
 * Signatures phase: every block's votes listing, page by page, each page checked by `checker`
 * as soon as it arrives; up to `parallel` pages are being read or checked at once, and their
 * results are taken in chain order, so the report does not depend on the parallelism. Every vote
 * read is counted; a page holding fewer votes than due ends its block's listing (pages already
 * asked for after it are dropped), and the sizes phase compares the count with the block's size.
 */
export async function readVotes(
  api: AuditSource,
  { ctx, registered, blocks, checker, parallel }: {
    ctx: PhaseContext;
    registered: Set<string>;
    blocks: BlockRecord[];
    checker: VoteChecker;
    parallel: number;
  },
): Promise<Ledger> {
  const ended = new Set<number>();
  const total = blocks.reduce((sum, b) => sum + b.size, 0);
  const ledger: Ledger = { registered, blocks, votes: [], listings: new Map() };
  const work = async ({ height, offset }: PageRequest) => {
    const page = await api.blockVotes(height)(offset, MAX_PAGE_LIMIT);
    const findings = await checker(page.items.map((v) => v.vote));
    return { page, findings };
  };
  ctx.progress(0, total);
  const requests = pageRequests(blocks, ended);
  await inOrder(
    requests,
    { parallel, work },
    ({ page, findings }, { height, size, offset, due }) => {
      if (ended.has(height)) return;
      const listing = ledger.listings.get(height) ?? { read: 0, wrongTotal: null };
      ledger.listings.set(height, listing);
      if (page.total !== size) listing.wrongTotal ??= page.total;
      listing.read += page.items.length;
      if (page.items.length < due) ended.add(height);
      page.items.forEach(({ voteId, index, vote }, k) => {
        const { payload, publicKeys } = vote;
        const audited = {
          height,
          index,
          position: offset + k,
          voteId,
          vote: { payload, publicKeys },
          finding: findings[k],
        };
        ledger.votes.push(audited);
        for (const problem of audited.finding.problems) ctx.failVote(audited, problem);
      });
      ctx.progress(ledger.votes.length, total);
    },
  );
  return ledger;
}

/**
 * Runs `work` over `items` with at most `parallel` in flight, handing each result to `take` in
 * the items' order. The next item is drawn only after the previous result was taken, so `take`
 * may end a lazy `items` early. The first failure rejects; results after it are dropped.
 */
async function inOrder<T, R>(
  items: Iterator<T>,
  { parallel, work }: { parallel: number; work: (item: T) => Promise<R> },
  take: (result: R, item: T) => void,
): Promise<void> {
  const running: { item: T; result: Promise<R> }[] = [];
  const fill = () => {
    while (running.length < Math.max(1, parallel)) {
      const next = items.next();
      if (next.done) return;
      const result = work(next.value);
      result.catch(() => {}); // awaited in order below; a rejection before then is not unhandled
      running.push({ item: next.value, result });
    }
  };
  fill();
  for (let first = running.shift(); first !== undefined; first = running.shift()) {
    take(await first.result, first.item);
    fill();
  }
}
