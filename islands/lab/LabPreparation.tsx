/**
 * The lab's preparation line: what it is doing, what it has ready, or why it could not get ready,
 * with a button to start a fresh practice ledger when the old one is full.
 * @module
 */
import type { LedgerFacts } from "../../lib/client/lab/lab.ts";

/** Where the preparation is. */
export type Preparation =
  | { state: "working"; line: string }
  | { state: "ready"; voters: number; viewer: string; ledger: LedgerFacts | null }
  | { state: "failed"; problem: string }
  | { state: "full"; problem: string };

/**
 * The preparation line, with a retry button when it failed, and a button starting a fresh
 * practice ledger when the old one is full.
 */
export default function LabPreparation(
  { preparation, onRetry, onStartFresh }: {
    preparation: Preparation;
    onRetry: () => void;
    onStartFresh: () => void;
  },
) {
  switch (preparation.state) {
    case "working":
      return <p class="lab-prep lab-working" role="status" aria-live="polite">{preparation.line}
      </p>;
    case "failed":
      return (
        <p class="lab-prep lab-problem" role="alert">
          The lab could not get ready: {preparation.problem}{" "}
          <button type="button" onClick={onRetry}>Try again</button>
        </p>
      );
    case "full":
      return (
        <p class="lab-prep lab-problem lab-full" role="alert">
          The lab could not get ready: {preparation.problem}{" "}
          <button type="button" class="lab-fresh" onClick={onStartFresh}>
            Start a fresh practice ledger
          </button>
        </p>
      );
    case "ready":
      return (
        <p class="lab-prep lab-ready" role="status">
          Ready: {preparation.voters} lab voters registered in this browser. {preparation.viewer}
          {" "}
          has cast an honest vote, now sealed on the chain
          {preparation.ledger &&
            ` (height ${preparation.ledger.height}, ${preparation.ledger.votes} votes)`}.
        </p>
      );
  }
}
