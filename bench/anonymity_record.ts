// A record for the anonymity benchmarks: `ballots` sealed ballots over `keys` registered keys, each
// cast by a different key with a ring of that key plus uniformly chosen others, sorted like the
// page sorts a ring. Keys are 64 hex characters, as on the wire; a fixed seed makes every run the
// same record.
import type { RingBallot } from "../lib/client/anonymity/anonymity.ts";

/** The benchmark's key directory: `keys` keys of 64 hex characters, in id order. */
export function benchDirectory(keys: number): string[] {
  return Array.from({ length: keys }, (_, i) => i.toString(16).padStart(8, "0").repeat(8));
}

/** The benchmark's record over {@link benchDirectory}, built from a seeded generator. */
export function benchRecord(
  { ballots, keys, ringSize = 8, seed = 20261123 }: {
    ballots: number;
    keys: number;
    ringSize?: number;
    seed?: number;
  },
): RingBallot[] {
  let state = seed >>> 0 || 1;
  const random = (n: number) => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state % n;
  };
  const directory = benchDirectory(keys);
  const signers = directory.map((_, i) => i);
  for (let i = signers.length - 1; i > 0; i--) {
    const j = random(i + 1);
    [signers[i], signers[j]] = [signers[j], signers[i]];
  }
  return Array.from({ length: ballots }, (_, b) => {
    const ring = new Set([signers[b]]);
    while (ring.size < ringSize) ring.add(random(keys));
    return {
      id: `vote-${String(b).padStart(6, "0")}`,
      ring: [...ring].sort((x, y) => x - y).map((k) => directory[k]),
    };
  });
}

/** Median of `samples`. */
export function median(samples: number[]): number {
  const sorted = samples.slice().sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * Times, interleaved, reading the record's JSON (the baseline: what any page must do with it) and
 * `analyse` on the parsed record; answers both medians in ms.
 */
export function timeAgainstParse(
  record: RingBallot[],
  { rounds, analyse }: { rounds: number; analyse: (ballots: RingBallot[]) => unknown },
): { parseMs: number; analysisMs: number } {
  const wire = JSON.stringify(record);
  const parse: number[] = [];
  const analysis: number[] = [];
  for (let i = 0; i < rounds; i++) {
    let started = performance.now();
    const parsed = JSON.parse(wire) as RingBallot[];
    parse.push(performance.now() - started);
    started = performance.now();
    analyse(parsed);
    analysis.push(performance.now() - started);
  }
  return { parseMs: median(parse), analysisMs: median(analysis) };
}
