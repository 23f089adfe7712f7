/**
 * Browser-safe. The bulletin board's own count of the tally (page §10.3): every sealed vote's payload
 * counted in the tally's order (protocol §4), each block's votes kept only as their payloads' counts.
 * @module
 */
import type { Tally } from "../../protocol/schemas.ts";
import { rankTally } from "../../protocol/tally.ts";
import type { BlockVoteEntry } from "../api_client.ts";

/** The votes of one block read so far, in leaf order, and how many it holds. */
export type LoadedVotes = { entries: BlockVoteEntry[]; total: number };

/**
 * What the recount keeps of one block: how many votes its listing says it holds (`total`), how
 * many were read and counted, and the count of each payload among them.
 */
export type CountedBlock = {
  total: number;
  counted: number;
  payloads: ReadonlyMap<string, number>;
};

/** `into` with each vote of `entries` added to its payload's count. */
export function countPayloads(
  entries: readonly BlockVoteEntry[],
  into = new Map<string, number>(),
): Map<string, number> {
  for (const { vote } of entries) into.set(vote.payload, (into.get(vote.payload) ?? 0) + 1);
  return into;
}

/** True when every vote the block's listing holds was counted. */
export function isCounted(block: CountedBlock | undefined): block is CountedBlock {
  return block !== undefined && block.counted >= block.total;
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
  for (let h = 1; h <= height; h++) {
    const block = counted.get(h);
    if (!isCounted(block)) return null;
    for (const [payload, n] of block.payloads) counts.set(payload, (counts.get(payload) ?? 0) + n);
  }
  return rankTally(counts);
}
