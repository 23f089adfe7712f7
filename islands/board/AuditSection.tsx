/**
 * The board's one-click audit: lib/client/audit/ run in this page with the audit workers, anchored
 * in this browser's remembered key and heads (page §12) and in its memory of its last audit
 * (./audit_memory.ts), on the live chain or a record file (under the record's own key); a progress
 * bar, the verdict, the failing votes and the command line's report.
 * @module
 */
import { useEffect, useState } from "react";
import Notice from "../../components/Notice.tsx";
import {
  AUDIT_PHASES,
  type AuditProgress,
  type AuditReport,
  PHASE_LABELS,
  type VoteFailure,
} from "../../lib/client/audit/audit.ts";
import { isVoteFailure } from "../../lib/client/audit/findings.ts";
import { findingText, formatReport, voteProblemText } from "../../lib/client/audit/report_text.ts";
import { auditRecord } from "../../lib/client/audit/election_record_source.ts";
import { withGroupRule } from "../../lib/client/audit/groups.ts";
import { auditRemembering, loadAuditMemory, memoryName } from "./audit_memory.ts";
import AuditSummary from "./AuditSummary.tsx";
import { parseSeenHeads, SEEN_HEADS_KEY } from "../../lib/client/log/heads.ts";
import { boardHref } from "../../lib/client/board/rounds.ts";
import RecordControls from "./RecordControls.tsx";
import { sharedRound } from "./section.ts";
import type { SectionProps } from "./section.ts";
import { boardPool } from "./vote_check_pool.ts";

/** What to do when a failing vote is chosen: open its walkthrough and proof. */
type OpenVote = (height: number, voteId: string) => void;

/** What the audit read: this server, or a record file chosen on the page. */
type Audited = { kind: "server" } | { kind: "record"; file: File };

type Finished = {
  report: AuditReport;
  ms: number;
  workers: number;
  record: string | null;
  /** The height taken up from this browser's memory of its last audit; null for a whole audit. */
  from: number | null;
  /** The server key this browser remembers (page §12), which a record is compared with. */
  rememberedKey: string | null;
};

/** The audit control, its progress and its result. */
export default function AuditSection({ bulletin }: SectionProps) {
  const [progress, setProgress] = useState<AuditProgress | null>(null);
  const [finished, setFinished] = useState<Finished | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  /** Whether this browser remembers a passing audit of this ledger: "Audit everything again". */
  const [remembers, setRemembers] = useState(false);
  const running = progress !== null && finished === null;
  const round = bulletin.round;
  useEffect(() => {
    if (round !== null) loadAuditMemory(memoryName(round)).then((m) => setRemembers(m !== null));
  }, [round]);

  async function run(audited: Audited = { kind: "server" }, { all = false } = {}) {
    setFinished(null);
    setProgress({ phase: AUDIT_PHASES[0], done: 0, total: 0 });
    const started = performance.now();
    let pool;
    try {
      pool = boardPool();
    } catch (error) {
      setProgress(null);
      setProblem(`The audit workers could not start: ${(error as Error).message}`);
      return;
    }
    setProblem(null);
    // What this browser trusts: every remembered head must be in the audited chain, and every
    // block of its memory of its last audit. A record is of any election, maybe long gone: it is
    // audited under its own key, then only compared with the remembered one.
    const seen = parseSeenHeads(bulletin.storage.getItem(SEEN_HEADS_KEY));
    const key = seen.key ?? undefined;
    const opts = { checker: pool.check, parallel: pool.size * 2, onProgress: setProgress };
    const { report, from } =
      await (audited.kind === "server"
        ? auditRemembering(withGroupRule(bulletin.api, round), {
          ...opts,
          trusted: { key, heads: seen.heads },
          round,
          all,
        })
        : auditRecord(audited.file.stream(), opts).then((report) => ({ report, from: null })))
        // The ring members' precomputations are kept for one audit, not for the page's life.
        .finally(() => pool.releaseKeys());
    if (audited.kind === "server" && report.ok && round !== null) setRemembers(true);
    const record = audited.kind === "record" ? audited.file.name : null;
    const ms = performance.now() - started;
    setFinished({ report, ms, workers: pool.size, record, from, rememberedKey: seen.key });
  }

  return (
    <section class="bulletin-section audit" aria-labelledby="audit-title">
      <h2 id="audit-title">Audit everything</h2>
      <p class="audit-intro">
        One click re-checks the whole public record in this browser: every block and link, every
        Merkle root, every ring signature with every check, that every ring member is a registered
        key, that no key voted twice, that every block holds as many votes as its size says, and the
        tally — and that the chain still holds every block this browser remembers, signed by the key
        it remembers. It is the same check, with the same code, as the command-line auditor{" "}
        <code>deno task audit</code>. Once an audit passes, this browser remembers what it verified:
        the next one checks that the chain still holds every block it verified and checks only the
        votes sealed since; 'Audit everything again' checks every vote again.
      </p>
      <button
        type="button"
        class="audit-run"
        data-action="audit"
        disabled={running}
        onClick={() => run()}
      >
        {running ? "Auditing…" : finished ? "Audit again" : "Audit the whole record"}
      </button>
      {remembers && (
        <button
          type="button"
          class="audit-run-all"
          data-action="audit-all"
          disabled={running}
          onClick={() => run({ kind: "server" }, { all: true })}
        >
          Audit everything again
        </button>
      )}
      {problem !== null && <Notice tone="problem" text={problem} />}
      {progress !== null && <AuditProgressBar progress={progress} done={finished !== null} />}
      {finished !== null && (
        <AuditResult {...finished} round={bulletin.round} onOpenVote={bulletin.openProof} />
      )}
      <RecordControls
        api={withGroupRule(bulletin.api, round)}
        busy={running}
        onAuditFile={(file) => run({ kind: "record", file })}
      />
    </section>
  );
}

