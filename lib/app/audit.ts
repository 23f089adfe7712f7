// Browser-safe. The independent audit of the public record (protocol §3–§4): it downloads the key
// directory, every block and every vote through the read-only API and re-derives everything the
// server claims. It runs in phases, each a function of what the earlier ones read: keys, blocks
// (hashes and links), signatures (every vote's leaf and ring signature, in chunks that a pool of
// workers may check in parallel), Merkle roots, ring membership, tag uniqueness, sizes and the
// tally. The caller supplies the API client (its transport injected) and may supply the checker
// of vote chunks, so this module stays pure; `deno task audit` and the board's one-click
// audit run this same code and print the same report. The blocks phase also checks every head
// signature against the server key (protocol §4 "Signed heads"). The audit is anchored in what the
// auditor trusts, not in what the server says: a pinned server key and the heads it remembers
// (`trusted`), and it counts the votes it reads against each block's size.
import { bytesToHex, hexToBytes } from "../protocol/bytes.ts";
import { checkLink, isGenesis, verifyBlockHash } from "../protocol/chain.ts";
import { checkForkEvidence, verifyHead } from "../protocol/head.ts";
import { merkleRoot } from "../protocol/merkle.ts";
import {
  type BlockRecord,
  type BlockStatus,
  codePointLength,
  MAX_PAGE_LIMIT,
  MAX_PAYLOAD_CODE_POINTS,
  type SignedHead,
  type VoteRecord,
} from "../protocol/schemas.ts";
import { tallyOf } from "../protocol/tally.ts";
import { type ApiClient, pagesOf } from "./api_client.ts";
import type { VoteChecker, VoteFinding } from "./vote_checks.ts";

/** The audit's phases, in the order they run. */
export const AUDIT_PHASES = [
  "keys",
  "blocks",
  "signatures",
  "merkle",
  "membership",
  "tags",
  "sizes",
  "tally",
] as const;

/** One phase of the audit. */
export type AuditPhase = typeof AUDIT_PHASES[number];

/** What each phase does, in plain words, for a progress bar. */
export const PHASE_LABELS: Record<AuditPhase, string> = {
  keys: "Reading the key directory",
  blocks: "Checking every block's hash and its link to the block before",
  signatures: "Verifying every vote's ring signature",
  merkle: "Recomputing every block's Merkle root from its votes",
  membership: "Checking that every ring member is a registered key",
  tags: "Checking that no key voted twice (tags are unique)",
  sizes: "Checking block sizes and payload lengths",
  tally: "Recounting the tally from every vote",
};

/** Where the audit is: its phase and how far through that phase it has come. */
export type AuditProgress = { phase: AuditPhase; done: number; total: number };

/** A vote with at least one failed check: where it is and every reason, in phase order. */
export type VoteFailure = { voteId: string; height: number; index: number; reasons: string[] };

/** The outcome: counts of what was checked, the recomputed tally and every failure found. */
export type AuditReport = {
  ok: boolean;
  /** The server key the heads were checked against; null when it could not be read. */
  serverKey: string | null;
  /** True when that key was given by the auditor (`trusted.key`), not only served. */
  keyPinned: boolean;
  /** How many trusted heads were compared with the chain. */
  trustedHeads: number;
  height: number;
  keys: number;
  blocks: number;
  votes: number;
  tally: { payload: string; count: number }[];
  /** Every failure as one line, in the order found. */
  failures: string[];
  /** The failures that belong to one vote, grouped by vote, in chain order. */
  voteFailures: VoteFailure[];
};

/**
 * What the auditor trusts beside the server's word: the server key it pins (`deno task audit
 * --key`, or the key a page remembers) and signed heads it saw before (a page's memory, page.md
 * §12), which the audited chain must contain. The heads are under `key` when it is given.
 */
export type TrustedAnchor = { key?: string; heads?: readonly SignedHead[] };

/**
 * Options: a progress callback, how many failures to collect before stopping, the checker of
 * vote chunks (default: this thread, one member cache for the audit), how many chunks may be
 * read and checked at once (default 4; a pool of workers wants about twice its size) and what
 * the auditor trusts ({@link TrustedAnchor}).
 */
export type AuditOptions = {
  onProgress?: (p: AuditProgress) => void;
  maxFailures?: number;
  checker?: VoteChecker;
  parallel?: number;
  trusted?: TrustedAnchor;
};

