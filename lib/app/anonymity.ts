// Browser-safe. Who could have cast each sealed ballot, computed exactly from the public record
// (protocol §8). Every key signs at most one ballot (its tag is unique) and every ballot has exactly
// one signer among its ring: ballots are variables, rings their domains, keys distinct values — an
// all-different constraint. A ring member is a *possible signer* of a ballot when some assignment
// of signers to all ballots at once is consistent with the record and gives it that ballot.
//
// Régin's all-different filtering decides this exactly, in time linear in the record after one
// maximum matching: Hopcroft–Karp matches every ballot to a key; a member k of ballot b, other than
// its matched key m, is possible exactly when k can hand its own ballot on along an alternating
// path that ends at an unused key, or that comes back to m (k and m in one strongly connected
// component). Everything is iterative (no recursion depth limit at tens of thousands of ballots).

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

/** The record in index form: ballot b may be signed by `domain[start[b] .. start[b + 1])`. */
type Graph = {
  ballots: number;
  keys: string[];
  start: Int32Array;
  domain: Int32Array;
};

/** A maximum matching: the key of each ballot and the ballot of each key, −1 for none. */
type Matching = { keyOf: Int32Array; ballotOf: Int32Array };

const NONE = -1;

/**
 * Possible signers of every ballot, exactly (see the module comment), given `reveals`. Throws
 * TypeError/RangeError for malformed input (duplicate or empty ballot ids, empty rings); answers
 * an {@link InconsistentAnalysis} when the record and the reveals admit no assignment.
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
 * Hopcroft–Karp maximum matching of ballots to keys within their domains: breadth-first layers
 * from the unmatched ballots, then vertex-disjoint augmenting paths found by an explicit-stack
 * depth-first search along the layers. O(E·√V).
 */
