/**
 * The board's tally as bars, one per payload, red where the served count differs from the
 * browser's recount; a count opens the list of its votes.
 * @module
 */
import type { TallyRow } from "../../lib/client/board/record_checks.ts";

/** Props of {@link TallyBars}. */
export type TallyBarsProps = {
  rows: readonly TallyRow[];
  /** Payload whose votes are listed, if any. */
  selected: string | null;
  /** Id of the element listing the selected payload's votes. */
  listId: string;
  onSelect(payload: string): void;
};

/**
 * The tally as horizontal bars, one per payload, scaled to the largest count; each count links
 * to the list of the votes that make it up. A row whose served count differs from the browser's
 * recount is red and shows both.
 */
export default function TallyBars({ rows, selected, listId, onSelect }: TallyBarsProps) {
  const max = Math.max(1, ...rows.map((r) => Math.max(r.served, r.counted ?? 0)));
  return (
    <ul class="tally">
      {rows.map((row) => (
        <li
          key={row.payload}
          class={`tally-row ${row.ok ? "tally-ok" : "tally-bad"}${
            selected === row.payload ? " tally-selected" : ""
          }`}
          data-payload={row.payload}
          data-ok={String(row.ok)}
        >
          <span class="tally-payload" title={row.payload}>{row.payload}</span>
          <span class="tally-bar" aria-hidden="true">
            <span class="tally-fill" style={{ width: `${(100 * row.served) / max}%` }} />
          </span>
          <a
            class="tally-count"
            href={`#${listId}`}
            onClick={() => onSelect(row.payload)}
            aria-label={`${row.served} votes for ${row.payload}: list them`}
          >
            {row.served}
          </a>
          {row.counted !== null && !row.ok && (
            <span class="tally-recount">recounted: {row.counted}</span>
          )}
        </li>
      ))}
    </ul>
  );
}
