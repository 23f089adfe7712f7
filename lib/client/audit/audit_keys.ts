/**
 * Browser-safe. The audit's key data: each ring member checked as registration checks a key
 * (canonical, not the identity, torsion-free: lib/protocol/keys.ts) once per audit rather than once
 * per worker that meets it, and kept in one of two forms: with `Hp` and the combs of P and Hp(P) in
 * their stored form (lib/protocol/key_precomputation.ts, 3,968 bytes), while the directory's keys
 * fit a budget, else as a checked key, the affine P and Hp(P) alone (128 bytes). The pool
 * (./check_pool.ts) keeps both in the page's thread and hands them to a worker with each slice of
 * votes; a worker decodes the members of each vote from them.
 * @module
 */
import { hexToBytes } from "../../protocol/bytes.ts";
import { pointsFromBytes, pointsToBytes } from "../../protocol/comb_table.ts";
import {
  isPrecomputationOf,
  type KeyPrecomputation,
  memberFromPrecomputation,
  PRECOMPUTATION_BYTES,
  precomputeKey,
  startsWithPoint,
} from "../../protocol/key_precomputation.ts";
import { decodePoint } from "../../protocol/keys.ts";
import { createLruCache, MEMBER_BYTES } from "../../protocol/member_cache.ts";
import { hashToPoint, type Member, type MemberCache } from "../../protocol/ring_signature.ts";

/**
 * Budget of the precomputations the page's thread keeps, 3,968 bytes a key: 48 MiB, about 12,680
 * keys. Of a larger directory the keys met first are kept with combs, the others as checked keys
 * (CHECKED_KEYS_BUDGET).
 */
export const AUDIT_KEYS_BUDGET = 48 * 1024 * 1024;

/**
 * Budget of the checked keys the page's thread keeps beyond the precomputations, 128 bytes a key
 * in slabs plus about 100 bytes of index: 32 MiB, about 147,000 keys. A key beyond both is checked
 * by the worker that meets it, each time it is met.
 */
export const CHECKED_KEYS_BUDGET = 32 * 1024 * 1024;

/** Bytes of a checked key: the affine x and y of P, then of Hp(P), as comb entry 1 stores them. */
export const CHECKED_KEY_BYTES = 128;

/** Bytes the page's thread counts for each checked key it keeps: the key data and its index. */
export const CHECKED_KEY_COST = CHECKED_KEY_BYTES + 100;

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

/**
 * A key's precomputation ({@link PRECOMPUTATION_BYTES}) or checked key ({@link CHECKED_KEY_BYTES}),
 * or why the key fails registration's checks.
 */
export type KeyData = Uint8Array | string;

/** The form a key is kept in: with combs, or checked alone. */
export type KeyForm = "combs" | "checked";

/**
 * Checks each key (64 lowercase hex) as registration does and gives it in `form`: precomputed with
 * combs, or as a checked key. Never throws.
 */
export function precomputeKeys(keys: readonly string[], form: KeyForm = "combs"): KeyData[] {
  return keys.map((key) => {
    try {
      const bytes = hexToBytes(key, 32, "key");
      return form === "combs" ? precomputeKey(bytes) : checkKey(bytes);
    } catch (error) {
      return (error as Error).message;
    }
  });
}

/** The checked key of `bytes` (P and Hp(P) affine), or why it fails registration's checks. */
export function checkKey(bytes: Uint8Array): Uint8Array | string {
  const decoded = decodePoint(bytes, "key");
  if (!decoded.point) return decoded.reason;
  return pointsToBytes([decoded.point, hashToPoint(bytes)], new Uint8Array(CHECKED_KEY_BYTES));
}

/**
 * True when `stored` is key data of the key encoded by `bytes`: a precomputation of it, or a
 * checked key whose P is it.
 */
export function isKeyDataOf(stored: unknown, bytes: Uint8Array): stored is Uint8Array {
  if (isPrecomputationOf(stored, bytes)) return true;
  return stored instanceof Uint8Array && stored.length === CHECKED_KEY_BYTES &&
    startsWithPoint(stored, bytes);
}

