/**
 * The voting panel's ring line: who the ballot hides among, then its effective anonymity, red with
 * a plain-words warning below 4 possible signers.
 * @module
 */
import type { RingLine as Line } from "../../lib/client/anonymity/anonymity_view.ts";

/**
 * The voting panel's ring line: who the ballot hides among, then its effective anonymity — red,
 * with a plain-words warning, when the public record leaves fewer than 4 possible signers.
 */
export default function RingLine(
  { line, effectiveAnonymity, problem = null }: {
    line: Line;
    effectiveAnonymity: number | null;
    /** Why the anonymity could not be worked out, if it could not. */
    problem?: string | null;
  },
) {
  const weak = line.warning !== null;
  return (
    <div
      class={`ring-line${weak ? " ring-weak" : ""}`}
      data-kind="ring"
      data-effective-anonymity={effectiveAnonymity ?? undefined}
    >
      <p class="ring-hidden">{line.hiddenAmong}</p>
      <p class={`ring-anonymity${weak ? " status-red" : ""}`}>
        {line.anonymity ?? (problem !== null
          ? `Its effective anonymity could not be worked out: ${problem}`
          : "Working out, from every sealed ballot, how many could have cast it…")}
      </p>
      {weak && <p class="ring-warning status-red" role="alert">{line.warning}</p>}
    </div>
  );
}
