/**
 * Browser-safe. The group rule of a round (protocol §2.8): the keys registered before voting opened
 * form one group, or near-equal groups in id order above 64; late keys form groups of `minVoters`
 * when the round takes late joiners. Pure: anyone recomputes it from the directory and `keysAtOpen`.
 * @module
 */
import { bytesToHex } from "./bytes.ts";
import { sha256 } from "./hash.ts";

/** The largest group: the verifier's ring limit (protocol §2.7). */
export const MAX_GROUP = 64;

/** The groups of the `keysAtOpen` keys registered before voting opened, ids 1..keysAtOpen. */
export function partitionAtOpen(keysAtOpen: number): number[][] {
  if (keysAtOpen <= 0) return [];
  const k = Math.ceil(keysAtOpen / MAX_GROUP);
  const small = Math.floor(keysAtOpen / k);
  const large = keysAtOpen % k;
  const groups: number[][] = [];
  let next = 1;
  for (let g = 0; g < k; g++) {
    const size = g < large ? small + 1 : small;
    groups.push(Array.from({ length: size }, (_, i) => next + i));
    next += size;
  }
  return groups;
}

/** Every group of a round and the keys still pending, given its directory's `total` keys. */
export function roundGroups(
  { keysAtOpen, total, minVoters, lateJoiners }: {
    keysAtOpen: number;
    total: number;
    minVoters: number;
    lateJoiners: boolean;
  },
): { groups: number[][]; pending: number[] } {
  const groups = partitionAtOpen(keysAtOpen);
  const pending: number[] = [];
  for (let id = keysAtOpen + 1; id <= total; id++) pending.push(id);
  if (!lateJoiners) return { groups, pending };
  const full = Math.floor(pending.length / minVoters) * minVoters;
  for (let at = 0; at < full; at += minVoters) groups.push(pending.slice(at, at + minVoters));
  return { groups, pending: pending.slice(full) };
}

/** The group holding key `id`, or null when it is in none. */
export function groupOf(groups: readonly number[][], id: number): number[] | null {
  return groups.find((group) => group.includes(id)) ?? null;
}

/** First 8 lowercase hex digits of SHA-256 over the group's 32-byte keys in id order. */
export function groupFingerprint(keys: Uint8Array[]): string {
  return bytesToHex(sha256(...keys)).slice(0, 8);
}
