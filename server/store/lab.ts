/**
 * The attack lab's practice ledger (protocol §4.7): the same store and sealer as the election's,
 * under the KV prefix ["lab", generation], bounded in keys and votes. A reset makes the next
 * generation's genesis and key and points every process at it in one checked commit; the reset
 * whose commit moved the generation deletes the generations before it. Resets come at most once
 * per {@link LAB_RESET_INTERVAL_MS}, and a practice ledger still empty is not reset at all.
 * @module
 */
import { refusal } from "../errors.ts";
import {
  backoff,
  LIST_BATCH_MAX,
  listEntries,
  MAX_ATTEMPTS,
  readRetrying,
  tryCommit,
} from "./kv_calls.ts";
import { BATCH_MAX_MUTATIONS } from "./batches.ts";
import { type KeyCountRecord, ledgerKeys, type VoteCountRecord } from "./layout.ts";
import { createStore, type LedgerCapacity, type Store } from "./mod.ts";
import { base64urlToBytes, bytesToBase64url } from "../../lib/protocol/bytes.ts";
import {
  cardKeyPair,
  describeCardSet,
  PRACTICE_ROUND,
  practiceCards,
} from "../../lib/protocol/cards.ts";

/** First part of every key of the practice ledger; no key of the election's starts with it. */
export const LAB_PREFIX = "lab";

/** The number of the current generation: the one key of the lab outside every generation. */
export const LAB_GENERATION_KEY: Deno.KvKey = [LAB_PREFIX, "cfg", "generation"];

/**
 * The value under {@link LAB_GENERATION_KEY}: the generation, and when the reset that started it
 * committed, ms since the epoch. A record without `startedAt` (the first generation, made at the
 * first start, or one kept by an older server) may be reset at once.
 */
export type GenerationRecord = { generation: number; startedAt?: number };

/** The least time between two resets of the practice ledger, ms (protocol §4.7). */
export const LAB_RESET_INTERVAL_MS = 10_000;

/** Memory for the practice ledger's key records: 1 MiB, about 230 records (protocol §4.7). */
export const LAB_RECORD_BUDGET = 1024 * 1024;

/** The KV prefix of generation `generation` of the practice ledger. */
export function labPrefix(generation: number): Deno.KvKey {
  return [LAB_PREFIX, generation];
}

/** Options of {@link createLabLedger}: its bounds (protocol §6), a clock, the reset's batches. */
export type LabOptions = {
  /** Most keys the practice ledger holds (`LAB_MAX_KEYS`). */
  maxKeys: number;
  /** Most votes the practice ledger accepts (`LAB_MAX_VOTES`). */
  maxVotes: number;
  /** Clock for the genesis timestamps and the reset interval, ms since the epoch. */
  now?: () => number;
  /** Most deletions per commit of a reset; {@link BATCH_MAX_MUTATIONS} by default. */
  maxMutations?: number;
  /** The least time between two resets, ms; {@link LAB_RESET_INTERVAL_MS} by default. */
  resetIntervalMs?: number;
};

/** The practice ledger: the store of its current generation, and the reset. */
export type LabLedger = {
  /** Most keys and votes, as configured. */
  readonly maxKeys: number;
  readonly maxVotes: number;
  /**
   * The store of the current generation, read from KV on every call, so a reset made by any
   * process is followed by the next request; the store of one generation is held at a time.
   */
  current(): Promise<Store>;
  /** The current generation's number and its store, read together. */
  open(): Promise<{ generation: number; store: Store }>;
  /** The current generation's number, read from KV. */
  generation(): Promise<number>;
  /**
   * Starts a fresh practice ledger (new genesis, new key) and answers its store. A reset that
   * lost to a concurrent one answers that one's fresh ledger, and one of a ledger that holds no key
   * and no vote answers it unchanged; 429 `reset_too_soon` within `resetIntervalMs` of the reset
   * that started the current generation.
   */
  reset(): Promise<Store>;
  /**
   * The current generation's carded practice directory (protocol §4.7): a store under
   * `["lab", generation, "cards"]` that admits keys with the public practice cards only.
   */
  carded(): Promise<{ generation: number; store: Store }>;
};

