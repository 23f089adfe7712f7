/**
 * The board's one-click audit: lib/client/audit/ run in this page with the audit workers, anchored
 * in this browser's remembered key and heads (page §12), on the live chain or a record file; a
 * progress bar, the verdict, the failing votes and the command line's report.
 * @module
 */
import { useState } from "react";
import Notice from "../../components/Notice.tsx";
import {
  AUDIT_PHASES,
  auditLedger,
  type AuditProgress,
  type AuditReport,
  formatReport,
  PHASE_LABELS,
  type VoteFailure,
} from "../../lib/client/audit/audit.ts";
import { auditRecord } from "../../lib/client/audit/election_record_source.ts";
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

type Finished = { report: AuditReport; ms: number; workers: number; record: string | null };

/** The audit control, its progress and its result. */
export default function AuditSection({ bulletin }: SectionProps) {
  const [progress, setProgress] = useState<AuditProgress | null>(null);
  const [finished, setFinished] = useState<Finished | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const running = progress !== null && finished === null;

  async function run(audited: Audited = { kind: "server" }) {
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
    // What this browser trusts: every remembered head must be in the audited chain. A record may
    // be older than what this browser saw since, so only its key is pinned.
    const seen = parseSeenHeads(bulletin.storage.getItem(SEEN_HEADS_KEY));
    const key = seen.key ?? undefined;
    const opts = { checker: pool.check, parallel: pool.size * 2, onProgress: setProgress };
    const report = audited.kind === "server"
      ? await auditLedger(bulletin.api, { ...opts, trusted: { key, heads: seen.heads } })
      : await auditRecord(audited.file.stream(), { ...opts, trusted: { key } });
    const record = audited.kind === "record" ? audited.file.name : null;
    setFinished({ report, ms: performance.now() - started, workers: pool.size, record });
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
        <code>deno task audit</code>.
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
      {problem !== null && <Notice tone="problem" text={problem} />}
      {progress !== null && <AuditProgressBar progress={progress} done={finished !== null} />}
      {finished !== null && (
        <AuditResult {...finished} round={bulletin.round} onOpenVote={bulletin.openProof} />
      )}
      <RecordControls
        api={bulletin.api}
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
  signatures: 80,
  merkle: 4,
  membership: 2,
  tags: 2,
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
  { report, ms, workers, record, round, onOpenVote }: Finished & {
    round: number | null;
    onOpenVote: OpenVote;
  },
) {
  const ok = report.ok;
  const label = record === null ? location.origin : `${record} (election record, offline)`;
  const seconds = (ms / 1000).toFixed(1);
  const perVote = new Set(report.voteFailures.map((f) => f.voteId));
  const other = report.failures.filter((line) => ![...perVote].some((id) => line.includes(id)));
  return (
    <div
      class={`audit-result ${ok ? "audit-pass" : "audit-fail"}`}
      data-audit-verdict={ok ? "pass" : "fail"}
      data-audit-ms={Math.round(ms)}
      data-audit-source={record === null ? "server" : "record"}
    >
      <p class="audit-verdict">
        {ok ? "✓ PASS: every check holds." : `✗ FAIL: ${report.failures.length} failure(s).`}
      </p>
      <p class="audit-summary">
        {report.votes} votes in {report.blocks} blocks and {report.keys} registered keys
        {record === null ? "" : ` of the election record ${record}`} checked in {seconds} s by{" "}
        {workers} {workers === 1 ? "worker" : "workers"} in this browser.
      </p>
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
            {other.map((line) => <li key={line} data-audit-problem="">{line}</li>)}
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
  const { voteId, height, index, reasons } = failure;
  return (
    <li data-audit-failure="" data-vote-id={voteId}>
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
      <span class="audit-reason">{reasons.join("; ")}</span>
    </li>
  );
}
