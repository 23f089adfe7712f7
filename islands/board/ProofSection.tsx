/**
 * The board's view of the open vote's inclusion proof, step by step, each step green or red, or why
 * the steps are missing.
 * @module
 */
import Notice from "../../components/Notice.tsx";
import ProofSteps from "./ProofSteps.tsx";
import type { SectionProps } from "./section.ts";

/** Nothing until a vote's proof is asked for; then its steps, or why they are missing. */
export default function ProofSection({ bulletin }: SectionProps) {
  const open = bulletin.openVote.value;
  if (open === null) return null;
  return (
    <section class="bulletin-section" aria-labelledby="proof-title" data-proof={open.voteId}>
      <h2 id="proof-title">Inclusion proof of vote {open.voteId}</h2>
      {open.problem !== null && <Notice tone="problem" text={open.problem} />}
      {open.steps === null
        ? (open.problem === null && <p>Computing the proof…</p>)
        : <ProofSteps steps={open.steps} />}
    </section>
  );
}
