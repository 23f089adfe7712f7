/**
 * The frame of one voter panel on the voting page: the voter's name, then its sections.
 * @module
 */
import type { ComponentChildren } from "preact";

/** The frame of one voter panel: the voter's name, then its sections. */
export default function VoterCard(
  { name, children }: { name: string; children: ComponentChildren },
) {
  return (
    <section class="voter" data-voter={name} aria-label={name}>
      <h2 class="voter-name">{name}</h2>
      {children}
    </section>
  );
}
