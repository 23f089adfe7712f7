// Browser-safe. A verifier's memory of ring members it has checked (DESIGN §2 checks, done once
// per key): the decoded point and Hp(P), and for as many members as a byte budget allows,
// precomputed window tables that turn each scalar product into a table walk.
//
// Entries are created only by checkRing after a member passes every point check, so a cached
// member is as trustworthy as a fresh decode. The cache lives in memory and is rebuilt lazily
// after a restart: the first verification that meets a key fills its entry.
import type { Member, MemberCache } from "./ring_signature.ts";

/**
 * Bytes one member's two tables (P and Hp) take at each window width, measured with
 * `Deno.memoryUsage()` over 50 keys (see README, Performance).
 */
export const TABLE_BYTES_PER_MEMBER: Record<number, number> = {
  4: 218_000,
  5: 342_000,
  6: 580_000,
};

/** Options: how many members to remember, the table budget in bytes and the window width. */
export type MemberCacheOptions = {
  maxMembers?: number;
  tableBudgetBytes?: number;
  window?: 4 | 5 | 6;
};

/** A least-recently-used member cache with window tables for the first members that fit the budget. */
export function createMemberCache(opts: MemberCacheOptions = {}): MemberCache & {
  readonly size: number;
  readonly tabled: number;
  readonly bytesPerTabledMember: number;
  keys(): IterableIterator<string>;
} {
  const maxMembers = opts.maxMembers ?? 100_000;
  const window = opts.window ?? 5;
  const bytesPerTabledMember = TABLE_BYTES_PER_MEMBER[window];
  const maxTabled = Math.floor((opts.tableBudgetBytes ?? 64 * 1024 * 1024) / bytesPerTabledMember);
  const entries = new Map<string, Member>();
  let tabled = 0;

  return {
    get size() {
      return entries.size;
    },
    get tabled() {
      return tabled;
    },
    bytesPerTabledMember,
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
      if (entries.has(key)) return;
      if (entries.size >= maxMembers) {
        const [oldestKey, oldest] = entries.entries().next().value!;
        entries.delete(oldestKey);
        if (oldest.tabled) tabled--;
      }
      if (tabled < maxTabled) {
        member.point.precompute(window, false);
        member.hp.precompute(window, false);
        member.tabled = true;
        tabled++;
      }
      entries.set(key, member);
    },
  };
}
