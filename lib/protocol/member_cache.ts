// Browser-safe. A bounded memory of ring members already decoded, least recently used first out,
// under a byte budget: members with combs (registered keys) cost MEMBER_BYTES each. The budget is
// the whole process's: a caller running several verifiers divides it between them.
//
// Entries must come from checked members only (checkRing's own checks, or a precomputation this
// server stored at registration), so a hit is as trustworthy as a fresh decode.
import type { Member, MemberCache } from "./ring_signature.ts";

/**
 * Heap bytes one member with both combs takes (62 points), as measured by
 * `deno run -A --v8-flags=--expose-gc bench/member_memory.ts` (see README, Performance).
 */
export const MEMBER_BYTES = 8_000;

/** Options: the byte budget; members beyond it push out the least recently used. */
export type MemberCacheOptions = { budgetBytes?: number };

/** Default budget: 32 MiB, about 4,000 registered keys. */
export const DEFAULT_MEMBER_BUDGET = 32 * 1024 * 1024;

/** A least-recently-used member cache holding at most `budgetBytes / MEMBER_BYTES` members. */
export function createMemberCache(opts: MemberCacheOptions = {}): MemberCache & {
  set(key: string, member: Member): void;
  readonly size: number;
  readonly capacity: number;
  keys(): IterableIterator<string>;
} {
  const capacity = Math.floor((opts.budgetBytes ?? DEFAULT_MEMBER_BUDGET) / MEMBER_BYTES);
  const entries = new Map<string, Member>();
  return {
    get size() {
      return entries.size;
    },
    capacity,
    keys: () => entries.keys(),
    get(key) {
      const member = entries.get(key);
      if (member) {
        // Map iteration order is insertion order: re-inserting marks the entry most recent.
        entries.delete(key);
        entries.set(key, member);
      }
      return member;
    },
    set(key, member) {
      if (capacity === 0) return;
      entries.delete(key);
      if (entries.size >= capacity) entries.delete(entries.keys().next().value!);
      entries.set(key, member);
    },
  };
}
