/**
 * The board's chain as a picture, with the browser's verdict on every block hash and link, and the
 * way to earlier blocks.
 * @module
 */
import ChainStrip from "./ChainStrip.tsx";
import type { SectionProps } from "./section.ts";

/** Heading, one-line verdict, the way to earlier blocks, and the strip of blocks. */
export default function ChainSection({ bulletin }: SectionProps) {
  const blocks = bulletin.blocks.value;
  const checks = bulletin.checks.value;
  const broken = [...checks.values()].filter((c) => c.link === "broken" || !c.hashOk);
  return (
    <section class="bulletin-section" aria-labelledby="chain-title">
      <h2 id="chain-title">Chain</h2>
      <p class={broken.length === 0 ? "summary-ok" : "summary-bad"}>
        {broken.length === 0
          ? "Every block's hash matches its fields and every link matches the block before."
          : `${broken.length} block(s) fail a check: ` +
            broken.map((c) => `#${c.height}`).join(", ")}
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
