/**
 * The board's chain as a picture, with the browser's verdict on every block hash and link, and the
 * way to earlier blocks.
 * @module
 */
import { failsCheck } from "../../lib/client/board/record_checks.ts";
import ChainStrip from "./ChainStrip.tsx";
import type { SectionProps } from "./section.ts";

/** Heading, one-line verdict, the way to earlier blocks, and the strip of blocks. */
export default function ChainSection({ bulletin }: SectionProps) {
  const blocks = bulletin.blocks.value;
  const checks = bulletin.checks.value;
  const broken = [...checks.values()].filter(failsCheck);
  const height = bulletin.height.value;
  const top = blocks.length === 0 ? null : blocks[blocks.length - 1].height;
  // The blocks served must reach the chain's height: a list that stops short (or is empty) hides
  // the blocks above it.
  const short = height !== null && (top === null || top < height);
  return (
    <section class="bulletin-section" aria-labelledby="chain-title">
      <h2 id="chain-title">Chain</h2>
      <p class={broken.length === 0 && !short ? "summary-ok" : "summary-bad"}>
        {broken.length > 0
          ? `${broken.length} block(s) fail a check: ` +
            broken.map((c) => `#${c.height}`).join(", ")
          : short
          ? `The blocks served stop at ${
            top === null ? "none" : `block ${top}`
          }, below the chain's height ${height}.`
          : "Every block's hash matches its fields and every link matches the block before."}
      </p>
      {(blocks[0]?.height ?? 0) > 0 && (
        <button type="button" onClick={bulletin.loadEarlier}>Earlier blocks</button>
      )}
      <ChainStrip
        blocks={blocks}
        checks={checks}
        selected={bulletin.selected.value}
        onSelect={bulletin.selectBlock}
      />
    </section>
  );
}