function hopcroftKarp(graph: Graph): Matching {
  const { ballots, start, domain } = graph;
  const keyOf = new Int32Array(ballots).fill(NONE);
  const ballotOf = new Int32Array(graph.keys.length).fill(NONE);
  // A greedy first pass matches most ballots at once.
  for (let b = 0; b < ballots; b++) {
    for (let i = start[b]; i < start[b + 1]; i++) {
      const k = domain[i];
      if (ballotOf[k] === NONE) {
        keyOf[b] = k;
        ballotOf[k] = b;
        break;
      }
    }
  }
  const INFINITE = 0x7fffffff;
  const layer = new Int32Array(ballots);
  const queue = new Int32Array(ballots);
  const next = new Int32Array(ballots);
  const stack = new Int32Array(ballots);
  for (;;) {
    let head = 0;
    let tail = 0;
    for (let b = 0; b < ballots; b++) {
      if (keyOf[b] === NONE) {
        layer[b] = 0;
        queue[tail++] = b;
      } else layer[b] = INFINITE;
    }
    let augmentable = false;
    while (head < tail) {
      const b = queue[head++];
      for (let i = start[b]; i < start[b + 1]; i++) {
        const holder = ballotOf[domain[i]];
        if (holder === NONE) augmentable = true;
        else if (layer[holder] === INFINITE) {
          layer[holder] = layer[b] + 1;
          queue[tail++] = holder;
        }
      }
    }
    if (!augmentable) return { keyOf, ballotOf };

    for (let b = 0; b < ballots; b++) next[b] = start[b];
    for (let root = 0; root < ballots; root++) {
      if (keyOf[root] !== NONE) continue;
      let depth = 0;
      stack[depth++] = root;
      while (depth > 0) {
        const b = stack[depth - 1];
        if (next[b] === start[b + 1]) {
          layer[b] = INFINITE; // a dead end for the rest of this phase
          depth--;
          continue;
        }
        const k = domain[next[b]++];
        const holder = ballotOf[k];
        if (holder === NONE) {
          // Flip the path: each ballot on the stack takes the key it last stepped through.
          for (let d = depth - 1; d >= 0; d--) {
            const on = stack[d];
            const key = domain[next[on] - 1];
            keyOf[on] = key;
            ballotOf[key] = on;
          }
          depth = 0;
        } else if (layer[holder] === layer[b] + 1) {
          stack[depth++] = holder;
        }
      }
    }
  }
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

/**
 * 1 for each key that is unused by the matching or can pass its ballot on, along alternating
 * paths, to an unused key: a breadth-first search backwards from the unused keys, where key k
 * leads back to the matched key of every ballot whose domain holds k.
 */
function reachesUnusedKey(graph: Graph, { keyOf, ballotOf }: Matching): Uint8Array {
  const ballotsOfKey = keyBallots(graph);
  const reached = new Uint8Array(graph.keys.length);
  const queue = new Int32Array(graph.keys.length);
  let head = 0;
  let tail = 0;
  for (let k = 0; k < graph.keys.length; k++) {
    if (ballotOf[k] === NONE) {
      reached[k] = 1;
      queue[tail++] = k;
    }
  }
  while (head < tail) {
    const k = queue[head++];
    for (let i = ballotsOfKey.start[k]; i < ballotsOfKey.start[k + 1]; i++) {
      const m = keyOf[ballotsOfKey.ballots[i]];
      if (!reached[m]) {
        reached[m] = 1;
        queue[tail++] = m;
      }
    }
  }
  return reached;
}

/** For each key, the ballots whose domain holds it (compressed rows). */
function keyBallots(graph: Graph): { start: Int32Array; ballots: Int32Array } {
  const start = new Int32Array(graph.keys.length + 1);
  for (const k of graph.domain) start[k + 1]++;
  for (let k = 0; k < graph.keys.length; k++) start[k + 1] += start[k];
  const fill = start.slice(0, graph.keys.length);
  const ballots = new Int32Array(graph.domain.length);
  for (let b = 0; b < graph.ballots; b++) {
    for (let i = graph.start[b]; i < graph.start[b + 1]; i++) {
      ballots[fill[graph.domain[i]]++] = b;
    }
  }
  return { start, ballots };
}

/**
 * Strongly connected components (Tarjan, with an explicit stack) of the key graph: a matched key
 * m leads to every other key in its ballot's domain (the ballot could switch to it, freeing m).
 * Unused keys lead nowhere. Answers the component number of each key.
 */
function keyComponents(graph: Graph, { ballotOf }: Matching): Int32Array {
  const n = graph.keys.length;
  const index = new Int32Array(n).fill(NONE);
  const low = new Int32Array(n);
  const component = new Int32Array(n).fill(NONE);
  const onStack = new Uint8Array(n);
  const tarjan = new Int32Array(n);
  const callKey = new Int32Array(n);
  const callNext = new Int32Array(n);
  const callEnd = new Int32Array(n);
  let tarjanTop = 0;
  let depth = 0;
  let counter = 0;
  let components = 0;
  const enter = (k: number) => {
    index[k] = low[k] = counter++;
    tarjan[tarjanTop++] = k;
    onStack[k] = 1;
    const b = ballotOf[k];
    callKey[depth] = k;
    callNext[depth] = b === NONE ? 0 : graph.start[b];
    callEnd[depth] = b === NONE ? 0 : graph.start[b + 1];
    depth++;
  };
  for (let root = 0; root < n; root++) {
    if (index[root] !== NONE) continue;
    enter(root);
    while (depth > 0) {
      const top = depth - 1;
      const k = callKey[top];
      if (callNext[top] < callEnd[top]) {
        const w = graph.domain[callNext[top]++];
        if (index[w] === NONE) enter(w);
        else if (onStack[w]) low[k] = Math.min(low[k], index[w]);
        continue;
      }
      depth--;
      if (low[k] === index[k]) {
        let w: number;
        do {
          w = tarjan[--tarjanTop];
          onStack[w] = 0;
          component[w] = components;
        } while (w !== k);
        components++;
      }
      if (depth > 0) low[callKey[depth - 1]] = Math.min(low[callKey[depth - 1]], low[k]);
    }
  }
  return component;
}
