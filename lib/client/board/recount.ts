/**
 * Browser-safe. The bulletin board's own count of the tally (page §10.3): every sealed vote's payload
 * counted in the tally's order (protocol §4), each block's votes kept only as their payloads' counts,
 * and each block's listing held to the size its header commits to (never the listing's own total).
 * @module
 */
import type { Tally } from "../../protocol/schemas.ts";
import { rankTally } from "../../protocol/tally.ts";
import type { BlockVoteEntry } from "../api_client.ts";

/** The votes of one block read so far, in leaf order, and how many it holds. */
export type LoadedVotes = { entries: BlockVoteEntry[]; total: number };

/**
 * What the recount keeps of one block: how many votes its header commits to (`size`; null when the
 * header does not match its hash or its link), how many its listing says it holds (`total`), how
 * many were read and counted, and the count of each payload among them.
 */
export type CountedBlock = {
  size: number | null;
  total: number;
  counted: number;
  payloads: ReadonlyMap<string, number>;
};

/**
 * A block whose listing is not the votes its header commits to: the first such block's height,
 * what its header says (`size`, null when the header itself does not check), and what its listing
 * said (`total`) and held (`counted`).
 */
export type RecountProblem = {
  height: number;
  size: number | null;
  total: number;
  counted: number;
};

/** `into` with each vote of `entries` added to its payload's count. */
export function countPayloads(
  entries: readonly BlockVoteEntry[],
  into = new Map<string, number>(),
): Map<string, number> {
  for (const { vote } of entries) into.set(vote.payload, (into.get(vote.payload) ?? 0) + 1);
  return into;
}

/**
 * True when the block was counted: its listing read to its end, or to one vote past its header's
 * size. A sealed block never changes, so a block counted is not read again, whatever it held.
 */
export function isCounted(block: CountedBlock | undefined): block is CountedBlock {
  return block !== undefined;
}

/**
 * The first block up to `height` whose listing is not what its header commits to (votes missing
 * or added, a total other than the size, or a header that does not check); null when there is none.
 */
export function recountProblem(
  height: number | null,
  counted: ReadonlyMap<number, CountedBlock>,
): RecountProblem | null {
  // The blocks counted, never the heights claimed: a height of 2^53 − 1 is no loop to walk.
  const heights = [...counted.keys()].filter((h) => h >= 1 && h <= (height ?? 0));
  for (const h of heights.sort((a, b) => a - b)) {
    const problem = blockProblem(h, counted.get(h)!);
    if (problem !== null) return problem;
  }
  return null;
}

/** Block `h`'s problem when its listing is not what its header commits to; null otherwise. */
export function blockProblem(h: number, block: CountedBlock): RecountProblem | null {
  const { size, total, counted } = block;
  return size === null || counted !== size || total !== size
    ? { height: h, size, total, counted }
    : null;
}

/**
 * The tally recounted from every sealed vote: empty at height 0, null while the tally or any
 * block's votes are not all counted.
 */
export function recount(
  height: number | null,
  tally: Tally | null,
  counted: ReadonlyMap<number, CountedBlock>,
): { payload: string; count: number }[] | null {
  if (height === 0) return [];
  if (height === null || tally === null) return null;
  const counts = new Map<string, number>();
  // Ends at the first block not counted: never past the blocks counted, whatever the height.
  if (counted.size < height) return null;
  for (let h = 1; h <= height; h++) {
    const block = counted.get(h);
    if (!isCounted(block)) return null;
    for (const [payload, n] of block.payloads) counts.set(payload, (counts.get(payload) ?? 0) + n);
  }
  return rankTally(counts);
}