/** Rough share of an audit's time each phase takes (of 100), so the bar moves evenly. */
const PHASE_WEIGHTS: Record<AuditProgress["phase"], number> = {
  keys: 4,
  blocks: 4,
  signatures: 84,
  merkle: 4,
  sizes: 1,
  tally: 3,
};

function AuditProgressBar({ progress, done }: { progress: AuditProgress; done: boolean }) {
  const step = AUDIT_PHASES.indexOf(progress.phase) + 1;
  const share = progress.total > 0 ? progress.done / progress.total : 0;
  const before = AUDIT_PHASES.slice(0, step - 1).reduce((sum, p) => sum + PHASE_WEIGHTS[p], 0);
  const overall = done ? 1 : (before + share * PHASE_WEIGHTS[progress.phase]) / 100;
  return (
    <div class="audit-progress" role="status" aria-live="polite" data-audit-phase={progress.phase}>
      <progress max={1} value={overall} />
      <span>
        {done
          ? "Finished."
          : `Step ${step} of ${AUDIT_PHASES.length}: ${PHASE_LABELS[progress.phase]}` +
            (progress.total > 0 ? ` (${progress.done} of ${progress.total})` : "")}
      </span>
    </div>
  );
}

function AuditResult(
  { report, ms, workers, record, from, rememberedKey, round, onOpenVote }: Finished & {
    round: number | null;
    onOpenVote: OpenVote;
  },
) {
  const ok = report.ok;
  const label = record === null ? location.origin : `${record} (election record, offline)`;
  const other = report.failures.filter((f) => !isVoteFailure(f));
  return (
    <div
      class={`audit-result ${ok ? "audit-pass" : "audit-fail"}`}
      data-audit-verdict={ok ? "pass" : "fail"}
      data-audit-ms={Math.round(ms)}
      data-audit-source={record === null ? "server" : "record"}
      data-votes-checked={report.votes - report.remembered}
      data-votes-remembered={report.remembered}
    >
      <p class="audit-verdict">
        {ok ? "✓ PASS: every check holds." : `✗ FAIL: ${report.failures.length} failure(s).`}
      </p>
      <AuditSummary {...{ report, ms, workers, record, from, rememberedKey }} />
      {report.voteFailures.length > 0 && (
        <>
          <h3>Votes that fail a check</h3>
          <ul class="audit-failures">
            {report.voteFailures.map((f) => (
              <FailingVote key={f.voteId} failure={f} round={round} onOpenVote={onOpenVote} />
            ))}
          </ul>
        </>
      )}
      {other.length > 0 && (
        <>
          <h3>Other failures</h3>
          <ul class="audit-failures">
            {other.map((finding, i) => (
              <li key={i} data-audit-problem={finding.kind} data-finding={JSON.stringify(finding)}>
                {findingText(finding)}
              </li>
            ))}
          </ul>
        </>
      )}
      <details class="audit-report" open={!ok}>
        <summary>The full report, as printed by deno task audit</summary>
        <pre data-audit-report="">{formatReport(label, report)}</pre>
      </details>
    </div>
  );
}

function FailingVote(
  { failure, round, onOpenVote }: {
    failure: VoteFailure;
    round: number | null;
    onOpenVote: OpenVote;
  },
) {
  const { voteId, height, index, problems } = failure;
  return (
    <li
      data-audit-failure={problems.map((p) => p.kind).join(" ")}
      data-vote-id={voteId}
      data-height={height}
    >
      <a
        href={boardHref({ round: sharedRound(round), vote: voteId })}
        onClick={(event) => {
          event.preventDefault();
          onOpenVote(height, voteId);
        }}
      >
        Block {height}, leaf {index}: vote {voteId}
      </a>
      {" — "}
      <span class="audit-reason">{problems.map(voteProblemText).join("; ")}</span>
    </li>
  );
}
