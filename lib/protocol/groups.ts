/**
 * Browser-safe. The groups of a round (protocol §2.8, rounds): the one public partition of its key
 * directory into rings, recomputed by anyone from the directory and `keysAtOpen`, the number of
 * keys registered when voting opened. The keys of the opening form one group up to
 * {@link MAX_GROUP} keys, else ⌈N/64⌉ groups of consecutive ids of near-equal size; keys
 * registered later are pending, and with late joiners allowed each `minVoters` of them in id order
 * form the next group. A round vote's ring must be exactly one group.
 * @module
 */
import { bytesToHex, concatBytes } from "./bytes.ts";
import { sha256 } from "./hash.ts";
import { ROUND_MIN_VOTERS } from "./schemas.ts";

/** The most keys of one group: the verifier's ring limit (protocol §2.7). */
export const MAX_GROUP = 64;

/** What the partition of a round depends on besides its directory. */
export type GroupRule = {
  /** Keys registered when voting opened: ids 1..keysAtOpen. */
  keysAtOpen: number;
  /** Keys in the round's directory now: ids 1..total. */
  total: number;
  /** The size of a late group, and the fewest keys that may open voting. */
  minVoters: number;
  /** Whether keys registered after the opening form groups of their own. */
  lateJoiners: boolean;
};

/** Ids `from` to `to`, both included, ascending. */
function idRange(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}

/**
 * The groups of the `keysAtOpen` keys registered before voting opened: one group [1..N] up to
 * {@link MAX_GROUP} keys; above, k = ⌈N/64⌉ groups of consecutive ids, the first N mod k of
 * ⌈N/k⌉ keys and the rest of ⌊N/k⌋. None for 0 keys.
 */
export function partitionAtOpen(keysAtOpen: number): number[][] {
  const n = Math.max(0, Math.floor(keysAtOpen));
  if (n === 0) return [];
  const k = Math.ceil(n / MAX_GROUP);
  const small = Math.floor(n / k);
  const large = n % k;
  const groups: number[][] = [];
  let next = 1;
  for (let g = 0; g < k; g++) {
    const size = g < large ? small + 1 : small;
    groups.push(idRange(next, next + size - 1));
    next += size;
  }
  return groups;
}

/**
 * Every group of a round and its pending keys: the opening's groups, then, with late joiners, each
 * complete run of `minVoters` keys registered after the opening, in id order. Keys after the
 * opening in no group are pending.
 */
export function roundGroups(
  { keysAtOpen, total, minVoters, lateJoiners }: GroupRule,
): { groups: number[][]; pending: number[] } {
  const groups = partitionAtOpen(keysAtOpen);
  let next = Math.max(0, keysAtOpen) + 1;
  if (lateJoiners && minVoters > 0) {
    while (next + minVoters - 1 <= total) {
      groups.push(idRange(next, next + minVoters - 1));
      next += minVoters;
    }
  }
  return { groups, pending: idRange(next, total) };
}

/** The group holding key `id`, or null when it is in none (pending, or not in the directory). */
export function groupOf(groups: readonly number[][], id: number): number[] | null {
  for (const group of groups) {
    if (group.length > 0 && id >= group[0] && id <= group[group.length - 1]) {
      return group.includes(id) ? group : null;
    }
  }
  return null;
}

/**
 * True when `rule` is one an honest round can have: `minVoters` an integer from 8 to 64, and at
 * least `minVoters` keys at the opening, since voting never opens with fewer (protocol §4.9). Then
 * every group holds at least 8 keys; a rule served otherwise would let a server narrow a ring.
 */
export function ruleIsSound({ keysAtOpen, minVoters }: Omit<GroupRule, "total">): boolean {
  return Number.isInteger(minVoters) && minVoters >= ROUND_MIN_VOTERS.min &&
    minVoters <= ROUND_MIN_VOTERS.max && Number.isInteger(keysAtOpen) && keysAtOpen >= minVoters;
}

/**
 * True when the registered keys `ids` (a ring's members, in ring order) are exactly one group of
 * the round: its keys, each once, in id order. Only the ids are needed: a late group whose keys
 * are all registered is complete. No ring is a group under a rule that is not sound
 * ({@link ruleIsSound}).
 */
export function ringIsGroup(
  ids: readonly number[],
  rule: Omit<GroupRule, "total">,
): boolean {
  if (ids.length === 0 || !ruleIsSound(rule)) return false;
  const total = Math.max(rule.keysAtOpen, ...ids);
  const group = groupOf(roundGroups({ ...rule, total }).groups, ids[0]);
  return group !== null && group.length === ids.length && group.every((id, i) => ids[i] === id);
}

/**
 * A group's short fingerprint, to compare a phone's group with the projector's: the first 8
 * lowercase hex digits of the SHA-256 of its 32-byte keys concatenated in id order.
 */
export function groupFingerprint(keys: Uint8Array[]): string {
  return bytesToHex(sha256(concatBytes(...keys))).slice(0, 8);
}