/** One vote as the audit read it, with what it showed on its own. */
type AuditedVote = {
  height: number;
  /** Leaf index as served. */
  index: number;
  /** Position in the block's listing: the leaf index it must have. */
  position: number;
  voteId: string;
  vote: VoteRecord;
  finding: VoteFinding;
};

/** What the audit read of one block's votes listing. */
type Listing = {
  /** Votes read, counted page by page. */
  read: number;
  /** The first `total` the listing served that differs from the block's size; null if none. */
  wrongTotal: number | null;
};

/** Everything the reading phases gathered, for the phases that compare. */
type Ledger = {
  registered: Set<string>;
  blocks: BlockRecord[];
  votes: AuditedVote[];
  /** Per height: what was read of the block's votes listing. */
  listings: Map<number, Listing>;
};

/** What a phase may do: report progress and record failures. */
type PhaseContext = {
  progress: (done: number, total: number) => void;
  fail: (line: string) => void;
  failVote: (vote: AuditedVote, reason: string) => void;
};

class TooManyFailures extends Error {}

/** The server is not the one the auditor trusts: nothing else is checked. */
class Refused extends Error {}

/**
 * Audits the whole public record reachable through `api`. Never throws for an inconsistent
 * record: every inconsistency becomes a failure line; an unreachable or malformed answer is one
 * too, and ends the audit.
 */
export async function auditLedger(api: ApiClient, opts: AuditOptions = {}): Promise<AuditReport> {
  // A live server may seal a block while the audit reads: its served tally then counts votes this
  // run did not read, so the audit starts again from the new head, a few times at most.
  for (let run = 1;; run++) {
    const report = await auditOnce(api, { ...opts, lastRun: run >= MAX_AUDIT_RUNS });
    if (report !== null) return report;
  }
}

/** Runs of the whole audit when the chain keeps growing under it. */
const MAX_AUDIT_RUNS = 3;

/** The chain grew between the start of a run and its tally: the run is started again. */
class ChainGrew extends Error {}

/** One run of {@link auditLedger}; null when the chain grew under it and it is to be run again. */
async function auditOnce(
  api: ApiClient,
  opts: AuditOptions & { lastRun: boolean },
): Promise<AuditReport | null> {
  const failures: string[] = [];
  const byVote = new Map<string, VoteFailure>();
  const maxFailures = opts.maxFailures ?? 50;
  const trusted = opts.trusted ?? {};
  const report: AuditReport = {
    ok: false,
    serverKey: null,
    keyPinned: trusted.key !== undefined,
    trustedHeads: trusted.heads?.length ?? 0,
    height: 0,
    keys: 0,
    blocks: 0,
    votes: 0,
    tally: [],
    failures,
    voteFailures: [],
  };
  const fail = (line: string) => {
    failures.push(line);
    if (failures.length >= maxFailures) throw new TooManyFailures();
  };
  const context = (phase: AuditPhase): PhaseContext => ({
    progress: (done, total) => opts.onProgress?.({ phase, done, total }),
    fail,
    failVote(vote, reason) {
      const entry = byVote.get(vote.voteId) ??
        { voteId: vote.voteId, height: vote.height, index: vote.position, reasons: [] };
      byVote.set(vote.voteId, entry);
      entry.reasons.push(reason);
      fail(`block ${vote.height} vote ${vote.index} (${vote.voteId}): ${reason}`);
    },
  });

  try {
    // The key first: a server other than the one trusted is refused before anything is read.
    const { key: serverKey } = await api.serverKey();
    report.serverKey = serverKey;
    checkPinnedKey(serverKey, { trusted, fail });
    const status = await api.blockStatus();
    report.height = status.height;
    const registered = await readKeys(api, context("keys"));
    report.keys = registered.size;
    const blocks = await readBlocks(api, { status, serverKey, ctx: context("blocks") });
    report.blocks = blocks.length;
    if (blocks.length === 0) throw new Error("the server lists no block, not even genesis");
    checkTrustedHeads(blocks, {
      height: status.height,
      serverKey,
      heads: trusted.heads ?? [],
      ctx: context("blocks"),
    });
    const ledger = await readVotes(api, {
      ctx: context("signatures"),
      registered,
      blocks,
      // Loaded on demand: a page that checks in workers keeps the verifier out of its first load.
      checker: opts.checker ?? (await import("./vote_checks.ts")).inThreadChecker(),
      parallel: opts.parallel ?? 4,
    });
    report.votes = ledger.votes.length;
    for (const [phase, check] of CROSS_CHECKS) check(ledger, context(phase));
    report.tally = await checkTally(api, {
      ledger,
      height: status.height,
      lastRun: opts.lastRun,
      ctx: context("tally"),
    });
  } catch (e) {
    if (e instanceof ChainGrew) return null;
    if (!(e instanceof TooManyFailures || e instanceof Refused)) {
      failures.push(`audit stopped: ${(e as Error).message}`);
    }
  }
  report.voteFailures = [...byVote.values()].sort((a, b) =>
    a.height - b.height || a.index - b.index
  );
  report.ok = failures.length === 0;
  return report;
}

