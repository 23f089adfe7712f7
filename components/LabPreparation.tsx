// The lab's preparation line: what it is doing (registering its voters, casting its honest votes,
// waiting for their block), or what it has ready.
import type { LedgerFacts } from "../lib/app/lab.ts";

/** Where the preparation is. */
export type Preparation =
  | { state: "working"; line: string }
  | { state: "ready"; voters: number; viewer: string; ledger: LedgerFacts | null }
  | { state: "failed"; problem: string };

/** The preparation line, with a retry button when it failed. */
export default function LabPreparation(
  { preparation, onRetry }: { preparation: Preparation; onRetry: () => void },
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
