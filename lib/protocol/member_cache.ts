// Browser-safe. A verifier's memory of ring members it has checked (protocol §2 checks, done once
// per key): the decoded point and Hp(P), and for as many members as a byte budget allows, window
// tables of both (lib/protocol/point_table.ts) that turn each scalar product into a table walk.
//
// Entries come only from checkMember, through checkRing or admitKey, so a cached member is as
// trustworthy as a fresh decode. The cache lives in memory and is rebuilt lazily after a restart:
// the first verification that meets a key, or its registration, fills its entry.
import { hexToBytes } from "./bytes.ts";
import { pointTable } from "./point_table.ts";
import { checkMember, type Member, type MemberCache } from "./ring_signature.ts";

/**
 * Bytes one member's two tables (P and Hp) take at each window width, as measured by
 * `deno run -A --v8-flags=--expose-gc bench/member_memory.ts` (see README, Performance).
 */
export const TABLE_BYTES_PER_MEMBER: Record<number, number> = {
  3: 178_000,
  4: 266_000,
  5: 434_000,
  6: 729_000,
};

/** Window widths a member cache builds tables at. */
export type MemberWindow = 3 | 4 | 5 | 6;

/** Options: how many members to remember, the table budget in bytes and the window width. */
export type MemberCacheOptions = {
  maxMembers?: number;
  tableBudgetBytes?: number;
  window?: MemberWindow;
};

/**
 * A least-recently-used member cache. Members get window tables while the table budget allows;
 * evicting a tabled member frees its share, which the next member admitted takes.
 */
export function createMemberCache(opts: MemberCacheOptions = {}): MemberCache & {
  readonly size: number;
  readonly tabled: number;
  readonly bytesPerTabledMember: number;
  keys(): IterableIterator<string>;
} {
  const maxMembers = opts.maxMembers ?? 100_000;
  const window = opts.window ?? 4;
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
        if (oldest.tables) tabled--;
      }
      if (tabled < maxTabled) {
        member.tables ??= {
          point: pointTable(member.point, window),
          hp: pointTable(member.hp, window),
        };
        tabled++;
      }
      entries.set(key, member);
    },
  };
}

/**
 * Checks a registered key (hex) and remembers it in `cache` with its tables, so its first
 * verification finds them built. Returns false, leaving the cache alone, for a key the ring
 * checks would refuse or bytes that are not 32 bytes of lowercase hex.
 */
export function admitKey(cache: MemberCache, key: string): boolean {
  if (cache.get(key)) return true;
  let bytes: Uint8Array;
  try {
    bytes = hexToBytes(key, 32, "key");
  } catch {
    return false;
  }
  const member = checkMember(bytes, "key");
  if (typeof member === "string") return false;
  cache.set(key, member);
  return true;
}
