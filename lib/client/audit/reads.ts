/**
 * Browser-safe. The audit's reading phases (protocol §4): the key directory, every block with its
 * hash, link and head signature, and every vote listing, page by page, each vote judged by the
 * rulebook (lib/protocol/check_vote.ts) as it arrives — gathered into the ledger the cross checks
 * compare.
 * @module
 */
import { checkLink, isGenesis, verifyBlockHash } from "../../protocol/chain.ts";
import { checkVote } from "../../protocol/check_vote.ts";
import { verifyHead } from "../../protocol/head.ts";
import { type BlockRecord, type BlockStatus, MAX_PAGE_LIMIT } from "../../protocol/schemas.ts";
import { type DirectoryEntry, pagesOf } from "../api_client.ts";
import { checkCardedGenesis, type RoundCardsRead } from "./cards.ts";
import type { AuditFinding, VoteAt, VoteProblem } from "./findings.ts";
import { groupCheck, type RoundGroupRule } from "./groups.ts";
import type { AuditMemory } from "./remembered_audit.ts";
import type { AuditSource } from "./source.ts";
import type { VoteChecker } from "./vote_checks.ts";

/** The calls the audit makes (lib/client/audit/source.ts), named here for the phases' importers. */
export type { AuditSource };

/**
 * One vote as the audit read it (`index` its leaf index as served, `position` the one it must
 * have), with what the cross checks read of it: its payload and leaf hash (null when it has none).
 * Its signature and ring, judged already, are not kept.
 */
export type AuditedVote = VoteAt & { payload: string; leaf: string | null };

/** What the audit read of one block's votes listing. */
export type Listing = {
  /** Votes read, counted page by page. */
  read: number;
  /** The first `total` the listing served that differs from the block's size; null if none. */
  wrongTotal: number | null;
};

/**
 * Everything the reading phases gathered, for the phases that compare: with `remembered`, an
 * earlier audit's memory, the votes of the blocks up to its height are not read again, and its
 * tags, vote ids and counts stand in for them.
 */
export type Ledger = {
  registered: Set<string>;
  blocks: BlockRecord[];
  votes: AuditedVote[];
  /** Per height: what was read of the block's votes listing. */
  listings: Map<number, Listing>;
  /** What an earlier audit verified of the chain; null when every vote was read. */
  remembered: AuditMemory | null;
  /** The block each tag first voted in, the remembered ones included. */
  tags: Map<string, number>;
  /** The block each vote id was first listed in, the remembered ones included. */
  voteIds: Map<string, number>;
};

/** The blocks whose votes the audit reads: those above the remembered height, if any. */
export function unreadBlocks(ledger: Pick<Ledger, "blocks" | "remembered">): BlockRecord[] {
  return ledger.blocks.slice((ledger.remembered?.height ?? 0) + 1);
}

