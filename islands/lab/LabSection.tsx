/**
 * A section of the attack lab: a heading, one paragraph saying what a green card means, and the
 * cards in a grid.
 * @module
 */
import type { ComponentChildren } from "preact";

/** A titled grid of lab cards. */
export default function LabSection(
  { title, intro, children }: { title: string; intro: string; children: ComponentChildren },
) {
  return (
    <section class="lab-section">
      <h2>{title}</h2>
      <p class="lab-intro">{intro}</p>
      <div class="lab-grid">{children}</div>
    </section>
  );
}
