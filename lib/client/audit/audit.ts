/**
 * Browser-safe. The independent audit of the public record (protocol §3–§4, §4.6): its phases,
 * options and report, anchored in what the auditor trusts (a pinned key, remembered heads, the
 * witnesses of the log's checkpoint); the same code runs in `deno task audit` and in the board's
 * one-click audit.
 * @module
 */
import type { BlockRecord, SignedHead } from "../../protocol/schemas.ts";
import {
  ChainGrew,
  checkMerkleRoots,
  checkSizes,
  checkTally,
  MAX_AUDIT_RUNS,
} from "./cross_checks.ts";
import type { AuditFinding, VoteAt, VoteProblem } from "./findings.ts";
import {
  type AuditedCheckpoint,
  checkCheckpoint,
  checkWitnesses,
  readCheckpoint,
  type TrustedWitnesses,
  witnessFindings,
  type WitnessReport,
} from "./log_checks.ts";
import {
  type AuditSource,
  type Ledger,
  type PhaseContext,
  readBlocks,
  readKeys,
  readVotes,
  signedBy,
} from "./reads.ts";
import { type AuditMemory, memoryOf } from "./remembered_audit.ts";
import type { RoundGroupRule } from "./groups.ts";
import type { VoteChecker } from "./vote_checks.ts";
import type { DirectoryEntry } from "../api_client.ts";
import { type CardsReport, checkCards } from "./cards.ts";

/** The audit's phases, in the order they run. */
export const AUDIT_PHASES = [
  "keys",
  "blocks",
  "signatures",
  "merkle",
  "sizes",
  "tally",
] as const;

/** One phase of the audit. */
export type AuditPhase = typeof AUDIT_PHASES[number];

/** What each phase does, in plain words, for a progress bar. */
export const PHASE_LABELS: Record<AuditPhase, string> = {
  keys: "Reading the key directory",
  blocks: "Checking every block's hash and its link to the block before",
  signatures: "Checking every vote: its ring signature, its ring members and its tag",
  merkle: "Recomputing every block's Merkle root from its votes",
  sizes: "Checking every block's size",
  tally: "Recounting the tally from every vote",
};

/** Where the audit is: its phase and how far through that phase it has come. */
export type AuditProgress = { phase: AuditPhase; done: number; total: number };

/**
 * A vote with at least one failed check: where it is (`index` its position in its block's
 * listing) and every problem found, in the order found.
 */
export type VoteFailure = {
  voteId: string;
  height: number;
  index: number;
  problems: VoteProblem[];
};

/** The outcome: counts of what was checked, the recomputed tally and every failure found. */
export type AuditReport = {
  ok: boolean;
  /** The server key the heads were checked against; null when it could not be read. */
  serverKey: string | null;
  /** True when that key was given by the auditor (`trusted.key`), not only served. */
  keyPinned: boolean;
  /** How many trusted heads were compared with the chain. */
  trustedHeads: number;
  /** The log's checkpoint, once it verified against the audited blocks; null otherwise. */
  checkpoint: AuditedCheckpoint | null;
  /** The trusted witnesses' cosignatures on that checkpoint; null when none are trusted. */
  witnesses: WitnessReport | null;
  height: number;
  keys: number;
  blocks: number;
  /** Votes in the audited chain: verified now, and remembered. */
  votes: number;
  /** Of those, the votes an earlier audit verified, taken from its memory (`memory` option). */
  remembered: number;
  /** What this audit verified, for the next one of the ledger; null unless it passed. */
  memory: AuditMemory | null;
  tally: { payload: string; count: number }[];
  /**
   * The ring rule the votes were held to: a round's group rule, or null for the election's
   * (rings drawn from the registered keys, protocol §2.8); absent when the audit stopped before
   * it read the votes, so that the rule is not known.
   */
  groupRule?: RoundGroupRule | null;
  /** A carded round's cards: keys, distinct cards and the set's count (protocol §2.11). */
  cards?: CardsReport;
  /** Every failure, in the order found (./report_text.ts puts them in words). */
  failures: AuditFinding[];
  /** The failures that belong to one vote, grouped by vote, in chain order. */
  voteFailures: VoteFailure[];
};

