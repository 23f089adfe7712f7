/**
 * One attack of the lab: what it tries, the check that should stop it, the button that sends it,
 * and what happened. Contract for tests: `[data-attack]` and `[data-attack-result]`.
 * @module
 */
import { type Attack, shortenRequest } from "../../lib/client/lab/attacks.ts";
import type { AttackRun } from "../../lib/client/lab/lab.ts";
import LabCard, { type RunControl } from "./LabCard.tsx";
import LedgerCompare from "./LedgerCompare.tsx";

/** The card's result: a run, or the reason it could not be made. */
export type AttackResult = AttackRun | { problem: string };

/** An attack card; `run.onRun` sends the attack. */
export default function AttackCard(
  { attack, result, run }: { attack: Attack; result: AttackResult | null; run: RunControl },
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
      {result && <AttackOutcome attack={attack} result={result} />}
    </LabCard>
  );
}

function AttackOutcome({ attack, result }: { attack: Attack; result: AttackResult }) {
  if ("problem" in result) {
    return <p class="lab-problem" role="alert">The attack could not be run: {result.problem}</p>;
  }
  const refused = result.outcome === "refused";
  const expected = result.status === attack.status;
  return (
    <div
      class={`lab-result ${refused && expected ? "lab-good" : "lab-bad"}`}
      data-attack-result={attack.id}
      data-outcome={result.outcome}
      data-status={result.status}
    >
      <p class="lab-verdict">
        {refused ? `Refused: ${result.status}` : `ACCEPTED: ${result.status}`}
        {refused && !expected && ` (expected ${attack.status})`}
      </p>
      <p class="lab-answer">Server's answer: {result.answer}</p>
      {refused && (
        <p class="lab-why">
          Refused by {attack.section}: {attack.check}.
        </p>
      )}
      {result.facts.length > 0 && (
        <dl class="lab-facts">
          {result.facts.map((fact) => [
            <dt key={`t-${fact.label}`}>{fact.label}</dt>,
            <dd key={`d-${fact.label}`} class="hex">{fact.value}</dd>,
          ])}
        </dl>
      )}
      <details class="lab-request">
        <summary>Request sent: POST vote</summary>
        <pre>{shortenRequest(result.body)}</pre>
      </details>
      <LedgerCompare before={result.before} after={result.after} />
    </div>
  );
}