/**
 * The pinned key (`trusted.key`) against the served one: another key is refused with a line
 * naming both, and one more when heads were remembered under the pinned key, since none of them
 * can be compared with what the other key signs.
 */
function checkPinnedKey(
  serverKey: string,
  { trusted, fail }: { trusted: TrustedAnchor; fail: (line: string) => void },
) {
  if (trusted.key === undefined || trusted.key.toLowerCase() === serverKey) return;
  fail(`server key: the server answers ${serverKey}, but the trusted key is ${trusted.key}`);
  const n = trusted.heads?.length ?? 0;
  if (n > 0) {
    fail(
      `remembered heads: ${n} ${n === 1 ? "head was" : "heads were"} signed under key ` +
        `${trusted.key}, not the server key ${serverKey}`,
    );
  }
  throw new Refused();
}

/** True when `head` carries a valid signature by `key`; false for one malformed too. */
function signedBy(key: string, head: SignedHeadFields): boolean {
  const { height, hash, head_signature } = head;
  if (head_signature === undefined) return false;
  try {
    return verifyHead(key, { height, hash, head_signature });
  } catch {
    return false;
  }
}

/**
 * Blocks phase, against what the auditor trusts: every remembered head must be the audited block
 * at its height, hash for hash. A head above the audited height, or at a height the chain does not
 * serve, fails too (fail closed: a block not given is never a pass).
 */
function checkTrustedHeads(
  blocks: BlockRecord[],
  { height, serverKey, heads, ctx }: {
    height: number;
    serverKey: string;
    heads: readonly SignedHead[];
    ctx: PhaseContext;
  },
) {
  for (const head of [...heads].sort((a, b) => a.height - b.height)) {
    const h = head.height;
    const block = blocks[h];
    if (h > height) {
      ctx.fail(
        `remembered head ${h}: above the audited height ${height}: blocks are hidden or the ` +
          "chain went back",
      );
    } else if (block?.height !== h) {
      ctx.fail(`remembered head ${h}: the audited chain has no block at this height`);
    } else if (block.hash !== head.hash) {
      const how = !signedBy(serverKey, head)
        ? " (the remembered head is not signed by the server key)"
        : signedBy(serverKey, block)
        ? ", both signed by the server key: a fork"
        : "";
      ctx.fail(
        `block ${h}: hash ${block.hash}, but the remembered head at this height has hash ` +
          `${head.hash}${how}`,
      );
    }
  }
}

