/**
 * What `deno task audit` (audit.ts) prints besides the audit's report: the progress line, and the
 * verdict on a fork-evidence file with its exit status.
 * @module
 */
import type { AuditProgress } from "../lib/client/audit/audit.ts";
import type { EvidenceVerdict, ProvenFork } from "../lib/client/audit/evidence.ts";

const BAR_WIDTH = 30;

/** The progress line of `phase`: a bar of `done` out of `total`, starting with a carriage return. */
export function progressLine({ phase, done, total }: AuditProgress): string {
  const filled = total > 0 ? Math.round((done / total) * BAR_WIDTH) : BAR_WIDTH;
  const bar = "#".repeat(Math.min(filled, BAR_WIDTH)).padEnd(BAR_WIDTH, ".");
  return `\r${phase.padEnd(10)} [${bar}] ${done}/${total}`;
}

/** The printed verdict on an evidence file, and the exit status: 0 only for a proven fork. */
export function formatEvidence(
  file: string,
  { verdict, key }: { verdict: EvidenceVerdict; key: string | null },
): { text: string; code: number } {
  const lines = [`Ringvote fork evidence in ${file}`];
  if (verdict.kind === "no-fork") {
    lines.push(`VERDICT: NO FORK PROVEN: ${verdict.reason}`);
    return { text: lines.join("\n"), code: 1 };
  }
  if (verdict.kind === "unsettled") {
    lines.push(
      `  form              ${FORMS["failed-proof"]}`,
      `  origin            ${verdict.origin}`,
      `  sizes             ${verdict.sizes[0]} and ${verdict.sizes[1]}`,
      `  evidence key      ${verdict.key}`,
      `VERDICT: NOT SETTLED: ${verdict.reason}`,
    );
    return { text: lines.join("\n"), code: 1 };
  }
  const trust = key === null ? "(not pinned: compare it out of band)" : "(pinned)";
  lines.push(`  form              ${FORMS[verdict.form]}`);
  if (verdict.form !== "heads") {
    lines.push(
      `  origin            ${verdict.origin}`,
      `  sizes             ${verdict.sizes[0]} and ${verdict.sizes[1]}`,
    );
  }
  lines.push(`  evidence key      ${verdict.key}`, `  server key        ${key ?? "none"} ${trust}`);
  const signed = verdict.form === "heads" ? "heads" : "checkpoints";
  if (verdict.keyMatches === false) {
    lines.push(
      `VERDICT: NO FORK PROVEN for this server: the ${signed} are signed by ${verdict.key}, ` +
        `not by the pinned key ${key}`,
    );
    return { text: lines.join("\n"), code: 1 };
  }
  lines.push(`VERDICT: FORK PROVEN: ${provenText(verdict)}`);
  return { text: lines.join("\n"), code: 0 };
}

/** Each form of evidence, in words. */
const FORMS: Record<ProvenFork["form"], string> = {
  "heads": "two signed heads at one height",
  "same-size": "two checkpoints of one size with two roots",
  "failed-proof": "two checkpoints of two sizes and a consistency proof between them that fails",
};

/** What a proven fork shows, in one sentence. */
function provenText(verdict: ProvenFork & { key: string }): string {
  if (verdict.form === "heads") {
    return `key ${verdict.key} signed two different blocks at height ${verdict.height}`;
  }
  const [a, b] = verdict.sizes;
  return verdict.form === "same-size"
    ? `key ${verdict.key} signed two different roots of log ${verdict.origin} at size ${a}`
    : `key ${verdict.key} signed checkpoints of log ${verdict.origin} at sizes ${a} and ${b}, ` +
      "and the enclosed consistency proof does not join them; a proof that joins them " +
      `(GET {base}/log/consistency/${Math.min(a, b)}/${Math.max(a, b)}) would refute this`;
}