/** What a phase may do: report progress and record failures. */
export type PhaseContext = {
  progress: (done: number, total: number) => void;
  fail: (finding: AuditFinding) => void;
  failVote: (vote: VoteAt, problem: VoteProblem) => void;
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

/**
 * Keys phase: the key directory, ids contiguous from 1, keys distinct; every entry as listed is
 * pushed onto `entries` when given (a carded round's cards are checked from them).
 */
export async function readKeys(
  api: AuditSource,
  ctx: PhaseContext,
  entries?: DirectoryEntry[],
): Promise<Set<string>> {
  const registered = new Set<string>();
  let listed = 0;
  let directorySize = 0;
  for await (const page of pagesOf(api.keys)) {
    for (const k of page.items) {
      if (k.id !== ++listed) ctx.fail({ kind: "key-id", expected: listed, id: k.id });
      if (registered.has(k.key)) ctx.fail({ kind: "key-repeated", key: k.key });
      registered.add(k.key);
      entries?.push(k);
    }
    directorySize = page.total;
    ctx.progress(listed, page.total);
  }
  if (listed !== directorySize) ctx.fail({ kind: "key-count", total: directorySize, listed });
  return registered;
}

/**
 * Blocks phase: every header in height order, genesis, each hash from its fields, each link, and
 * every head signature (the status's and each block's) against the server key; the status is the
 * head block's: its hash, timestamp and signature. A block `remembered` with the same hash and
 * signature had its signature verified by the audit that remembers it: it is not verified again.
 */
export async function readBlocks(
  api: AuditSource,
  { status, serverKey, ctx, remembered = null, cards = null }: {
    status: BlockStatus;
    serverKey: string;
    ctx: PhaseContext;
    remembered?: AuditMemory | null;
    /** A carded round's card set: its genesis must commit to it (./cards.ts). */
    cards?: RoundCardsRead | null;
  },
): Promise<BlockRecord[]> {
  /** Whether `head` is signed by the server key; a failure at `height` (null: the status) if not. */
  const checkHead = (height: number | null, head: SignedHeadFields) => {
    if (head.head_signature === undefined) {
      ctx.fail({ kind: "head-unsigned", height });
      return false;
    }
    if (!signedBy(serverKey, head)) {
      ctx.fail({ kind: "head-signature", height, key: serverKey });
      return false;
    }
    return true;
  };
  const statusSigned = checkHead(null, status);
  const blocks: BlockRecord[] = [];
  for await (const page of pagesOf(api.blocks, { count: status.height + 1 })) {
    blocks.push(...page.items);
    ctx.progress(blocks.length, status.height + 1);
  }
  if (blocks.length <= status.height) {
    ctx.fail({ kind: "chain-short", last: blocks.length - 1, height: status.height });
  }
  if (blocks.length === 0) return blocks;
  const genesis = blocks[0];
  if (cards !== null) checkCardedGenesis(genesis, cards, ctx.fail);
  else if (!isGenesis(genesis)) ctx.fail({ kind: "genesis" });
  if (!verifyBlockHash(genesis)) ctx.fail({ kind: "block-hash", height: 0 });
  blocks.forEach((b, i) => {
    if (b.height !== i) ctx.fail({ kind: "block-height", height: i, served: b.height });
    const known = remembered?.blocks[i];
    const verified = known?.hash === b.hash && known.head_signature === b.head_signature &&
      remembered?.key === serverKey;
    if (!verified) checkHead(i, b);
    if (i === 0) return;
    if (b.size === 0) ctx.fail({ kind: "block-empty", height: i });
    if (!verifyBlockHash(b)) ctx.fail({ kind: "block-hash", height: i });
    else if (!checkLink(b, blocks[i - 1])) ctx.fail({ kind: "block-link", height: i });
  });
  const head = blocks[blocks.length - 1];
  const height = head.height;
  if (head.hash !== status.hash) ctx.fail({ kind: "status-hash", height });
  else if (head.timestamp !== status.timestamp) {
    ctx.fail({ kind: "status-timestamp", height, timestamp: status.timestamp });
  } else if (statusSigned && head.head_signature !== status.head_signature) {
    ctx.fail({ kind: "status-signature", height });
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
 * Signatures phase: every block's votes listing, page by page, each page verified by `checker`
 * as soon as it arrives; up to `parallel` pages are being read or verified at once, and their
 * results are taken in chain order, so the report does not depend on the parallelism. Each vote is
 * then judged by the rulebook, in chain order: its payload, its signature's form and ring, every
 * ring member in the directory, a round's ring one of its groups (`groups`, protocol §2.8), its
 * tag unused by any earlier vote, and the verifier's verdict.
 * Every vote read is counted; a page holding fewer votes than due ends its block's listing (pages
 * already asked for after it are dropped), and the sizes phase compares the count with the
 * block's size.
 */
export async function readVotes(
  api: AuditSource,
  { ctx, registered, blocks, checker, parallel, remembered = null, groups = null }: {
    ctx: PhaseContext;
    registered: Set<string>;
    groups?: RoundGroupRule | null;
    blocks: BlockRecord[];
    checker: VoteChecker;
    parallel: number;
    remembered?: AuditMemory | null;
  },
): Promise<Ledger> {
  const ended = new Set<number>();
  /** The height where each tag voted first, in chain order. */
  const tags = new Map(remembered?.tags);
  const ledger: Ledger = {
    registered,
    blocks,
    votes: [],
    listings: new Map(),
    remembered,
    tags,
    voteIds: new Map(remembered?.voteIds),
  };
  const isGroup = groups === null ? null : groupCheck(groups, registered);
  const unread = unreadBlocks(ledger);
  const total = unread.reduce((sum, b) => sum + b.size, 0);
  const work = async ({ height, offset }: PageRequest) => {
    const page = await api.blockVotes(height)(offset, MAX_PAGE_LIMIT);
    const verifications = await checker(page.items.map((v) => v.vote), { directory: registered });
    return { page, verifications };
  };
  ctx.progress(0, total);
  // pageRequests skips the first block it is given: genesis, or the remembered head.
  const requests = pageRequests(blocks.slice(remembered?.height ?? 0), ended);
  await inOrder(
    requests,
    { parallel, work },
    async ({ page, verifications }, { height, size, offset, due }) => {
      if (ended.has(height)) return;
      const listing = ledger.listings.get(height) ?? { read: 0, wrongTotal: null };
      ledger.listings.set(height, listing);
      if (page.total !== size) listing.wrongTotal ??= page.total;
      listing.read += page.items.length;
      if (page.items.length < due) ended.add(height);
      for (const [k, { voteId, index, vote }] of page.items.entries()) {
        const { leaf, unreadable, check } = verifications[k];
        const audited = {
          height,
          index,
          position: offset + k,
          voteId,
          payload: vote.payload,
          leaf,
        };
        ledger.votes.push(audited);
        if (unreadable !== undefined) {
          ctx.failVote(audited, { kind: "unreadable-vote", reason: unreadable });
        }
        const { findings } = await checkVote(vote, {
          members: (keys) => keys.map((key) => (registered.has(key) ? key : null)),
          ...(isGroup === null ? {} : { group: isGroup }),
          tagUse(tag) {
            const earlier = tags.get(tag);
            if (earlier === undefined) tags.set(tag, height);
            return earlier === undefined ? null : { height: earlier };
          },
          ...(check === null ? {} : { verify: () => check }),
        });
        for (const finding of findings) ctx.failVote(audited, finding);
      }
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
  take: (result: R, item: T) => void | Promise<void>,
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
    await take(await first.result, first.item);
    fill();
  }
}