/** Keys phase: the key directory, ids contiguous from 1, keys distinct. */
async function readKeys(api: ApiClient, ctx: PhaseContext): Promise<Set<string>> {
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
 * every head signature (the status's and each block's) against the server key.
 */
async function readBlocks(
  api: ApiClient,
  { status, serverKey, ctx }: { status: BlockStatus; serverKey: string; ctx: PhaseContext },
): Promise<BlockRecord[]> {
  const checkHead = (where: string, head: SignedHeadFields) => {
    if (head.head_signature === undefined) ctx.fail(`${where}: no head signature`);
    else if (!signedBy(serverKey, head)) {
      ctx.fail(`${where}: head signature is not the server key's (${serverKey})`);
    }
  };
  checkHead("status", status);
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
  return blocks;
}

/** The fields of a served block record that its head signature covers. */
type SignedHeadFields = { height: number; hash: string; head_signature?: string };

/** One page of a block's votes listing: where it starts and how many votes it must hold. */
type PageRequest = { height: number; size: number; offset: number; due: number };

/**
 * The pages of every sealed block's listing, in chain order: from offset 0 in steps of the page
 * limit, bounded by the block's size (never by the listing's `total`, which the server also
 * controls) and ending at the first short page, whose block is in `ended` by then. Lazy, so a
 * block claiming a huge size costs the pages it really serves.
 */
function* pageRequests(blocks: BlockRecord[], ended: Set<number>): Generator<PageRequest> {
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
async function readVotes(
  api: ApiClient,
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
        const audited = { height, index, position: offset + k, voteId, vote, finding: findings[k] };
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

/**
 * Merkle phase: leaf order (leaf indexes in sequence, vote ids strictly ascending within a block
 * and never reused, protocol §3), and each block's root recomputed from the leaves of its votes.
 */
function checkMerkleRoots(ledger: Ledger, ctx: PhaseContext) {
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
function checkMembership(ledger: Ledger, ctx: PhaseContext) {
  eachVote(ledger, ctx, (v) => {
    for (const key of v.vote.publicKeys) {
      if (!ledger.registered.has(key)) ctx.failVote(v, `ring member ${key} is not registered`);
    }
  });
}

/** Tags phase: no tag appears twice in the chain (one key, one vote). */
function checkTags(ledger: Ledger, ctx: PhaseContext) {
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
function checkSizes(ledger: Ledger, ctx: PhaseContext) {
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

/** The phases that compare what was read, in order; a new check is one more entry. */
const CROSS_CHECKS: [AuditPhase, (ledger: Ledger, ctx: PhaseContext) => void][] = [
  ["merkle", checkMerkleRoots],
  ["membership", checkMembership],
  ["tags", checkTags],
  ["sizes", checkSizes],
];

/** Tally phase: recount from every vote and compare with the served tally, row by row. */
async function checkTally(
  api: ApiClient,
  { ledger, height, lastRun, ctx }: {
    ledger: Ledger;
    height: number;
    lastRun: boolean;
    ctx: PhaseContext;
  },
): Promise<AuditReport["tally"]> {
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
  served.results.forEach((t, i) => {
    if (i > 0 && t.count > served.results[i - 1].count) {
      ctx.fail("tally: not in count-descending order");
    }
  });
  ctx.progress(1, 1);
  return mine;
}

/** The printed report: what was checked, the recomputed tally, failures and the verdict. */
export function formatReport(url: string, report: AuditReport): string {
  const trust = report.keyPinned ? "(pinned)" : "(not pinned: compare it out of band)";
  const lines = [
    `Ringvote audit of ${url}`,
    `  server key        ${report.serverKey ?? "(not read)"} ${trust}`,
    ...(report.trustedHeads > 0 ? [`  remembered heads  ${report.trustedHeads}`] : []),
    `  keys registered   ${report.keys}`,
    `  blocks            ${report.blocks} (height ${report.height})`,
    `  votes verified    ${report.votes}`,
    "  tally (recomputed from the chain):",
    ...report.tally.map((t) => `    ${String(t.count).padStart(6)}  ${JSON.stringify(t.payload)}`),
  ];
  if (report.ok) {
    lines.push("VERDICT: the record is consistent: every check holds");
  } else {
    lines.push(`VERDICT: INCONSISTENT: ${report.failures.length} failure(s)`);
    lines.push(...report.failures.map((f) => `  - ${f}`));
  }
  return lines.join("\n");
}

/**
 * The verdict on a fork-evidence file (protocol §4.5): `fork` when it proves one by its key, with
 * whether that key is `trustedKey` (null when the checker trusts none); `no-fork` with the reason.
 */
export type EvidenceVerdict =
  | { kind: "fork"; height: number; key: string; keyMatches: boolean | null }
  | { kind: "no-fork"; reason: string };

/**
 * Checks `evidence` (parsed JSON) with {@link checkForkEvidence} and compares its key with the
 * server key the checker trusts, so the command line and the board say the same. Never throws.
 */
export function checkEvidence(evidence: unknown, trustedKey: string | null): EvidenceVerdict {
  const check = checkForkEvidence(evidence);
  if (!check.ok) return { kind: "no-fork", reason: check.reason };
  const { key } = evidence as { key: string };
  const keyMatches = trustedKey === null ? null : key === trustedKey.toLowerCase();
  return { kind: "fork", height: check.height, key, keyMatches };
}
