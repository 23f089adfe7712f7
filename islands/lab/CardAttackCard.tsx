/**
 * One card attack of the lab (protocol §2.11), sent to the lab's carded practice directory: what
 * it tries, the check that refuses it, the button, and each request's answer. Contract for tests:
 * `[data-card-attack]` and `[data-card-attack-result]`.
 * @module
 */
import type { CardAttack, CardAttackRun } from "../../lib/client/lab/card_attacks.ts";
import LabCard, { type RunControl } from "./LabCard.tsx";

/** The card's result: a run, or the reason it could not be made. */
export type CardAttackResult = CardAttackRun | { problem: string };

/** A card attack's card; `run.onRun` sends it. */
export default function CardAttackCard(
  { attack, result, run }: { attack: CardAttack; result: CardAttackResult | null; run: RunControl },
) {
  return (
    <LabCard
      id={attack.id}
      title={attack.title}
      explanation={attack.explanation}
      check={{ label: "Stopped by", text: `${attack.section}: ${attack.check}` }}
      note={
        <p class="lab-expect">
          Expected answer: <strong>{attack.status} {attack.code}</strong>
        </p>
      }
      run={run}
    >
      {result && "problem" in result && (
        <p class="lab-problem" role="alert">The attack could not be run: {result.problem}</p>
      )}
      {result && !("problem" in result) && <Outcome attack={attack} run={result} />}
    </LabCard>
  );
}

function Outcome({ attack, run }: { attack: CardAttack; run: CardAttackRun }) {
  const refused = run.outcome === "refused";
  const expected = run.status === attack.status && run.code === attack.code;
  return (
    <div
      class={`lab-result ${refused && expected ? "lab-good" : "lab-bad"}`}
      data-card-attack-result={attack.id}
      data-outcome={run.outcome}
      data-status={run.status}
    >
      <p class="lab-verdict">
        {refused ? `Refused: ${run.status}` : `ACCEPTED: ${run.status}`}
        {refused && !expected && ` (expected ${attack.status} ${attack.code})`}
      </p>
      <p class="lab-answer">Server's answer: {run.answer}</p>
      {refused && <p class="lab-why">Refused by {attack.section}: {attack.check}.</p>}
      <dl class="lab-facts">
        {run.steps.map((step, i) => [
          <dt key={`t-${i}`}>{step.label}</dt>,
          <dd key={`d-${i}`}>{step.status} {step.code ?? "registered"}</dd>,
        ])}
      </dl>
    </div>
  );
}
