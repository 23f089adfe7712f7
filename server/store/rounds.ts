/**
 * The rounds of a room (protocol §4.9): round 1 is the election's ledger; every later round is a
 * ledger of its own, the same store over the KV prefix ["round", id], started by the presenter and
 * made current in one checked commit. Round records never change once written, so a process keeps
 * them; the current round's id is read again at most once a second for the vote path.
 * @module
 */
import type * as wire from "../../lib/protocol/schemas.ts";
import { ROUND_INTERVAL_MS } from "../../lib/protocol/schemas.ts";
import { bytesToBase64 } from "../../lib/protocol/bytes.ts";
import {
  backoff,
  LIST_BATCH_MAX,
  listEntries,
  MAX_ATTEMPTS,
  readRetrying,
  tryCommit,
} from "./kv_calls.ts";
import { createStore, type Store } from "./mod.ts";

/** First part of every key of the rounds' own records; no ledger key starts with it. */
export const ROUNDS_PREFIX = "rounds";
/** First part of the keys of every round's ledger but the first: ["round", id, …]. */
export const ROUND_LEDGER_PREFIX = "round";

/** Where the rounds keep their records (protocol §5.2). */
export const roundKeys = {
  /** {@link CurrentRecord}: the round the voting page shows. */
  current: (): Deno.KvKey => [ROUNDS_PREFIX, "cfg", "current"],
  /** {@link AdminRecord}: the presenter's token when `ADMIN_TOKEN` is unset. */
  admin: (): Deno.KvKey => [ROUNDS_PREFIX, "cfg", "admin"],
  /** {@link RoundInfo}-like record of round `id` (2 and up). */
  round: (id: number): Deno.KvKey => [ROUNDS_PREFIX, "round", id],
};

/** The KV prefix of round `id`'s ledger; round 1 is the election's, with no prefix. */
export function roundPrefix(id: number): Deno.KvKey {
  return id === 1 ? [] : [ROUND_LEDGER_PREFIX, id];
}

/** Memory for one round's key records: 2 MiB, about 460 records, a large room's worth. */
export const ROUND_RECORD_BUDGET = 2 * 1024 * 1024;

/** The value under {@link roundKeys.current}. */
export type CurrentRecord = { id: number };
/** The value under {@link roundKeys.admin}. */
export type AdminRecord = { token: string };
/** A round as stored: what `POST /api/rounds` was given, its interval and when it started. */
export type RoundRecord = wire.RoundInfo;

/** Options of {@link createRounds}. */
export type RoundsOptions = {
  /** The election's store: round 1. */
  election: Store;
  /** Round 1's sealing interval: `BLOCK_INTERVAL_MS`, or a minute under the cron. */
  electionIntervalMs: number;
  /** `ADMIN_TOKEN`, or null to make one and keep it in KV for every process. */
  adminToken: string | null;
  /** Clock, ms since the epoch. */
  now?: () => number;
  /** How long the current round's id, the listing and an open block's count may be reused, ms. */
  currentTtlMs?: number;
};

/** The rounds of one database: their list, their stores and the presenter's token. */
export type Rounds = {
  /** The presenter's token. */
  readonly adminToken: string;
  /** How long what is read from KV for every page (current round, listing, counts) is reused. */
  readonly ttlMs: number;
  /** Every round by ascending id, and the current one (read from KV at most `currentTtlMs` ago). */
  list(): Promise<wire.RoundList>;
  /** The current round's id, read from KV at most `currentTtlMs` ago. */
  current(): Promise<number>;
  /** Round `id`, or null when there is none. */
  round(id: number): Promise<RoundRecord | null>;
  /** The store of round `id` (which must exist): the election's for round 1. */
  storeOf(id: number): Promise<Store>;
  /** Starts a round with `body` and makes it current; answers its id. */
  start(body: wire.RoundStart): Promise<number>;
};

