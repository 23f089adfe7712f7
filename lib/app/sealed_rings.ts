// Browser-safe. The sealed ballots' rings, block by block, for the anonymity lens: a sealed block
// never changes (protocol §3), so blocks already read are kept and only new heights are fetched as
// the chain grows. The reader of one block's votes is injected (the API client's paging).
import type { RingBallot } from "./anonymity.ts";
import type { BlockVotes } from "../protocol/schemas.ts";

/** Each sealed block's ballots (vote id and ring), by height. */
export type SealedRings = ReadonlyMap<number, RingBallot[]>;

/** A block's listed votes as ballots of the lens: the vote id and its ring, in leaf order. */
export function blockRings(votes: BlockVotes["votes"]): RingBallot[] {
  return votes.map((entry) => ({ id: entry.voteId, ring: entry.vote.publicKeys }));
}

/**
 * The rings of blocks 1..`height`: those of `known` kept, the others read with `readBlock` in
 * height order; `onProgress(done, total)` follows the blocks still to read.
 */
export async function readSealedRings(
  readBlock: (height: number) => Promise<RingBallot[]>,
  { height, known = new Map(), onProgress }: {
    height: number;
    known?: SealedRings;
    onProgress?: (done: number, total: number) => void;
  },
): Promise<SealedRings> {
  const rings = new Map<number, RingBallot[]>();
  const missing: number[] = [];
  for (let h = 1; h <= height; h++) {
    const have = known.get(h);
    if (have) rings.set(h, have);
    else missing.push(h);
  }
  for (const [done, h] of missing.entries()) {
    onProgress?.(done, missing.length);
    rings.set(h, await readBlock(h));
  }
  onProgress?.(missing.length, missing.length);
  return rings;
}

/** Every ballot of `rings`, in height then leaf order. */
export function allBallots(rings: SealedRings): RingBallot[] {
  return [...rings.keys()].sort((a, b) => a - b).flatMap((h) => rings.get(h)!);
}
