import type { RingLine as Line } from "../lib/app/anonymity_view.ts";

/**
 * The voting panel's ring line: who the ballot hides among, then its effective anonymity — red,
 * with a plain-words warning, when the public record leaves fewer than 4 possible signers.
 */
export default function RingLine(
  { line, effectiveAnonymity }: { line: Line; effectiveAnonymity: number | null },
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
        {line.anonymity ?? "Working out, from every sealed ballot, how many could have cast it…"}
      </p>
      {weak && <p class="ring-warning status-red" role="alert">{line.warning}</p>}
    </div>
  );
}
