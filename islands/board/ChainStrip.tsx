/**
 * The board's chain as a strip of blocks, each with the browser's verdict on its hash and on its
 * link to the block before; a click selects a block.
 * @module
 */
import type { BlockRecord } from "../../lib/protocol/schemas.ts";
import type { BlockCheck } from "../../lib/client/board/record_checks.ts";
import Hex from "./Hex.tsx";

/** Props of {@link ChainStrip}. */
export type ChainStripProps = {
  /** Loaded blocks, ascending by height. */
  blocks: readonly BlockRecord[];
  /** The browser's checks of those blocks, by height. */
  checks: ReadonlyMap<number, BlockCheck>;
  /** Height of the selected block (the one chosen on the board), if any. */
  selected: number | null;
  onSelect(height: number): void;
};

const LINK_WORDS = { ok: "links", broken: "does not link", unknown: "not checked" } as const;

/**
 * The chain as a picture: blocks left to right (height, time, size, short hash), each preceded by
 * its link to the block before it, coloured by the browser's own check of `prev_hash`; a block
 * whose hash does not match its fields is framed red.
 */
export default function ChainStrip({ blocks, checks, selected, onSelect }: ChainStripProps) {
  return (
    <ol class="chain" aria-label="Blocks, oldest first">
      {blocks.map((block) => {
        const check = checks.get(block.height);
        const link = check?.link ?? "unknown";
        const hashOk = check?.hashOk;
        const verdict = hashOk === undefined ? "block-checking" : hashOk ? "block-ok" : "block-bad";
        return (
          <li class="chain-item" key={block.height}>
            <span
              class={`chain-link link-${link}`}
              data-link={link}
              data-height={block.height}
              title={check?.reason}
              role="img"
              aria-label={`Block ${block.height} ${LINK_WORDS[link]} to the previous block`}
            />
            <button
              type="button"
              class={`chain-block ${verdict}${selected === block.height ? " block-selected" : ""}`}
              data-height={block.height}
              data-hash-ok={hashOk === undefined ? "checking" : String(hashOk)}
              aria-pressed={selected === block.height}
              title={hashOk === undefined
                ? "Checking the hash against the block's fields…"
                : hashOk
                ? "Hash matches the block's fields"
                : `Hash does not match the block's fields (computed ${check?.computedHash})`}
              onClick={() => onSelect(block.height)}
            >
              <span class="block-height">#{block.height}</span>
              <span class="block-time">{new Date(block.timestamp).toLocaleTimeString()}</span>
              <span class="block-size">
                {block.size} {block.size === 1 ? "vote" : "votes"}
              </span>
              <Hex value={block.hash} />
            </button>
          </li>
        );
      })}
    </ol>
  );
}
