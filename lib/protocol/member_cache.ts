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
export const MEMBER_BYTES = 13_500;

/** Options: the byte budget; members beyond it push out the least recently used. */
export type MemberCacheOptions = { budgetBytes?: number };

/** Default budget: 48 MiB, about 3,700 registered keys. */
export const DEFAULT_MEMBER_BUDGET = 48 * 1024 * 1024;

/** A map that holds at most `capacity` entries, dropping the least recently used first. */
export type LruCache<V> = {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  readonly size: number;
  readonly capacity: number;
  keys(): IterableIterator<string>;
};

/** An empty {@link LruCache} of at most `capacity` entries (none at all for 0). */
export function createLruCache<V>(capacity: number): LruCache<V> {
  const entries = new Map<string, V>();
  return {
    get size() {
      return entries.size;
    },
    capacity,
    keys: () => entries.keys(),
    get(key) {
      const value = entries.get(key);
      if (value !== undefined) {
        // Map iteration order is insertion order: re-inserting marks the entry most recent.
        entries.delete(key);
        entries.set(key, value);
      }
      return value;
    },
    set(key, value) {
      if (capacity <= 0) return;
      entries.delete(key);
      if (entries.size >= capacity) entries.delete(entries.keys().next().value!);
      entries.set(key, value);
    },
  };
}

/** A least-recently-used member cache holding at most `budgetBytes / MEMBER_BYTES` members. */
export function createMemberCache(opts: MemberCacheOptions = {}): MemberCache & LruCache<Member> {
  return createLruCache<Member>(
    Math.floor((opts.budgetBytes ?? DEFAULT_MEMBER_BUDGET) / MEMBER_BYTES),
  );
}
