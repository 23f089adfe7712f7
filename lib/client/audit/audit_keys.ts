/**
 * Browser-safe. The audit's key data: each ring member checked as registration checks a key
 * (canonical, not the identity, torsion-free: lib/protocol/keys.ts) and given `Hp` and the combs of
 * P and Hp(P) in their stored form (lib/protocol/key_precomputation.ts), once per audit rather than
 * once per worker that meets it. The pool (./check_pool.ts) keeps every key's precomputation in the
 * page's thread and hands it to a worker with each slice of votes; a worker decodes the members
 * of each vote from it.
 * @module
 */
import { hexToBytes } from "../../protocol/bytes.ts";
import {
  isPrecomputationOf,
  type KeyPrecomputation,
  memberFromPrecomputation,
  PRECOMPUTATION_BYTES,
  precomputeKey,
} from "../../protocol/key_precomputation.ts";
import { createLruCache, type LruCache, MEMBER_BYTES } from "../../protocol/member_cache.ts";
import type { Member, MemberCache } from "../../protocol/ring_signature.ts";

/**
 * Budget of the precomputations the page's thread keeps, 3,968 bytes a key: 64 MiB, about 16,900
 * keys. Of a larger directory the keys met first are kept; any other is checked and precomputed by
 * the worker that meets it, each time it is met.
 */
export const AUDIT_KEYS_BUDGET = 64 * 1024 * 1024;

/**
 * Budget of the decoded members each audit worker keeps: none. A member is decoded from the
 * precomputation sent with its vote's slice, a few hundredths of a millisecond, and dropped with
 * the vote. Kept longer, each member (13.5 KB of points) outlives the young generation of a worker
 * verifying at full speed, whose old generation then grows by megabytes a second between
 * collections: the command line's audit of 10,000 votes took 10–15% more CPU time and 70 MB more
 * memory with 2 MiB of members kept, and met them again too rarely to gain anything.
 */
export const WORKER_MEMBERS_BUDGET = 0;

/**
 * Budget of the decoded members a checker in one thread keeps when no pool keeps the
 * precomputations for it: 64 MiB, about 5,000.
 */
export const IN_THREAD_MEMBERS_BUDGET = 64 * 1024 * 1024;

/** A key's precomputation, or why the key fails registration's checks. */
export type KeyData = KeyPrecomputation | string;

/** Checks and precomputes each key (64 lowercase hex), as registration does; never throws. */
export function precomputeKeys(keys: readonly string[]): KeyData[] {
  return keys.map((key) => {
    try {
      return precomputeKey(hexToBytes(key, 32, "key"));
    } catch (error) {
      return (error as Error).message;
    }
  });
}

/** The page thread's store of precomputations by hex key, least recently used out first. */
export function createKeyStore(budgetBytes = AUDIT_KEYS_BUDGET): LruCache<KeyData> {
  return createLruCache<KeyData>(Math.floor(budgetBytes / PRECOMPUTATION_BYTES));
}

/**
 * Ring members for checkRing, with combs: a member decoded before, else decoded from the
 * precomputation `supplied` gives (the pool's), else checked and precomputed here. A key that fails
 * the checks is not answered, so checkRing checks it and refuses it with its own reason.
 */
export function createAuditMembers(
  { budgetBytes = IN_THREAD_MEMBERS_BUDGET, supplied }: {
    budgetBytes?: number;
    supplied?: (key: string) => KeyPrecomputation | undefined;
  } = {},
): MemberCache & { readonly size: number } {
  const decoded = createLruCache<Member>(Math.floor(budgetBytes / MEMBER_BYTES));
  return {
    get size() {
      return decoded.size;
    },
    get(key) {
      let member = decoded.get(key);
      if (member) return member;
      // A precomputation handed over for another key is never used for this one.
      const given = supplied?.(key);
      const stored = given !== undefined && isPrecomputationOf(given, hexToBytes(key, 32, "key"))
        ? given
        : precomputeKeys([key])[0];
      if (typeof stored === "string") return undefined;
      member = memberFromPrecomputation(stored);
      decoded.set(key, member);
      return member;
    },
  };
}
