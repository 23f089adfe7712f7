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

/**
 * The count of ballots of group `group` in block `height`, from the block's per-group counts
 * (`GET /api/rounds/{r}/block/id/{h}/groups`): the vote itself is one of them, and no group holds
 * more ballots than keys, so a count outside 1 to the ring's size, or an answer about another
 * block, is refused (thrown) rather than shown.
 */
export function sealedWithCount(
  served: { height: number; counts: readonly number[] },
  { height, group, ring }: { height: number; group: number; ring: readonly string[] },
): number {
  if (served.height !== height) {
    throw new Error(`the server answered for block ${served.height}, not block ${height}`);
  }
  const k = served.counts[group];
  if (!Number.isSafeInteger(k) || k < 1 || k > ring.length) {
    throw new Error(
      `the server counts ${k} ballots of group ${group} in block ${height}, ` +
        `not 1 to ${ring.length}: this vote is one of them`,
    );
  }
  return k;
}
