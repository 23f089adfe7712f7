/**
 * A listed vote's signature status on the board, verified in this browser: green "valid", red
 * "invalid" with the reason, grey while it is checked.
 * @module
 */
import { voteProblemText } from "../../lib/client/audit/report_text.ts";
import type { SignatureStatus } from "./signature_status.ts";

/**
 * A listed vote's signature status, verified in this browser: green "valid", red "invalid" with
 * the reason, grey while it is being checked.
 */
export default function SignatureBadge({ finding }: { finding: SignatureStatus | undefined }) {
  if (finding === undefined) {
    return <span class="sig sig-checking" data-signature="checking">checking…</span>;
  }
  const ok = finding.problems.length === 0;
  const why = finding.problems.map(voteProblemText).join("; ");
  return (
    <span
      class={`sig ${ok ? "sig-ok" : "sig-bad"}`}
      data-signature={ok ? "valid" : "invalid"}
      title={ok ? "Every verifier check holds" : why}
      data-problems={finding.problems.map((p) => p.kind).join(" ")}
    >
      {ok ? "✓ valid" : `✗ ${why}`}
    </span>
  );
}
