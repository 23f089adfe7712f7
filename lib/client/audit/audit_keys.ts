/**
 * Browser-safe. The audit's key data: each ring member checked as registration checks a key
 * (canonical, not the identity, torsion-free: lib/protocol/keys.ts) once per audit rather than once
 * per worker that meets it, and kept in one of three forms: with `Hp` and the wide combs of P and
 * Hp(P) in their stored form (lib/protocol/key_precomputation.ts, 3,968 bytes) when the whole
 * directory fits a budget; else with narrow combs (896 bytes: a quarter of the bytes for 1.5× the
 * time of a ring step) while a second budget has room; then as a checked key, the affine P and
 * Hp(P) alone (128 bytes). The pool (./check_pool.ts) keeps them in the page's thread and hands
 * them to a worker with each slice of votes; a worker decodes the members of each vote from them.
 * @module
 */
import { hexToBytes } from "../../protocol/bytes.ts";
import {
  NARROW_COMB_BYTES,
  NARROW_TEETH,
  pointsFromBytes,
  pointsToBytes,
} from "../../protocol/comb_table.ts";
import {
  isPrecomputationOf,
  type KeyPrecomputation,
  memberFromCombs,
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
 * keys. A larger directory gets narrow combs instead (NARROW_KEYS_BUDGET): its keys would fill
 * this budget with a few of them, where narrow combs hold four times as many.
 */
export const AUDIT_KEYS_BUDGET = 48 * 1024 * 1024;

/**
 * Budget of the keys with narrow combs the page's thread keeps for a directory larger than
 * AUDIT_KEYS_BUDGET holds, 896 bytes a key in slabs plus about 100 bytes of index: 96 MiB, about
 * 101,000 keys. Beyond it, keys are kept as checked keys (CHECKED_KEYS_BUDGET).
 */
export const NARROW_KEYS_BUDGET = 96 * 1024 * 1024;

/**
 * Budget of the checked keys the page's thread keeps beyond the keys with combs, 128 bytes a key
 * in slabs plus about 100 bytes of index: 32 MiB, about 147,000 keys. A key beyond all three is
 * checked by the worker that meets it, each time it is met.
 */
export const CHECKED_KEYS_BUDGET = 32 * 1024 * 1024;

/** Bytes of a key with narrow combs: the narrow combs of P and of Hp(P), entry 1 being each point. */
export const NARROW_KEY_BYTES = 2 * NARROW_COMB_BYTES;

/** Bytes the page's thread counts for each key with narrow combs it keeps: the data and its index. */
export const NARROW_KEY_COST = NARROW_KEY_BYTES + 100;

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
 * A key's precomputation ({@link PRECOMPUTATION_BYTES}), key with narrow combs
 * ({@link NARROW_KEY_BYTES}) or checked key ({@link CHECKED_KEY_BYTES}), or why the key fails
 * registration's checks.
 */
export type KeyData = Uint8Array | string;

/** The form a key is kept in: with (wide) combs, with narrow combs, or checked alone. */
export type KeyForm = "combs" | "narrow" | "checked";

/** The forms, in the order a key store fills them. */
export const KEY_FORMS: readonly KeyForm[] = ["combs", "narrow", "checked"];

/**
 * Checks each key (64 lowercase hex) as registration does and gives it in `form`: precomputed with
 * combs, with narrow combs, or as a checked key. Never throws.
 */
export function precomputeKeys(keys: readonly string[], form: KeyForm = "combs"): KeyData[] {
  const give = { combs: precomputeKey, narrow: narrowKey, checked: checkKey }[form];
  return keys.map((key) => {
    try {
      return give(hexToBytes(key, 32, "key"));
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
 * The key with narrow combs of `bytes` (the narrow combs of P and Hp(P), affine), or why it fails
 * registration's checks; the torsion check L·P = identity is a walk over P's narrow comb.
 */
export function narrowKey(bytes: Uint8Array): Uint8Array | string {
  return precomputeKey(bytes, { teeth: NARROW_TEETH });
}

/**
 * True when `stored` is key data of the key encoded by `bytes`: a precomputation of it, or a key
 * with narrow combs or a checked key whose P is it.
 */
export function isKeyDataOf(stored: unknown, bytes: Uint8Array): stored is Uint8Array {
  if (isPrecomputationOf(stored, bytes)) return true;
  return stored instanceof Uint8Array &&
    (stored.length === NARROW_KEY_BYTES || stored.length === CHECKED_KEY_BYTES) &&
    startsWithPoint(stored, bytes);
}

/** The ring member of key data this audit checked: with the combs its form holds. */
export function memberFromKeyData(stored: Uint8Array): Member {
  if (stored.length === PRECOMPUTATION_BYTES) return memberFromPrecomputation(stored);
  if (stored.length === NARROW_KEY_BYTES) return memberFromCombs(stored, NARROW_TEETH);
  const [point, hp] = pointsFromBytes(stored, 0, 2);
  return { point, hp };
}

/**
 * The page thread's key data by hex key, in the first form that has room: precomputations (wide
 * combs) when the whole directory fits their budget, keys with narrow combs when it does not (or,
 * its size unknown, once the precomputations' budget is full); then checked keys. The two smaller
 * forms are kept in slabs (one ArrayBuffer per 4,096 keys rather than one per key); a key's refusal
 * counts as a checked key (a ring of made-up keys fills it no further). Nothing is ever pushed out:
 * a store that is full takes no more.
 */
export type KeyStore = {
  has(key: string): boolean;
  get(key: string): KeyData | undefined;
  set(key: string, data: KeyData): void;
  /** The form a new key would be kept in, after `pending` more of each form arrive; null: none. */
  roomFor(pending: Record<KeyForm, number>): KeyForm | null;
  readonly size: number;
  /** How many keys it keeps in each form, refusals counted as checked keys. */
  readonly kept: Record<KeyForm, number>;
};

/** Byte budgets of a {@link KeyStore}'s forms, and how many keys the directory holds, if known. */
export type KeyStoreOptions = {
  combs?: number;
  narrow?: number;
  checked?: number;
  directorySize?: number;
};

const SLAB_KEYS = 4096;

/** Fixed-size records by key, in slabs. */
function createSlabs(recordBytes: number) {
  const index = new Map<string, number>();
  const slabs: Uint8Array[] = [];
  const slot = (i: number) => ({
    slab: slabs[Math.floor(i / SLAB_KEYS)],
    at: (i % SLAB_KEYS) * recordBytes,
  });
  return {
    index,
    get(key: string): Uint8Array | undefined {
      const i = index.get(key);
      if (i === undefined) return undefined;
      const { slab, at } = slot(i);
      return slab.slice(at, at + recordBytes);
    },
    add(key: string, data: Uint8Array) {
      if (index.has(key)) return;
      const i = index.size;
      if (i % SLAB_KEYS === 0) slabs.push(new Uint8Array(SLAB_KEYS * recordBytes));
      const { slab, at } = slot(i);
      slab.set(data, at);
      index.set(key, i);
    },
  };
}

/** An empty {@link KeyStore}. */
export function createKeyStore(
  {
    combs: combsBudget = AUDIT_KEYS_BUDGET,
    narrow: narrowBudget = NARROW_KEYS_BUDGET,
    checked: checkedBudget = CHECKED_KEYS_BUDGET,
    directorySize,
  }: KeyStoreOptions = {},
): KeyStore {
  const fitting = Math.floor(combsBudget / PRECOMPUTATION_BYTES);
  const narrowCapacity = Math.floor(narrowBudget / NARROW_KEY_COST);
  // A directory larger than the wide combs' budget gets narrow combs throughout; one that fits it
  // gets none, so that keys outside it cannot fill them.
  const large = directorySize === undefined ? undefined : directorySize > fitting;
  const capacity: Record<KeyForm, number> = {
    combs: large === true ? 0 : fitting,
    narrow: large === false ? 0 : narrowCapacity,
    checked: Math.floor(checkedBudget / CHECKED_KEY_COST),
  };
  const precomputations = new Map<string, KeyPrecomputation>();
  const refusals = new Map<string, string>();
  const narrow = createSlabs(NARROW_KEY_BYTES);
  const checked = createSlabs(CHECKED_KEY_BYTES);
  const used = (): Record<KeyForm, number> => ({
    combs: precomputations.size,
    narrow: narrow.index.size,
    checked: checked.index.size + refusals.size,
  });
  return {
    get size() {
      const kept = used();
      return kept.combs + kept.narrow + kept.checked;
    },
    get kept() {
      return used();
    },
    has: (key) =>
      precomputations.has(key) || narrow.index.has(key) || checked.index.has(key) ||
      refusals.has(key),
    get: (key) =>
      precomputations.get(key) ?? narrow.get(key) ?? checked.get(key) ?? refusals.get(key),
    set(key, data) {
      const full = (form: KeyForm) => used()[form] >= capacity[form];
      if (typeof data === "string") {
        if (!full("checked")) refusals.set(key, data);
      } else if (data.length === PRECOMPUTATION_BYTES) {
        if (!full("combs")) precomputations.set(key, data);
      } else if (data.length === NARROW_KEY_BYTES) {
        if (!full("narrow")) narrow.add(key, data);
      } else if (data.length === CHECKED_KEY_BYTES) {
        if (!full("checked")) checked.add(key, data);
      }
    },
    roomFor(pending) {
      const now = used();
      return KEY_FORMS.find((form) => now[form] + pending[form] < capacity[form]) ?? null;
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
