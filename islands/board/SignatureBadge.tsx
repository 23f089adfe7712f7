/**
 * A listed vote's signature status on the board, verified in this browser: green "valid", red
 * "invalid" with the reason, grey while it is checked.
 * @module
 */
import type { VoteFinding } from "../../lib/client/audit/vote_checks.ts";

/**
 * A listed vote's signature status, verified in this browser: green "valid", red "invalid" with
 * the reason, grey while it is being checked.
 */
export default function SignatureBadge({ finding }: { finding: VoteFinding | undefined }) {
  if (finding === undefined) {
    return <span class="sig sig-checking" data-signature="checking">checking…</span>;
  }
  const ok = finding.problems.length === 0;
  return (
    <span
      class={`sig ${ok ? "sig-ok" : "sig-bad"}`}
      data-signature={ok ? "valid" : "invalid"}
      title={ok ? "Every verifier check holds" : finding.problems.join("; ")}
    >
      {ok ? "✓ valid" : `✗ ${finding.problems.join("; ")}`}
    </span>
  );
}
