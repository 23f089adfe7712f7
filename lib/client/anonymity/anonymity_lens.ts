/**
 * Browser-safe. One job of the anonymity lens, as a page hands it to its worker: rings, reveals and
 * the key directory in; the analysis with and without the reveals, and the decoy-use test out. On
 * the way to the worker and back every key is an index into one list of the record's keys, so a
 * key met in many rings crosses once and each side holds one copy of it, not one per ring.
 * @module
 */
import {
  analyseAnonymity,
  type AnonymityAnalysis,
  type AnonymityChange,
  anonymityChanges,
  type BallotAnonymity,
  type InconsistentAnalysis,
  type Reveal,
  type RingBallot,
} from "./anonymity.ts";
import { type DecoyUse, decoyUse, type KeyUse } from "./decoy_use.ts";

/** What a page asks: `seq` lets it drop answers to requests it has since replaced. */
export type LensRequest = {
  seq: number;
  ballots: RingBallot[];
  reveals: Reveal[];
  /** The key directory in id order (id 1 first), for the decoy-use test; null to skip the test. */
  directory: readonly string[] | null;
};

/** The lens over one record: `revealed` is null when there are no reveals. */
export type LensResult = {
  seq: number;
  base: AnonymityAnalysis;
  revealed: AnonymityAnalysis | null;
  /** Ballots whose effective anonymity the reveals lowered, lowest first. */
  changes: AnonymityChange[];
  /** Null when the request carried no directory. */
  decoy: DecoyUse | null;
};

/** Runs one lens job; throws as {@link analyseAnonymity} does on malformed input. */
export function runLens(request: LensRequest): LensResult {
  const { seq, ballots, reveals, directory } = request;
  const base = analyseAnonymity(ballots);
  const revealed = reveals.length === 0 ? null : analyseAnonymity(ballots, { reveals });
  const changes = base.consistent && revealed?.consistent ? anonymityChanges(base, revealed) : [];
  const decoy = directory === null ? null : decoyUse(ballots.map((b) => b.ring), { directory });
  return { seq, base, revealed, changes, decoy };
}

/**
 * Ballots as they cross to the worker: the ids in order, every key once, and the rings one after
 * the other as indexes into `keys` (ballot b's members are `members[ends[b - 1] .. ends[b]]`).
 */
export type PackedBallots = {
  ids: string[];
  keys: string[];
  members: Uint32Array;
  ends: Uint32Array;
};

/** A request as posted: its ballots packed. */
export type LensMessage = Omit<LensRequest, "ballots"> & { ballots: PackedBallots };

/**
 * An analysis as it crosses back: for a consistent one, whether each ring place (in the order of
 * {@link PackedBallots.members}) holds a possible signer, and each certain signer's key and
 * candidate ballots as indexes; an inconsistent one as it is.
 */
export type PackedAnalysis =
  | { consistent: true; possible: Uint8Array; certain: { key: number; ballots: Uint32Array }[] }
  | InconsistentAnalysis;

/** The decoy-use test as it crosses back: each key's use as columns, keys as indexes. */
export type PackedDecoy = Omit<DecoyUse, "uses"> & {
  uses: { key: Uint32Array; id: Float64Array; count: Uint32Array; expected: Float64Array };
};

/** A {@link LensResult} as it crosses back: its analyses and its decoy-use test packed. */
export type PackedLensResult = {
  seq: number;
  base: PackedAnalysis;
  revealed: PackedAnalysis | null;
  changes: AnonymityChange[];
  decoy: PackedDecoy | null;
};

/** What the worker answers: the packed result with the time it took, or the error's message. */
export type LensAnswer = (PackedLensResult & { ms: number }) | { seq: number; error: string };

/** `ballots` packed, each key once (in the order first met). */
export function packBallots(ballots: readonly RingBallot[]): PackedBallots {
  const index = new Map<string, number>();
  const keys: string[] = [];
  const ends = new Uint32Array(ballots.length);
  let size = 0;
  for (const [b, { ring }] of ballots.entries()) ends[b] = size += ring.length;
  const members = new Uint32Array(size);
  let at = 0;
  for (const { ring } of ballots) {
    for (const key of ring) {
      let k = index.get(key);
      if (k === undefined) index.set(key, k = keys.push(key) - 1);
      members[at++] = k;
    }
  }
  return { ids: ballots.map((b) => b.id), keys, members, ends };
}

/** The ballots of `packed`, every ring sharing the one copy of each key. */
export function unpackBallots({ ids, keys, members, ends }: PackedBallots): RingBallot[] {
  return ids.map((id, b) => {
    const ring: string[] = [];
    for (let i = b === 0 ? 0 : ends[b - 1]; i < ends[b]; i++) ring.push(keys[members[i]]);
    return { id, ring };
  });
}