/** The rounds over `kv`; makes the presenter's token on the first start when none is set. */
export async function createRounds(kv: Deno.Kv, options: RoundsOptions): Promise<Rounds> {
  const now = options.now ?? Date.now;
  const ttl = options.currentTtlMs ?? 1000;
  const adminToken = options.adminToken ?? await ensureAdminToken(kv);
  const first: RoundRecord = {
    id: 1,
    question: "",
    choices: [],
    createdAt: (await options.election.block(0))?.timestamp ?? 0,
    blockIntervalMs: options.electionIntervalMs,
  };
  const records = new Map<number, RoundRecord>([[1, first]]);
  const stores = new Map<number, Promise<Store>>([[1, Promise.resolve(options.election)]]);
  let cached: { id: number; at: number } | null = null;
  let listing: { at: number; value: wire.RoundList } | null = null;

  async function readCurrent(): Promise<number> {
    const entry = await readRetrying(() => kv.get<CurrentRecord>(roundKeys.current()));
    const id = entry.value?.id ?? 1;
    cached = { id, at: now() };
    return id;
  }

  const rounds: Rounds = {
    adminToken,
    ttlMs: ttl,
    async list() {
      // Every open page asks every few seconds: one listing a second serves them all.
      if (listing !== null && now() - listing.at < ttl) return listing.value;
      // Current first: it is set in the commit that writes its round, so a listing made after
      // it always holds it, even when another process starts a round in between.
      const current = await readCurrent();
      const listed: RoundRecord[] = [first];
      await listEntries<RoundRecord>(kv, {
        selector: { prefix: [ROUNDS_PREFIX, "round"] },
        options: { batchSize: LIST_BATCH_MAX },
        restart: () => listed.length = 1,
        each: (entry) => listed.push(entry.value),
      });
      for (const record of listed) records.set(record.id, record);
      const value = { current, rounds: listed };
      listing = { at: now(), value };
      return value;
    },
    async current() {
      if (cached !== null && now() - cached.at < ttl) return cached.id;
      return await readCurrent();
    },
    async round(id) {
      const known = records.get(id);
      if (known) return known;
      const entry = await readRetrying(() => kv.get<RoundRecord>(roundKeys.round(id)));
      if (entry.value) records.set(id, entry.value);
      return entry.value;
    },
    storeOf(id) {
      let store = stores.get(id);
      if (!store) {
        store = createStore(kv, {
          prefix: roundPrefix(id),
          now,
          recordBudgetBytes: ROUND_RECORD_BUDGET,
        });
        stores.set(id, store);
        store.catch(() => stores.delete(id));
      }
      return store;
    },
    async start(body) {
      for (let attempt = 0;; attempt++) {
        const current = await readRetrying(() => kv.get<CurrentRecord>(roundKeys.current()));
        const last = await lastRoundId(kv);
        const id = last + 1;
        const record: RoundRecord = {
          id,
          question: body.question,
          choices: body.choices,
          createdAt: now(),
          blockIntervalMs: body.blockIntervalMs ?? ROUND_INTERVAL_MS.fallback,
        };
        // Genesis and key are in place before any process is pointed at the round.
        await rounds.storeOf(id);
        const res = await tryCommit(
          kv.atomic()
            .check(current)
            .check({ key: roundKeys.round(id), versionstamp: null })
            .set(roundKeys.round(id), record)
            .set(roundKeys.current(), { id } satisfies CurrentRecord),
        );
        // A commit that failed or threw may have landed all the same (over KV Connect, a write
        // whose reply was lost is sent again and fails its own checks): read back, never start
        // a second round for one request.
        if (res?.ok || await holdsRecord(kv, record)) {
          records.set(id, record);
          listing = null;
          cached = { id, at: now() };
          return id;
        }
        if (attempt >= MAX_ATTEMPTS) throw new Error("Starting a round kept conflicting");
        await backoff(attempt);
      }
    },
  };
  return rounds;
}

/** True when round `record.id` is stored as exactly `record` (its start time to the ms included). */
async function holdsRecord(kv: Deno.Kv, record: RoundRecord): Promise<boolean> {
  const stored = await readRetrying(() => kv.get<RoundRecord>(roundKeys.round(record.id)));
  return stored.value !== null && JSON.stringify(stored.value) === JSON.stringify(record);
}

/** The highest round id stored; 1 when no round was started. */
async function lastRoundId(kv: Deno.Kv): Promise<number> {
  let last = 1;
  await listEntries(kv, {
    selector: { prefix: [ROUNDS_PREFIX, "round"] },
    options: { reverse: true, limit: 1 },
    each: (entry) => last = entry.key[entry.key.length - 1] as number,
  });
  return last;
}

/** The presenter's token kept in KV: read, or made once with a check that none is there yet. */
async function ensureAdminToken(kv: Deno.Kv): Promise<string> {
  for (let attempt = 0;; attempt++) {
    const entry = await readRetrying(() => kv.get<AdminRecord>(roundKeys.admin()));
    if (entry.value) return entry.value.token;
    const token = bytesToBase64(crypto.getRandomValues(new Uint8Array(16)))
      .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    const res = await tryCommit(
      kv.atomic().check(entry).set(roundKeys.admin(), { token } satisfies AdminRecord),
    );
    if (res?.ok) return token;
    if (attempt >= MAX_ATTEMPTS) throw new Error("Could not store the presenter's token");
    await backoff(attempt);
  }
}

/**
 * The next seal tick of a ledger sealed every `intervalMs` on ticks aligned to the clock: the
 * first multiple of `intervalMs` after `now` (protocol §4.9).
 */
export function nextSealAt(now: number, intervalMs: number): number {
  return (Math.floor(now / intervalMs) + 1) * intervalMs;
}

/** True when a seal tick of `intervalMs` falls in (`previous`, `now`]. */
export function sealDue(previous: number, now: number, intervalMs: number): boolean {
  return Math.floor(now / intervalMs) > Math.floor(previous / intervalMs);
}