/** The refusal of a key or vote beyond the practice ledger's bound: 409 `lab_full`. */
export function labFull(what: "keys" | "votes", max: number): Error {
  return refusal(
    "lab_full",
    `The attack lab's practice ledger is full: it holds at most ${max} ${what}. Start a fresh ` +
      `practice ledger with the lab page's button, or with POST /api/lab/reset`,
  );
}

/**
 * The refusal of a reset within `intervalMs` of the one that started the current generation, which
 * may come again in `waitMs`: 429 `reset_too_soon` with `Retry-After` in whole seconds.
 */
export function resetTooSoon(intervalMs: number, waitMs: number): Error {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return refusal(
    "reset_too_soon",
    `The practice ledger was started afresh moments ago, and is started afresh at most once ` +
      `every ${intervalMs / 1000} s: try again in ${seconds} s`,
    { headers: { "Retry-After": String(seconds) } },
  );
}

/**
 * The practice ledger over `kv`, created at generation 1 on the first start. Its store keeps key
 * records within {@link LAB_RECORD_BUDGET}, and its tally holds at most `maxVotes` payloads.
 */
export async function createLabLedger(kv: Deno.Kv, options: LabOptions): Promise<LabLedger> {
  const { maxKeys, maxVotes } = options;
  const now = options.now ?? Date.now;
  const intervalMs = options.resetIntervalMs ?? LAB_RESET_INTERVAL_MS;
  const capacity: LedgerCapacity = {
    keys: { max: maxKeys, refuse: (max) => labFull("keys", max) },
    votes: { max: maxVotes, refuse: (max) => labFull("votes", max) },
  };
  const open = (generation: number) =>
    createStore(kv, {
      prefix: labPrefix(generation),
      capacity,
      recordBudgetBytes: LAB_RECORD_BUDGET,
      now,
    });
  let held: { generation: number; store: Promise<Store> } | null = null;
  let carded: { generation: number; store: Promise<Store> } | null = null;
  const practice = practiceCards().map(({ bytes }) =>
    bytesToBase64url(cardKeyPair(bytes).publicKey)
  );
  const practiceSet = {
    round: PRACTICE_ROUND,
    ...describeCardSet(practice.map((key) => base64urlToBytes(key, 32))),
    members: new Set(practice),
  };
  // The reset this process is making: a reset asked for meanwhile answers what it answers.
  let resetting: Promise<Store> | null = null;

  /** The store of `generation`, or of the newer one held already, with its number. */
  function storeOf(generation: number): { generation: number; store: Promise<Store> } {
    if (held === null || held.generation < generation) {
      const store = open(generation);
      const entry = { generation, store };
      held = entry;
      store.catch(() => {
        if (held === entry) held = null;
      });
    }
    return held;
  }

  /** Holds `store`, of `generation`, unless a newer generation's store is held already. */
  function hold(generation: number, store: Promise<Store>): void {
    if (held === null || held.generation < generation) held = { generation, store };
  }

  /**
   * One reset: decided from one read of the generation record (429 before anything is written,
   * nothing written for an empty ledger), then the checked commit. Only the reset whose commit
   * moved the generation deletes the older ones; one that lost answers the winner's ledger.
   */
  async function resetOnce(): Promise<Store> {
    for (let attempt = 0;; attempt++) {
      const entry = await readRetrying(() => kv.get<GenerationRecord>(LAB_GENERATION_KEY));
      const at = now();
      const startedAt = entry.value?.startedAt;
      if (startedAt !== undefined && at - startedAt < intervalMs) {
        throw resetTooSoon(intervalMs, startedAt + intervalMs - at);
      }
      const generation = entry.value?.generation ?? 0;
      if (generation > 0 && await isEmpty(kv, generation)) return await storeOf(generation).store;
      const next = generation + 1;
      // Genesis and key are in place before any process is pointed at the new generation.
      const fresh = open(next);
      await fresh;
      const record: GenerationRecord = { generation: next, startedAt: at };
      const res = await tryCommit(kv.atomic().check(entry).set(LAB_GENERATION_KEY, record));
      // A lock error leaves the outcome unknown: the record shows whether this commit landed (a
      // concurrent reset of the same millisecond would pass too; deleting twice is harmless).
      const won = res === null ? await isCurrent(kv, record) : res.ok;
      if (won) {
        hold(next, fresh);
        await deleteGenerationsBefore(kv, next, options.maxMutations);
        return await fresh;
      }
      // Lost to a concurrent reset, which made this same generation (or a newer one meanwhile):
      // its fresh ledger is the answer, and its deletions are its own.
      const current = await currentGeneration(kv);
      if (current >= next) {
        if (current === next) hold(next, fresh);
        return await storeOf(current).store;
      }
      if (attempt >= MAX_ATTEMPTS) throw new Error("Resetting the practice ledger kept failing");
      await backoff(attempt);
    }
  }

  const lab: LabLedger = {
    maxKeys,
    maxVotes,
    async current() {
      return (await lab.open()).store;
    },
    async open() {
      const entry = storeOf(await currentGeneration(kv));
      return { generation: entry.generation, store: await entry.store };
    },
    generation: () => currentGeneration(kv),
    async carded() {
      const generation = await currentGeneration(kv);
      if (carded === null || carded.generation !== generation) {
        const store = createStore(kv, {
          prefix: [...labPrefix(generation), "cards"],
          capacity: { keys: { max: maxKeys, refuse: (max) => labFull("keys", max) } },
          recordBudgetBytes: LAB_RECORD_BUDGET,
          cards: practiceSet,
          now,
        });
        const entry = { generation, store };
        carded = entry;
        store.catch(() => {
          if (carded === entry) carded = null;
        });
      }
      return { generation, store: await carded.store };
    },
    reset() {
      if (resetting === null) {
        const run = resetOnce();
        resetting = run;
        run.then(() => {}, () => {}).finally(() => {
          if (resetting === run) resetting = null;
        });
      }
      return resetting;
    },
  };
  await lab.current();
  return lab;
}

