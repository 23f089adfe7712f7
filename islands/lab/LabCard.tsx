/**
 * One card of the attack lab: a title, a plain-words explanation, the check that should stop or
 * catch it, the button that runs it and, below, what happened.
 * @module
 */
import type { ComponentChildren } from "preact";

/** The card's button: its data attribute (e.g. `data-attack`), label and state. */
export type RunControl = {
  control: Record<string, string>;
  label: string;
  running: boolean;
  disabled: boolean;
  onRun: () => void;
};

/** A lab card; `note` sits above the button, `children` (the result) below it. */
export default function LabCard(
  { id, title, explanation, check, note, run, children }: {
    id: string;
    title: string;
    explanation: string;
    check: { label: string; text: string };
    note?: ComponentChildren;
    run: RunControl;
    children?: ComponentChildren;
  },
) {
  return (
    <article class="lab-card" data-card={id}>
      <h3>{title}</h3>
      <p class="lab-explain">{explanation}</p>
      <p class="lab-check">
        <span class="lab-check-label">{check.label}</span> {check.text}
      </p>
      {note}
      <button
        type="button"
        class="lab-run"
        {...run.control}
        disabled={run.disabled || run.running}
        onClick={run.onRun}
      >
        {run.running ? "Working…" : run.label}
      </button>
      {children}
    </article>
  );
}
