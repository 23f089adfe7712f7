/**
 * Browser-safe. The sealed ballots' rings, block by block, for the anonymity lens: blocks already
 * read are kept, only new heights are fetched; the reader of a block is injected.
 * @module
 */
import type { RingBallot } from "./anonymity.ts";
import { type ApiClient, readPages } from "../api_client.ts";
import type { BlockVotes } from "../../protocol/schemas.ts";

/** Where the anonymity lens reads the public record. */
export type LensSource = {
  /** The ballots of one sealed block, every page of its votes. */
  readBlock(height: number): Promise<RingBallot[]>;
  /**
   * The registered keys from id `offset` + 1 on, in id order (the directory only grows, so a page
   * reads only keys it has not seen). Throws when the ids answered are not consecutive.
   */
  readKeys(offset: number): Promise<string[]>;
};

/**
 * The lens's reads through `api`: a block's votes page by page, the directory from an id on. Every
 * key it answers is one string per key, however many rings hold it (a key read is otherwise a copy
 * of its own, 80 bytes in each ring).
 */
export function lensSource(api: ApiClient): LensSource {
  const interned = new Map<string, string>();
  const intern = (key: string) => {
    const known = interned.get(key);
    if (known !== undefined) return known;
    interned.set(key, key);
    return key;
  };
  return {
    readBlock: async (height) =>
      blockRings((await readPages(api.blockVotes(height))).items, intern),
    readKeys: async (offset) => {
      const { items } = await readPages(api.keys, { offset });
      const gap = items.findIndex((entry, i) => entry.id !== offset + 1 + i);
      if (gap >= 0) {
        throw new Error(
          `The key directory answered id ${items[gap].id} where id ${offset + 1 + gap} belongs`,
        );
      }
      return items.map((entry) => intern(entry.key));
    },
  };
}

/** Each sealed block's ballots (vote id and ring), by height. */
export type SealedRings = ReadonlyMap<number, RingBallot[]>;

/**
 * A block's listed votes as ballots of the lens: the vote id and its ring, in leaf order, each key
 * passed through `key` (the one copy to keep of it).
 */
export function blockRings(
  votes: BlockVotes["votes"],
  key: (hex: string) => string = (hex) => hex,
): RingBallot[] {
  return votes.map((entry) => ({ id: entry.voteId, ring: entry.vote.publicKeys.map(key) }));
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
  // Walked by the blocks read, never by the height alone: a height the server claims but cannot
  // serve ends at the first block it does not serve (that read throws), not in a list of 2^53.
  const rings = new Map<number, RingBallot[]>();
  for (const [h, have] of known) if (h >= 1 && h <= height) rings.set(h, have);
  const total = height - rings.size;
  let done = 0;
  for (let h = 1; h <= height; h++) {
    if (rings.has(h)) continue;
    onProgress?.(done++, total);
    rings.set(h, await readBlock(h));
  }
  onProgress?.(total, total);
  return new Map([...rings].sort((a, b) => a[0] - b[0]));
}

/** Every ballot of `rings`, in height then leaf order. */
export function allBallots(rings: SealedRings): RingBallot[] {
  return [...rings.keys()].sort((a, b) => a - b).flatMap((h) => rings.get(h)!);
}