/** The current generation's number; the first start makes it 1. */
async function currentGeneration(kv: Deno.Kv): Promise<number> {
  for (let attempt = 0;; attempt++) {
    const entry = await readRetrying(() => kv.get<GenerationRecord>(LAB_GENERATION_KEY));
    if (entry.value) return entry.value.generation;
    const first: GenerationRecord = { generation: 1 };
    const res = await tryCommit(kv.atomic().check(entry).set(LAB_GENERATION_KEY, first));
    if (res?.ok) return first.generation;
    if (attempt >= MAX_ATTEMPTS) throw new Error("Could not start the practice ledger");
    await backoff(attempt);
  }
}

/** True when generation `generation` holds no key and has accepted no vote: nothing to reset. */
async function isEmpty(kv: Deno.Kv, generation: number): Promise<boolean> {
  const keys = ledgerKeys(labPrefix(generation));
  const [registered, accepted] = await readRetrying(() =>
    kv.getMany<[KeyCountRecord, VoteCountRecord]>([keys.keyCount(), keys.voteCount()])
  );
  return (registered.value?.total ?? 0) === 0 && (accepted.value?.total ?? 0) === 0;
}

/** True when the generation record is `record`. */
async function isCurrent(kv: Deno.Kv, record: GenerationRecord): Promise<boolean> {
  const entry = await readRetrying(() => kv.get<GenerationRecord>(LAB_GENERATION_KEY));
  return entry.value?.generation === record.generation &&
    entry.value.startedAt === record.startedAt;
}

/**
 * Deletes every key of the generations before `generation`, at most `maxMutations` per commit,
 * listing again after each commit until none is left (a request that was under way on an old
 * generation may still write a few keys meanwhile; the next reset deletes any that come later).
 * Answers how many keys were deleted.
 */
export async function deleteGenerationsBefore(
  kv: Deno.Kv,
  generation: number,
  maxMutations = BATCH_MAX_MUTATIONS,
): Promise<number> {
  const range = { start: labPrefix(0), end: labPrefix(generation) };
  let deleted = 0;
  let failures = 0;
  for (;;) {
    const keys: Deno.KvKey[] = [];
    await listEntries(kv, {
      selector: range,
      options: { limit: maxMutations, batchSize: Math.min(maxMutations, LIST_BATCH_MAX) },
      restart: () => keys.length = 0,
      each: (entry) => keys.push(entry.key),
    });
    if (keys.length === 0) return deleted;
    const op = kv.atomic();
    for (const key of keys) op.delete(key);
    // Deletes are idempotent: after a lock error the next listing shows what is left.
    if ((await tryCommit(op))?.ok) {
      deleted += keys.length;
    } else {
      if (failures >= MAX_ATTEMPTS) throw new Error("Deleting the old practice ledger failed");
      await backoff(failures++);
    }
  }
}