/**
 * What the auditor trusts beside the server's word: the server key it pins (`deno task audit
 * --key`, or the key a page remembers), signed heads it saw before (a page's memory, page.md
 * §12), which the audited chain must contain, and witnesses (`--witness`, `--quorum`), of which
 * at least `quorum` must have cosigned the audited checkpoint. The heads are under `key` when it
 * is given.
 */
export type TrustedAnchor = {
  key?: string;
  heads?: readonly SignedHead[];
  witnesses?: TrustedWitnesses;
};

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
  /**
   * An earlier audit's memory of this ledger (./remembered_audit.ts): its key is pinned, every
   * block it remembers must be the served block at its height, and only the votes of the blocks
   * sealed since are read and verified, unless `verifyAll`.
   */
  memory?: AuditMemory;
  /** With `memory`: every vote is read and verified again, the chain still held to the memory. */
  verifyAll?: boolean;
  /** The clock of the memory's `verifiedAt`; `Date.now` by default. */
  now?: () => number;
};

class TooManyFailures extends Error {}

/** The server is not the one the auditor trusts: nothing else is checked. */
class Refused extends Error {}

/**
 * Audits the whole public record reachable through `api`. Never throws for an inconsistent
 * record: every inconsistency becomes a failure line; an unreachable or malformed answer is one
 * too, and ends the audit.
 */
export async function auditLedger(
  api: AuditSource,
  opts: AuditOptions = {},
): Promise<AuditReport> {
  // A live server may seal a block while the audit reads: its served tally then counts votes this
  // run did not read, so the audit starts again from the new head, a few times at most.
  for (let run = 1;; run++) {
    const report = await auditOnce(api, { ...opts, lastRun: run >= MAX_AUDIT_RUNS });
    if (report !== null) return report;
  }
}

