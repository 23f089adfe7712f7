/**
 * Browser-safe. Who could have cast each sealed ballot, computed exactly from the public record
 * (protocol §8) as an all-different constraint: possible signers, certain signers, inconsistency.
 * @module
 */
import {
  type Graph,
  hopcroftKarp,
  keyComponents,
  type Matching,
  NONE,
  reachesUnusedKey,
} from "./matching.ts";

/** A sealed ballot: its vote id and its ring (hex public keys). */
export type RingBallot = { id: string; ring: readonly string[] };

/** Outside knowledge: key `key` cast ballot `ballot` (a voter showed their ballot). */
export type Reveal = { key: string; ballot: string };

/** One ballot's anonymity: the members that could have cast it, in ring order, and how many. */
export type BallotAnonymity = {
  id: string;
  ring: string[];
  possibleSigners: string[];
  effectiveAnonymity: number;
};

/** A key that signed some ballot in every consistent assignment; `ballots` are the candidates. */
export type CertainSigner = { key: string; ballots: string[] };

/** The analysis of a consistent record: every ballot, in input order, and the certain signers. */
export type ConsistentAnalysis = {
  consistent: true;
  ballots: BallotAnonymity[];
  certainSigners: CertainSigner[];
};

/**
 * A record (with its reveals) that no assignment satisfies: `problem` says why in plain words;
 * `ballots` and `keys` are the ballots involved and the only keys they could share.
 */
export type InconsistentAnalysis = {
  consistent: false;
  problem: string;
  ballots: string[];
  keys: string[];
};

/** What {@link analyseAnonymity} answers. */
export type AnonymityAnalysis = ConsistentAnalysis | InconsistentAnalysis;

/**
 * Possible signers of every ballot, exactly, given `reveals`: a member is possible when some
 * assignment of signers to all ballots at once, one ballot per key, gives it that ballot. Régin's
 * all-different filtering decides this in time linear in the record after one maximum matching:
 * Hopcroft–Karp matches every ballot to a key; a member k of ballot b, other than its matched key
 * m, is possible exactly when k can hand its own ballot on along an alternating path that ends at
 * an unused key or comes back to m (one strongly connected component). Iterative throughout, so
 * tens of thousands of ballots need no recursion depth. Throws TypeError/RangeError for malformed
 * input (duplicate or empty ballot ids, empty rings); answers an {@link InconsistentAnalysis} when
 * the record and the reveals admit no assignment.
 */
export function analyseAnonymity(
  ballots: readonly RingBallot[],
  { reveals = [] }: { reveals?: readonly Reveal[] } = {},
): AnonymityAnalysis {
  const rings = ballots.map(checkedRing);
  const byId = ballotIndex(ballots);
  const revealed = revealedKeys(rings, { byId, reveals, ballots });
  if ("problem" in revealed) return revealed.problem;
  const graph = indexGraph(rings, revealed.keyOf);
  const matching = hopcroftKarp(graph);
  const unmatched = matching.keyOf.indexOf(NONE);
  if (unmatched !== NONE) {
    return hallViolation(graph, matching, { unmatched, ballots, reveals });
  }
  const freeReaching = reachesUnusedKey(graph, matching);
  const component = keyComponents(graph, matching);

  const possible: number[][] = [];
  for (let b = 0; b < graph.ballots; b++) {
    const m = matching.keyOf[b];
    const keys: number[] = [];
    for (let i = graph.start[b]; i < graph.start[b + 1]; i++) {
      const k = graph.domain[i];
      if (k === m || freeReaching[k] === 1 || component[k] === component[m]) keys.push(k);
    }
    possible.push(keys);
  }

  const candidates = new Map<number, string[]>();
  possible.forEach((keys, b) => {
    for (const k of keys) {
      if (freeReaching[k] === 1) continue;
      const list = candidates.get(k);
      if (list) list.push(ballots[b].id);
      else candidates.set(k, [ballots[b].id]);
    }
  });

  return {
    consistent: true,
    ballots: ballots.map((ballot, b) => {
      const allowed = new Set(possible[b].map((k) => graph.keys[k]));
      const possibleSigners = rings[b].filter((key) => allowed.has(key));
      return {
        id: ballot.id,
        ring: rings[b],
        possibleSigners,
        effectiveAnonymity: possibleSigners.length,
      };
    }),
    certainSigners: [...candidates].map(([k, ids]) => ({ key: graph.keys[k], ballots: ids })),
  };
}

/** A ballot whose effective anonymity differs between two analyses of the same record. */
export type AnonymityChange = { id: string; before: number; after: number };

/** Ballots whose effective anonymity changed from `before` to `after`, lowest `after` first. */
export function anonymityChanges(
  before: ConsistentAnalysis,
  after: ConsistentAnalysis,
): AnonymityChange[] {
  const old = new Map(before.ballots.map((b) => [b.id, b.effectiveAnonymity]));
  const changes: AnonymityChange[] = [];
  for (const b of after.ballots) {
    const was = old.get(b.id);
    if (was !== undefined && was !== b.effectiveAnonymity) {
      changes.push({ id: b.id, before: was, after: b.effectiveAnonymity });
    }
  }
  return changes.sort((x, y) => x.after - y.after || (x.id < y.id ? -1 : 1));
}

