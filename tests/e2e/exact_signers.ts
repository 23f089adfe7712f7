// An exact count of possible signers, written apart from lib/client/anonymity: a key k is a
// possible signer of ballot b when some matching of every ballot to a distinct key of its ring
// gives b to k. Found by plain augmenting paths (Kuhn), one matching per (ballot, key) asked.
import { analyseAnonymity } from "../../lib/client/anonymity/anonymity.ts";
import { type RandomIndex, sampleRing } from "../../lib/client/voter/voters.ts";

/** A ballot of the public record: its id and its ring's keys. */
export type RecordBallot = { id: string; ring: string[] };

/** True when every ballot but `fixed` can take a distinct key of its ring other than `taken`. */
function matchesAll(ballots: readonly RecordBallot[], fixed: number, taken: string): boolean {
  const owner = new Map<string, number>([[taken, fixed]]);
  const augment = (b: number, seen: Set<string>): boolean => {
    for (const key of ballots[b].ring) {
      if (seen.has(key) || key === taken) continue;
      seen.add(key);
      const holder = owner.get(key);
      if (holder === undefined || augment(holder, seen)) {
        owner.set(key, b);
        return true;
      }
    }
    return false;
  };
  return ballots.every((_, b) => b === fixed || augment(b, new Set()));
}

/** Every ballot's possible signers, exactly, by brute matching. */
export function exactSigners(ballots: readonly RecordBallot[]): Map<string, string[]> {
  return new Map(ballots.map((ballot, b) => [
    ballot.id,
    [...new Set(ballot.ring)].filter((key) => matchesAll(ballots, b, key)),
  ]));
}

/** A room's table: fewest possible signers, the median, how many ballots are below 8 and at 1. */
export function anonymityTable(counts: readonly number[]) {
  const sorted = [...counts].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return {
    ballots: sorted.length,
    min: sorted[0],
    median,
    below8: sorted.filter((n) => n < 8).length,
    at1: sorted.filter((n) => n === 1).length,
  };
}

/**
 * The same staggered room under the specified ring rule (protocol §2.8 before groups): phone i
 * registers key i and votes over 8 keys drawn from the keys registered so far, its own forced in;
 * the first 7 wait until 8 keys exist. Answers the possible-signer counts by the project's lens
 * and by the matching above.
 */
export function specifiedRuleRoom(phones: number, randomIndex: RandomIndex) {
  const ballots: RecordBallot[] = [];
  for (let id = 1; id <= phones; id++) {
    const total = Math.max(id, 8);
    const ring = sampleRing({ total, ringSize: 8, ownId: id }, randomIndex);
    ballots.push({ id: `b${id}`, ring: ring.map((k) => `k${k}`) });
  }
  const lens = analyseAnonymity(ballots);
  if (!lens.consistent) throw new Error("the specified-rule room is inconsistent");
  const exact = exactSigners(ballots);
  return {
    lens: lens.ballots.map((b) => b.effectiveAnonymity),
    exact: ballots.map((b) => exact.get(b.id)!.length),
  };
}
