/**
 * One lie of the lying-server lens: what the server claims, the check that must catch it, and the
 * verdict of the voter's own checks (for the split view, of two newcomers: SplitViewOutcome.tsx).
 * Contract for tests: `[data-lie]`, `[data-lie-result]`.
 * @module
 */
import type { LieRun } from "../../lib/client/lab/lab.ts";
import type { Lie } from "../../lib/client/lab/lies.ts";
import ForkAlert from "../../components/ForkAlert.tsx";
import LabCard, { type RunControl } from "./LabCard.tsx";
import SplitViewOutcome from "./SplitViewOutcome.tsx";

/** The card's result: a view, or the reason it could not be made. */
export type LieResult = LieRun | { problem: string };

/** A lie card; `run.onRun` views the vote through the lens. */
export default function LieCard(
  { lie, result, run }: { lie: Lie; result: LieResult | null; run: RunControl },
) {
  return (
    <LabCard
      id={lie.id}
      title={lie.title}
      explanation={lie.explanation}
      check={{ label: "Caught by", text: `the voter's check: ${lie.caughtBy}` }}
      run={run}
    >
      {result && <LieOutcome lie={lie} result={result} />}
    </LabCard>
  );
}

function LieOutcome({ lie, result }: { lie: Lie; result: LieResult }) {
  if ("problem" in result) {
    return <p class="lab-problem" role="alert">The lens could not be used: {result.problem}</p>;
  }
  if (result.split) return <SplitViewOutcome run={result} split={result.split} />;
  return (
    <div
      class={`lab-result ${result.detected ? "lab-good" : "lab-bad"}`}
      data-lie-result={lie.id}
      data-detected={result.detected ? "true" : "false"}
      data-failed={result.failed.join(",")}
    >
      <p class="lab-verdict">
        {result.detected ? `Caught: ${result.failed.join(", ")}` : "NOT CAUGHT: every check passed"}
      </p>
      <ul class="lab-details">
        {result.details.map((line) => <li key={line}>{line}</li>)}
      </ul>
      {result.evidence && <ForkAlert evidence={result.evidence} signer="lens" />}
    </div>
  );
}
