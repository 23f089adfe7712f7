/**
 * The split view's outcome: two newcomers side by side, each as its own browser shows it — green
 * when it accepts the history shown, red when it refuses it — and the projector's witness's part.
 * Contract for tests: `[data-lie-result="split-view"]`, and in it `[data-newcomer]` with
 * `data-verdict` ("accepted" | "refused") and `data-colour` ("green" | "red").
 * @module
 */
import type { LieRun } from "../../lib/client/lab/lab.ts";
import type {
  NewcomerVerdict,
  ProjectorRefusal,
  SplitViewRun,
} from "../../lib/client/lab/split_view.ts";

/** The outcome of the split view: `run.split` holds the two newcomers. */
export default function SplitViewOutcome(
  { run, split }: { run: LieRun; split: SplitViewRun },
) {
  const { projector } = split;
  const asked = projector.refusal === null
    ? "Asked to cosign the forked history, it would have cosigned it."
    : "Asked to cosign the forked history, it refuses: " +
      `${refusalText(projector.refusal, projector.cosignedSize)}.`;
  return (
    <div
      class="lab-result lab-split"
      data-lie-result="split-view"
      data-detected={run.detected ? "true" : "false"}
      data-failed={run.failed.join(",")}
    >
      <p class="lab-verdict">
        {run.detected
          ? "Caught only with a witness"
          : "NOT CAUGHT: even the browser with a witness accepted it"}
      </p>
      <p class="lab-why">
        Each side is what that browser shows: green, it believes the history it is shown; red, it
        refuses it.
      </p>
      <div class="lab-split-pair">
        <Newcomer which="alone" title="Without a witness" verdict={split.alone} />
        <Newcomer
          which="witnessed"
          title="With the projector's witness"
          verdict={split.witnessed}
        />
      </div>
      <p class="lab-why" data-projector-refused={projector.refusal === null ? "false" : "true"}>
        The projector's witness (a key made in this browser for the demonstration) cosigned the
        history everyone else sees at {projector.cosignedSize} blocks. {asked}
      </p>
    </div>
  );
}

/** One newcomer's browser: its verdict in its own colours, and why. */
function Newcomer(
  { which, title, verdict }: { which: string; title: string; verdict: NewcomerVerdict },
) {
  const accepted = verdict.verdict === "accepted";
  const colour = accepted ? "green" : "red";
  return (
    <section
      class={`lab-newcomer ${accepted ? "lab-good" : "lab-bad"}`}
      data-newcomer={which}
      data-verdict={verdict.verdict}
      data-colour={colour}
      data-witness={verdict.witness ?? "none"}
    >
      <h4>{title}</h4>
      <p class="lab-verdict">
        {accepted ? "Accepted: the page stays green" : "Refused: the page raises an alert"}
      </p>
      <ul class="lab-details">
        {verdict.details.map((line) => <li key={line}>{line}</li>)}
      </ul>
    </section>
  );
}

/** Why the projector's witness refused, in words; `size` is what it cosigned. */
function refusalText(refusal: ProjectorRefusal, size: number): string {
  if (!("form" in refusal)) return `the forked checkpoint fails its check (${refusal.kind})`;
  return refusal.form === "same-size"
    ? `it cosigned another history of the same ${size} blocks`
    : `the server's own proof that this history extends the ${size} blocks it cosigned fails`;
}
