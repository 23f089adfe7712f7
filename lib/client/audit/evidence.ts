/**
 * Browser-safe. The check of a fork-evidence file (protocol §4.5, §4.10), shared by the command
 * line and the board: either form — two signed heads, or two checkpoints no consistency proof
 * joins — and its key compared with the server key the checker trusts.
 * @module
 */
import { checkForkEvidence } from "../../protocol/head.ts";
import { checkLogForkEvidence, LOG_FORK_EVIDENCE_KIND } from "../../protocol/log_evidence.ts";

/**
 * What a proven fork shows: two heads at one `height` (`heads`), or two checkpoints of log
 * `origin` at `sizes` with two roots at one size (`same-size`) or whose enclosed consistency
 * proof fails (`failed-proof`).
 */
export type ProvenFork =
  | { form: "heads"; height: number }
  | { form: "same-size" | "failed-proof"; origin: string; sizes: [number, number] };

/**
 * The verdict on a fork-evidence file: `fork` when it proves one by its key, with whether that key
 * is `trustedKey` (null when the checker trusts none); `no-fork` with the reason.
 */
export type EvidenceVerdict =
  | ProvenFork & { kind: "fork"; key: string; keyMatches: boolean | null }
  | { kind: "no-fork"; reason: string };

/**
 * Checks `evidence` (parsed JSON) by its `kind`: checkpoint evidence with
 * {@link checkLogForkEvidence}, anything else as two signed heads with {@link checkForkEvidence};
 * then compares its key with the server key the checker trusts, so the command line and the
 * board say the same. Never throws.
 */
export function checkEvidence(evidence: unknown, trustedKey: string | null): EvidenceVerdict {
  const kind = (evidence as { kind?: unknown } | null)?.kind;
  let proven: ProvenFork;
  if (kind === LOG_FORK_EVIDENCE_KIND) {
    const check = checkLogForkEvidence(evidence);
    if (!check.ok) return { kind: "no-fork", reason: check.reason };
    proven = { form: check.form, origin: check.origin, sizes: check.sizes };
  } else {
    const check = checkForkEvidence(evidence);
    if (!check.ok) return { kind: "no-fork", reason: check.reason };
    proven = { form: "heads", height: check.height };
  }
  const { key } = evidence as { key: string };
  const keyMatches = trustedKey === null ? null : key === trustedKey.toLowerCase();
  return { ...proven, kind: "fork", key, keyMatches };
}
