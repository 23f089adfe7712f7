/**
 * A vote's inclusion proof on the board as a list of steps, leaf first and previous block last,
 * each green or red with the values compared.
 * @module
 */
import type { ProofStep } from "../../lib/client/board/record_checks.ts";
import Hex from "./Hex.tsx";

/**
 * A vote's inclusion proof as a list of steps, leaf first and previous block last, each green
 * when its value equals what it was compared with and red otherwise, with the values shown.
 */
export default function ProofSteps({ steps }: { steps: readonly ProofStep[] }) {
  return (
    <ol class="proof-steps">
      {steps.map((step, i) => (
        <li
          key={i}
          class={`step ${step.ok ? "step-ok" : "step-bad"}`}
          data-step={step.kind}
          data-ok={String(step.ok)}
        >
          <span class="step-mark" aria-hidden="true">{step.ok ? "✓" : "✗"}</span>
          <span class="step-label">{step.label}</span> <Hex value={step.value} />
          {step.result && (
            <span class="step-result">
              {" → "}
              <Hex value={step.result.value} /> <span class="step-note">{step.result.label}</span>
            </span>
          )}
          {step.expected && (
            <span class="step-expected">
              {step.ok ? "equals " : "differs from "}
              {step.expected.from} <Hex value={step.expected.value} />
            </span>
          )}
          <span class="step-note">{step.note}</span>
        </li>
      ))}
    </ol>
  );
}
