/**
 * Browser-safe. The set a timing observer can narrow a ballot to (protocol §7.4): the ballots of
 * its group sealed in the same block. Anyone who knows when a phone sent its vote, and sees which
 * block took it, is left with those.
 * @module
 */
import type { BlockVoteEntry } from "../api_client.ts";

/** How many of `entries` (one block's votes) were signed over `ring`, key for key. */
export function ballotsOfRing(entries: readonly BlockVoteEntry[], ring: readonly string[]): number {
  const same = (keys: readonly string[]) =>
    keys.length === ring.length && keys.every((key, i) => key === ring[i]);
  return entries.filter((entry) => same(entry.vote.publicKeys)).length;
}

/** The sentence added to the anonymity line of a ballot of a round with phases. */
export function sealedWithText(k: number, height: number): string {
  return `Sealed with ${k} ${k === 1 ? "ballot" : "ballots"} of your group in block ${height}, ` +
    "yours included: the set anyone who knows when you sent can narrow you to.";
}