/** The ring without repeated members (a verified ring has none); throws for a malformed ballot. */
function checkedRing(ballot: RingBallot, position: number): string[] {
  if (typeof ballot?.id !== "string" || ballot.id === "") {
    throw new TypeError(`ballots[${position}].id must be a non-empty string`);
  }
  if (!Array.isArray(ballot.ring) || ballot.ring.some((k) => typeof k !== "string")) {
    throw new TypeError(`ballots[${position}].ring must be an array of strings`);
  }
  if (ballot.ring.length === 0) throw new RangeError(`Ballot "${ballot.id}" has an empty ring`);
  return [...new Set(ballot.ring)];
}

/** Ballot id → position; throws RangeError on a repeated id. */
function ballotIndex(ballots: readonly RingBallot[]): Map<string, number> {
  const byId = new Map<string, number>();
  ballots.forEach((ballot, b) => {
    if (byId.has(ballot.id)) throw new RangeError(`Ballot "${ballot.id}" is listed twice`);
    byId.set(ballot.id, b);
  });
  return byId;
}

/** The revealed key of each ballot (by position), or the inconsistency the reveals contain. */
function revealedKeys(
  rings: string[][],
  { byId, reveals, ballots }: {
    byId: Map<string, number>;
    reveals: readonly Reveal[];
    ballots: readonly RingBallot[];
  },
): { keyOf: Map<number, string> } | { problem: InconsistentAnalysis } {
  const keyOf = new Map<number, string>();
  const ballotOfKey = new Map<string, string>();
  const refuse = (problem: string, ids: string[], keys: string[]) => ({
    problem: { consistent: false as const, problem, ballots: ids, keys },
  });
  for (const { key, ballot } of reveals) {
    const b = byId.get(ballot);
    if (b === undefined) return refuse(`Ballot ${ballot} is not in the record`, [ballot], [key]);
    if (!rings[b].includes(key)) {
      return refuse(
        `Key ${key} is revealed as the signer of ballot ${ballot}, but it is not in that ring`,
        [ballot],
        [key],
      );
    }
    const other = keyOf.get(b);
    if (other !== undefined && other !== key) {
      return refuse(
        `Ballot ${ballot} is revealed as cast by two keys, ${other} and ${key}`,
        [ballot],
        [other, key],
      );
    }
    const elsewhere = ballotOfKey.get(key);
    if (elsewhere !== undefined && elsewhere !== ballot) {
      return refuse(
        `Key ${key} is revealed as the signer of two ballots, ${elsewhere} and ${ballot}, ` +
          "but a key signs at most one ballot",
        [elsewhere, ballot],
        [key],
      );
    }
    keyOf.set(b, key);
    ballotOfKey.set(key, ballots[b].id);
  }
  return { keyOf };
}

/** Keys numbered in order of first appearance; a revealed ballot's domain is its revealed key. */
function indexGraph(rings: string[][], revealed: Map<number, string>): Graph {
  const keyIndex = new Map<string, number>();
  const keys: string[] = [];
  const numberOf = (key: string) => {
    let k = keyIndex.get(key);
    if (k === undefined) {
      k = keys.length;
      keyIndex.set(key, k);
      keys.push(key);
    }
    return k;
  };
  const start = new Int32Array(rings.length + 1);
  let total = 0;
  rings.forEach((ring, b) => {
    total += revealed.has(b) ? 1 : ring.length;
    start[b + 1] = total;
  });
  const domain = new Int32Array(total);
  rings.forEach((ring, b) => {
    const only = revealed.get(b);
    // Every ring member gets a number, so that keys outside every domain still count as unused.
    const numbers = ring.map(numberOf);
    if (only !== undefined) domain[start[b]] = numberOf(only);
    else domain.set(numbers, start[b]);
  });
  return { ballots: rings.length, keys, start, domain };
}

/**
 * The inconsistency when `unmatched` has no key left: the ballots reachable from it along
 * alternating paths have, together, one key fewer than their number (Hall's condition fails).
 */
function hallViolation(
  graph: Graph,
  { ballotOf }: Matching,
  { unmatched, ballots, reveals }: {
    unmatched: number;
    ballots: readonly RingBallot[];
    reveals: readonly Reveal[];
  },
): InconsistentAnalysis {
  const seenBallot = new Uint8Array(graph.ballots);
  const seenKey = new Uint8Array(graph.keys.length);
  const queue = [unmatched];
  seenBallot[unmatched] = 1;
  const keys: number[] = [];
  while (queue.length > 0) {
    const b = queue.pop()!;
    for (let i = graph.start[b]; i < graph.start[b + 1]; i++) {
      const k = graph.domain[i];
      if (seenKey[k]) continue;
      seenKey[k] = 1;
      keys.push(k);
      const holder = ballotOf[k];
      if (holder !== NONE && !seenBallot[holder]) {
        seenBallot[holder] = 1;
        queue.push(holder);
      }
    }
  }
  const ids = ballots.filter((_, b) => seenBallot[b] === 1).map((b) => b.id);
  const cause = reveals.length > 0 ? ", once the revealed signers are taken into account" : "";
  return {
    consistent: false,
    problem: `${ids.length} ballots (${ids.join(", ")}) can only have been cast by ` +
      `${keys.length} distinct ${keys.length === 1 ? "key" : "keys"}${cause}, ` +
      "but each key signs at most one ballot",
    ballots: ids,
    keys: keys.map((k) => graph.keys[k]),
  };
}
