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
  checkMembership,
  checkMerkleRoots,
  checkSizes,
  checkTags,
  checkTally,
  MAX_AUDIT_RUNS,
} from "./cross_checks.ts";
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
import type { VoteChecker } from "./vote_checks.ts";

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
  /** The log's checkpoint, once it verified against the audited blocks; null otherwise. */
  checkpoint: AuditedCheckpoint | null;
  /** The trusted witnesses' cosignatures on that checkpoint; null when none are trusted. */
  witnesses: WitnessReport | null;
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
  const failures: string[] = [];
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
    // Read before the head: a chain that grows meanwhile makes the checkpoint a prefix of it.
    const served = await readCheckpoint(api);
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
    report.checkpoint = await checkCheckpoint(api, {
      served,
      serverKey,
      blocks,
      ctx: context("blocks"),
    });
    if (trusted.witnesses !== undefined) {
      report.witnesses = checkWitnesses(report.checkpoint, { trusted: trusted.witnesses, fail });
    }
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

/** The phases that compare what was read, in order; a new check is one more entry. */
const CROSS_CHECKS: [AuditPhase, (ledger: Ledger, ctx: PhaseContext) => void][] = [
  ["merkle", checkMerkleRoots],
  ["membership", checkMembership],
  ["tags", checkTags],
  ["sizes", checkSizes],
];

/** The printed report: what was checked, the recomputed tally, failures and the verdict. */
export function formatReport(url: string, report: AuditReport): string {
  const trust = report.keyPinned ? "(pinned)" : "(not pinned: compare it out of band)";
  const lines = [
    `Ringvote audit of ${url}`,
    `  server key        ${report.serverKey ?? "(not read)"} ${trust}`,
    ...(report.trustedHeads > 0 ? [`  remembered heads  ${report.trustedHeads}`] : []),
    `  keys registered   ${report.keys}`,
    `  blocks            ${report.blocks} (height ${report.height})`,
    ...checkpointLines(report),
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

/** The report's lines on the log: the checkpoint verified, and each trusted witness's finding. */
function checkpointLines({ checkpoint, witnesses }: AuditReport): string[] {
  const lines = [
    checkpoint === null
      ? "  checkpoint        (not verified)"
      : `  checkpoint        size ${checkpoint.size} of log ${checkpoint.origin}, root ` +
        `${checkpoint.root}`,
  ];
  if (witnesses === null) return lines;
  for (const { vkey, cosignedAt } of witnesses.findings) {
    const when = cosignedAt === null
      ? "no valid cosignature"
      : `cosigned at ${new Date(cosignedAt).toISOString()}`;
    lines.push(`  witness           ${vkey}: ${when}`);
  }
  const count = witnesses.findings.filter((f) => f.cosignedAt !== null).length;
  lines.push(
    `  witnesses         ${count} of ${witnesses.findings.length} cosigned, ` +
      `${witnesses.quorum} needed`,
  );
  return lines;
}
