// One lie of the lying-server lens: what the server claims, the check that must catch it, the
// button that shows the lab voter's vote through the lens, and the verdict of the voter's own
// checks. Contract for tests: `[data-lie]` and `[data-lie-result]` with `data-detected`.
import type { LieRun } from "../lib/app/lab.ts";
import type { Lie } from "../lib/app/lies.ts";
import ForkAlert from "./ForkAlert.tsx";

/** The card's result: a view, or the reason it could not be made. */
export type LieResult = LieRun | { problem: string };

/** A lie card; `onRun` views the vote through the lens. */
export default function LieCard(
  { lie, result, running, disabled, onRun }: {
    lie: Lie;
    result: LieResult | null;
    running: boolean;
    disabled: boolean;
    onRun: () => void;
  },
) {
  return (
    <article class="lab-card" data-card={lie.id}>
      <h3>{lie.title}</h3>
      <p class="lab-explain">{lie.explanation}</p>
      <p class="lab-check">
        <span class="lab-check-label">Caught by</span> the voter's check: {lie.caughtBy}
      </p>
      <button
        type="button"
        class="lab-run"
        data-lie={lie.id}
        disabled={disabled || running}
        onClick={onRun}
      >
        {running ? "Looking…" : "Look through the lying lens"}
      </button>
      {result && <LieOutcome lie={lie} result={result} />}
    </article>
  );
}

function LieOutcome({ lie, result }: { lie: Lie; result: LieResult }) {
  if ("problem" in result) {
    return <p class="lab-problem" role="alert">The lens could not be used: {result.problem}</p>;
  }
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
      {result.evidence && <ForkAlert evidence={result.evidence} />}
    </div>
  );
}