/** The ring member of key data this audit checked: with combs from a precomputation. */
export function memberFromKeyData(stored: Uint8Array): Member {
  if (stored.length === PRECOMPUTATION_BYTES) return memberFromPrecomputation(stored);
  const [point, hp] = pointsFromBytes(stored, 0, 2);
  return { point, hp };
}

/**
 * The page thread's key data by hex key: precomputations while `budgetBytes` has room, then checked
 * keys while `checkedBudgetBytes` has room, in slabs (one ArrayBuffer per 4,096 keys rather than one
 * per key); a key's refusal counts as a checked key (a ring of made-up keys fills it no further).
 * Nothing is ever pushed out: a store that is full takes no more.
 */
export type KeyStore = {
  has(key: string): boolean;
  get(key: string): KeyData | undefined;
  set(key: string, data: KeyData): void;
  /** The form a new key would be kept in, after `pending` more of each form arrive; null: none. */
  roomFor(pending: { combs: number; checked: number }): KeyForm | null;
  readonly size: number;
};

const SLAB_KEYS = 4096;

/** An empty {@link KeyStore}. */
export function createKeyStore(
  budgetBytes = AUDIT_KEYS_BUDGET,
  checkedBudgetBytes = CHECKED_KEYS_BUDGET,
): KeyStore {
  const combCapacity = Math.floor(budgetBytes / PRECOMPUTATION_BYTES);
  const checkedCapacity = Math.floor(checkedBudgetBytes / CHECKED_KEY_COST);
  const precomputations = new Map<string, KeyPrecomputation>();
  const refusals = new Map<string, string>();
  const checked = new Map<string, number>();
  const slabs: Uint8Array[] = [];
  const slot = (index: number) => ({
    slab: slabs[Math.floor(index / SLAB_KEYS)],
    at: (index % SLAB_KEYS) * CHECKED_KEY_BYTES,
  });
  return {
    get size() {
      return precomputations.size + checked.size + refusals.size;
    },
    has: (key) => checked.has(key) || precomputations.has(key) || refusals.has(key),
    get(key) {
      const index = checked.get(key);
      if (index === undefined) return precomputations.get(key) ?? refusals.get(key);
      const { slab, at } = slot(index);
      return slab.slice(at, at + CHECKED_KEY_BYTES);
    },
    set(key, data) {
      if (typeof data === "string") {
        if (checked.size + refusals.size < checkedCapacity) refusals.set(key, data);
      } else if (data.length === PRECOMPUTATION_BYTES) {
        if (precomputations.size < combCapacity) precomputations.set(key, data);
      } else if (data.length === CHECKED_KEY_BYTES && !checked.has(key)) {
        if (checked.size + refusals.size >= checkedCapacity) return;
        const index = checked.size;
        if (index % SLAB_KEYS === 0) slabs.push(new Uint8Array(SLAB_KEYS * CHECKED_KEY_BYTES));
        const { slab, at } = slot(index);
        slab.set(data, at);
        checked.set(key, index);
      }
    },
    roomFor(pending) {
      if (precomputations.size + pending.combs < combCapacity) return "combs";
      if (checked.size + refusals.size + pending.checked < checkedCapacity) return "checked";
      return null;
    },
  };
}

/**
 * Ring members for checkRing: a member decoded before, else decoded from the key data `supplied`
 * gives (the pool's: with combs, or a checked key), else checked here (and given combs when there
 * is room to keep it). A key that
 * fails the checks is not answered, so checkRing checks it and refuses it with its own reason.
 */
export function createAuditMembers(
  { budgetBytes = IN_THREAD_MEMBERS_BUDGET, supplied }: {
    budgetBytes?: number;
    supplied?: (key: string) => Uint8Array | undefined;
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
      // Key data handed over for another key is never used for this one.
      const given = supplied?.(key);
      const stored = given !== undefined && isKeyDataOf(given, hexToBytes(key, 32, "key"))
        ? given
        : precomputeKeys([key], decoded.capacity > 0 ? "combs" : "checked")[0];
      if (typeof stored === "string") return undefined;
      member = memberFromKeyData(stored);
      decoded.set(key, member);
      return member;
    },
  };
}
