/**
 * Browser-safe. The graph algorithms of the anonymity analysis over the record in index form:
 * Hopcroft–Karp maximum matching of ballots to keys, the keys that reach an unused key, and the
 * strongly connected components of the key graph. Iterative, with typed arrays.
 * @module
 */

/** The record in index form: ballot b may be signed by `domain[start[b] .. start[b + 1])`. */
export type Graph = {
  ballots: number;
  keys: string[];
  start: Int32Array;
  domain: Int32Array;
};

/** A maximum matching: the key of each ballot and the ballot of each key, −1 for none. */
export type Matching = { keyOf: Int32Array; ballotOf: Int32Array };

/** No key, or no ballot. */
export const NONE = -1;

/**
 * Hopcroft–Karp maximum matching of ballots to keys within their domains: breadth-first layers
 * from the unmatched ballots, then vertex-disjoint augmenting paths found by an explicit-stack
 * depth-first search along the layers. O(E·√V).
 */
export function hopcroftKarp(graph: Graph): Matching {
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
 * 1 for each key that is unused by the matching or can pass its ballot on, along alternating
 * paths, to an unused key: a breadth-first search backwards from the unused keys, where key k
 * leads back to the matched key of every ballot whose domain holds k.
 */
export function reachesUnusedKey(graph: Graph, { keyOf, ballotOf }: Matching): Uint8Array {
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
export function keyComponents(graph: Graph, { ballotOf }: Matching): Int32Array {
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
