/**
 * The lab's ledger before and after an attack: height, vote count and tally side by side, green
 * when nothing changed, red when something did.
 * @module
 */
import { type LedgerFacts, sameLedger } from "../../lib/client/lab/lab.ts";

function tallyText(facts: LedgerFacts): string {
  return facts.tally.length === 0
    ? "no votes"
    : facts.tally.map((t) => `${t.payload}: ${t.count}`).join(", ");
}

/** Height, vote count and tally before and after, and whether they are the same. */
export default function LedgerCompare(
  { before, after }: { before: LedgerFacts; after: LedgerFacts },
) {
  const same = sameLedger(before, after);
  return (
    <table class={`ledger-compare ${same ? "ledger-same" : "ledger-changed"}`}>
      <caption>{same ? "Ledger unchanged" : "The ledger changed"}</caption>
      <thead>
        <tr>
          <th>
            <span class="visually-hidden">When</span>
          </th>
          <th>Height</th>
          <th>Votes</th>
          <th>Tally</th>
        </tr>
      </thead>
      <tbody>
        {[{ label: "Before", facts: before }, { label: "After", facts: after }].map((row) => (
          <tr key={row.label}>
            <th>{row.label}</th>
            <td data-ledger="height">{row.facts.height}</td>
            <td data-ledger="votes">{row.facts.votes}</td>
            <td>{tallyText(row.facts)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