/** The worker's side of one job: the message unpacked, the lens run, its result packed. */
export function runLensMessage(message: LensMessage): PackedLensResult {
  const { ballots: packed, ...request } = message;
  const result = runLens({ ...request, ballots: unpackBallots(packed) });
  const index = new Map(packed.keys.map((key, k) => [key, k]));
  return {
    seq: result.seq,
    base: packAnalysis(result.base, packed, index),
    revealed: result.revealed && packAnalysis(result.revealed, packed, index),
    changes: result.changes,
    decoy: result.decoy && packDecoy(result.decoy, index),
  };
}

function packAnalysis(
  analysis: AnonymityAnalysis,
  { keys, members, ends }: PackedBallots,
  index: ReadonlyMap<string, number>,
): PackedAnalysis {
  if (!analysis.consistent) return analysis;
  const possible = new Uint8Array(members.length);
  analysis.ballots.forEach(({ possibleSigners }, b) => {
    const signers = new Set(possibleSigners);
    for (let i = b === 0 ? 0 : ends[b - 1]; i < ends[b]; i++) {
      if (signers.has(keys[members[i]])) possible[i] = 1;
    }
  });
  const ballotIndex = new Map(analysis.ballots.map((ballot, b) => [ballot.id, b]));
  const certain = analysis.certainSigners.map(({ key, ballots }) => ({
    key: index.get(key)!,
    ballots: Uint32Array.from(ballots, (id) => ballotIndex.get(id)!),
  }));
  return { consistent: true, possible, certain };
}

function packDecoy({ uses, ...rest }: DecoyUse, index: ReadonlyMap<string, number>): PackedDecoy {
  return {
    ...rest,
    uses: {
      key: Uint32Array.from(uses, (u) => index.get(u.key)!),
      id: Float64Array.from(uses, (u) => u.id ?? NaN),
      count: Uint32Array.from(uses, (u) => u.count),
      expected: Float64Array.from(uses, (u) => u.expected),
    },
  };
}

/**
 * The page's side: the result of the answer to a request for `ballots`, packed as `packed` was,
 * every key and id taken from `ballots` (so the page keeps one copy of each).
 */
export function unpackLensResult(
  answer: PackedLensResult,
  { ballots, packed }: { ballots: readonly RingBallot[]; packed: PackedBallots },
): LensResult {
  const keys = keysOf(ballots, packed);
  return {
    seq: answer.seq,
    base: unpackAnalysis(answer.base, ballots, { keys, packed }),
    revealed: answer.revealed && unpackAnalysis(answer.revealed, ballots, { keys, packed }),
    changes: answer.changes,
    decoy: answer.decoy && unpackDecoy(answer.decoy, keys),
  };
}

/** The keys of `packed` as `ballots` hold them: the same strings, not copies. */
function keysOf(ballots: readonly RingBallot[], { members, ends }: PackedBallots): string[] {
  const keys: string[] = [];
  ballots.forEach(({ ring }, b) => {
    const start = b === 0 ? 0 : ends[b - 1];
    ring.forEach((key, k) => (keys[members[start + k]] ??= key));
  });
  return keys;
}

function unpackAnalysis(
  packed: PackedAnalysis,
  ballots: readonly RingBallot[],
  { keys, packed: { ends } }: { keys: readonly string[]; packed: PackedBallots },
): AnonymityAnalysis {
  if (!packed.consistent) return packed;
  const { possible, certain } = packed;
  return {
    consistent: true,
    ballots: ballots.map(({ id, ring }, b): BallotAnonymity => {
      const start = b === 0 ? 0 : ends[b - 1];
      const unique = new Set(ring).size === ring.length;
      const members = unique ? ring as string[] : [...new Set(ring)];
      const signers = ring.filter((_, k) => possible[start + k] === 1);
      // Most ballots keep every member: their ring is their list of possible signers, not a copy.
      const possibleSigners = !unique
        ? [...new Set(signers)]
        : signers.length === ring.length
        ? members
        : signers;
      return { id, ring: members, possibleSigners, effectiveAnonymity: possibleSigners.length };
    }),
    certainSigners: certain.map(({ key, ballots: candidates }) => ({
      key: keys[key],
      ballots: Array.from(candidates, (b) => ballots[b].id),
    })),
  };
}

function unpackDecoy({ uses, ...rest }: PackedDecoy, keys: readonly string[]): DecoyUse {
  return {
    ...rest,
    uses: Array.from(uses.key, (k, i): KeyUse => ({
      key: keys[k],
      id: Number.isNaN(uses.id[i]) ? null : uses.id[i],
      count: uses.count[i],
      expected: uses.expected[i],
    })),
  };
}