/** One run of {@link auditLedger}; null when the chain grew under it and it is to be run again. */
async function auditOnce(
  api: AuditSource,
  opts: AuditOptions & { lastRun: boolean },
): Promise<AuditReport | null> {
  const failures: AuditFinding[] = [];
  const byVote = new Map<string, VoteFailure>();
  const maxFailures = opts.maxFailures ?? 50;
  const trusted = opts.trusted ?? {};
  const report: AuditReport = {
    ok: false,
    serverKey: null,
    keyPinned: trusted.key !== undefined,
    trustedHeads: trusted.heads?.length ?? 0,
    checkpoint: null,
    witnesses: trusted.witnesses === undefined ? null : {
      quorum: trusted.witnesses.quorum,
      findings: witnessFindings(null, trusted.witnesses.keys),
    },
    height: 0,
    keys: 0,
    blocks: 0,
    votes: 0,
    remembered: 0,
    memory: null,
    tally: [],
    failures,
    voteFailures: [],
  };
  const memory = opts.memory ?? null;
  const reused = opts.verifyAll ? null : memory;
  const fail = (finding: AuditFinding) => {
    failures.push(finding);
    if (failures.length >= maxFailures) throw new TooManyFailures();
  };
  const context = (phase: AuditPhase): PhaseContext => ({
    progress: (done, total) => opts.onProgress?.({ phase, done, total }),
    fail,
    failVote(vote: VoteAt, problem: VoteProblem) {
      const entry = byVote.get(vote.voteId) ??
        { voteId: vote.voteId, height: vote.height, index: vote.position, problems: [] };
      byVote.set(vote.voteId, entry);
      entry.problems.push(problem);
      const { height, index, position, voteId } = vote;
      fail({ ...problem, vote: { height, index, position, voteId } });
    },
  });

  try {
    // The key first: a server other than the one trusted is refused before anything is read.
    const { key: serverKey } = await api.serverKey();
    report.serverKey = serverKey;
    checkPinnedKey(serverKey, { trusted, fail });
    if (memory !== null && memory.key !== serverKey) {
      // Every remembered block was signed under the remembered key: none can be compared.
      fail({
        kind: "remembered-key",
        count: memory.blocks.length,
        key: memory.key,
        served: serverKey,
      });
      throw new Refused();
    }
    // Read before the head: a chain that grows meanwhile makes the checkpoint a prefix of it.
    const served = await readCheckpoint(api);
    const status = await api.blockStatus();
    report.height = status.height;
    const directory: DirectoryEntry[] = [];
    const registered = await readKeys(api, context("keys"), directory);
    report.keys = registered.size;
    // A carded round's set (protocol §2.11): its genesis commits to it, every key has a card.
    const cards = api.cards ? await api.cards() : null;
    const blocks = await readBlocks(api, {
      status,
      serverKey,
      ctx: context("blocks"),
      remembered: reused,
      cards,
    });
    // Keys are judged against the committed set only: another set says nothing of them.
    const changed = failures.some((f) => f.kind === "cards_changed" || f.kind === "genesis");
    if (cards !== null && !changed) report.cards = checkCards(directory, cards, fail);
    report.blocks = blocks.length;
    if (blocks.length === 0) throw new Error("the server lists no block, not even genesis");
    checkTrustedHeads(blocks, {
      height: status.height,
      serverKey,
      // The memory's blocks are remembered heads too: the chain must hold every one of them.
      heads: [...trusted.heads ?? [], ...memory?.blocks ?? []],
      ctx: context("blocks"),
    });
    report.checkpoint = await checkCheckpoint(api, {
      served,
      serverKey,
      blocks,
      ctx: context("blocks"),
    });
    if (trusted.witnesses !== undefined) {
      report.witnesses = checkWitnesses(report.checkpoint, {
        trusted: trusted.witnesses,
        height: status.height,
        fail,
      });
    }
    const ledger = await readVotes(api, {
      ctx: context("signatures"),
      registered,
      blocks,
      // Loaded on demand: a page that checks in workers keeps the verifier out of its first load.
      checker: opts.checker ?? (await import("./vote_checks.ts")).inThreadChecker(),
      parallel: opts.parallel ?? 4,
      remembered: reused,
      // A round's group rule, read once the directory and the chain are.
      groups: report.groupRule = api.groupRule ? await api.groupRule() : null,
    });
    report.remembered = reused?.votes ?? 0;
    report.votes = ledger.votes.length + report.remembered;
    for (const [phase, check] of CROSS_CHECKS) check(ledger, context(phase));
    report.tally = await checkTally(api, {
      ledger,
      height: status.height,
      lastRun: opts.lastRun,
      ctx: context("tally"),
    });
    if (failures.length === 0) {
      report.memory = memoryOf({
        key: serverKey,
        blocks,
        keys: registered,
        tags: ledger.tags,
        voteIds: ledger.voteIds,
        tally: report.tally,
        verifiedAt: (opts.now ?? Date.now)(),
      });
    }
  } catch (e) {
    if (e instanceof ChainGrew) return null;
    if (!(e instanceof TooManyFailures || e instanceof Refused)) {
      failures.push({ kind: "stopped", reason: (e as Error).message });
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
  { trusted, fail }: { trusted: TrustedAnchor; fail: (finding: AuditFinding) => void },
) {
  if (trusted.key === undefined || trusted.key.toLowerCase() === serverKey) return;
  fail({ kind: "server-key", served: serverKey, trusted: trusted.key });
  const count = trusted.heads?.length ?? 0;
  if (count > 0) fail({ kind: "remembered-key", count, key: trusted.key, served: serverKey });
  throw new Refused();
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
      ctx.fail({ kind: "remembered-above", height: h, audited: height });
    } else if (block?.height !== h) {
      ctx.fail({ kind: "remembered-missing", height: h });
    } else if (block.hash !== head.hash) {
      const how = !signedBy(serverKey, head)
        ? "unsigned"
        : signedBy(serverKey, block)
        ? "fork"
        : "differs";
      ctx.fail({
        kind: "remembered-hash",
        height: h,
        hash: block.hash,
        remembered: head.hash,
        how,
      });
    }
  }
}

/** The phases that compare what was read, in order; a new check is one more entry. */
const CROSS_CHECKS: [AuditPhase, (ledger: Ledger, ctx: PhaseContext) => void][] = [
  ["merkle", checkMerkleRoots],
  ["sizes", checkSizes],
];
