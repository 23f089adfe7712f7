/**
 * Browser-safe. The bulletin board's own count of the tally (page §10.3): every sealed vote's payload
 * counted in the tally's order (protocol §4).
 * @module
 */
import type { Tally } from "../../protocol/schemas.ts";
import { tallyOf } from "../../protocol/tally.ts";
import type { BlockVoteEntry } from "../api_client.ts";

/** The votes of one block read so far, in leaf order, and how many it holds. */
export type LoadedVotes = { entries: BlockVoteEntry[]; total: number };

/**
 * The tally recounted from every sealed vote: empty at height 0, null while the tally or any
 * block's votes are not all loaded.
 */
export function recount(
  height: number | null,
  tally: Tally | null,
  votes: ReadonlyMap<number, LoadedVotes>,
): { payload: string; count: number }[] | null {
  if (height === 0) return [];
  if (height === null || tally === null) return null;
  const payloads: string[] = [];
  for (let h = 1; h <= height; h++) {
    const loaded = votes.get(h);
    if (!loaded || loaded.entries.length < loaded.total) return null;
    for (const e of loaded.entries) payloads.push(e.vote.payload);
  }
  return tallyOf(payloads);
}
