/**
 * The rounds of a room (protocol §4.9): round 1 is the election's ledger; every later round is a
 * ledger of its own, the same store over the KV prefix ["round", id], started by the presenter and
 * made current in one checked commit that closes the round before it. Round records never change
 * once written, so a process keeps them. The write path takes the current round's id as the
 * process last read it when it names the round written to (every commit checks the round's phase
 * record), and reads it again before refusing. A round's phases are in ./round_phases.ts.
 * @module
 */
import type * as wire from "../../lib/protocol/schemas.ts";
import { ROUND_INTERVAL_MS, ROUND_MIN_VOTERS } from "../../lib/protocol/schemas.ts";
import { busy, refusal } from "../errors.ts";
import { GENESIS_PREV_HASH } from "../../lib/protocol/chain.ts";
import { bytesToBase64 } from "../../lib/protocol/bytes.ts";
import {
  backoff,
  LIST_BATCH_MAX,
  listEntries,
  MAX_ATTEMPTS,
  readRetrying,
  tryCommit,
} from "./kv_calls.ts";
import { createStore, directoryBound, type Store } from "./mod.ts";
import { type CardSets, createCardSets, roundCardSet, storeCardsOf } from "./cards.ts";
import {
  closedPhase,
  currentPhase,
  electionGate,
  groupsOf,
  joinDeadline,
  openVoting,
  phaseKey,
  type PhaseRecord,
  roundGate,
  roundInfo,
  roundPrefix,
  type RoundRecord,
  ROUNDS_PREFIX,
} from "./round_phases.ts";

export { ROUND_LEDGER_PREFIX, roundPrefix, ROUNDS_PREFIX } from "./round_phases.ts";
export type { PhaseRecord, RoundRecord };

/** Where the rounds keep their records (protocol §5.2). */
export const roundKeys = {
  /** {@link CurrentRecord}: the round the voting page shows. */
  current: (): Deno.KvKey => [ROUNDS_PREFIX, "cfg", "current"],
  /** {@link AdminRecord}: the presenter's token when `ADMIN_TOKEN` is unset. */
  admin: (): Deno.KvKey => [ROUNDS_PREFIX, "cfg", "admin"],
  /** {@link RoundRecord} of round `id` (2 and up). */
  round: (id: number): Deno.KvKey => [ROUNDS_PREFIX, "round", id],
  /** {@link PhaseRecord} of round `id` (./round_phases.ts). */
  phase: phaseKey,
  /** `true` once the presenter declared round `id`'s votes relayed (never the relay's address). */
  relayed: (id: number): Deno.KvKey => [ROUNDS_PREFIX, "round", id, "relayed"],
};

/** Memory for one round's key records: 2 MiB, about 460 records, a large room's worth. */
export const ROUND_RECORD_BUDGET = 2 * 1024 * 1024;

/**
 * The most keys one round's directory holds: fifteen full groups, far beyond any room; one more
 * is refused with 409 `directory_full`.
 */
export const ROUND_KEY_CAPACITY = 1_000;

/** How often a start waits for a racing start of the other kind to commit its id first. */
const GENESIS_WAITS = 200;

/** The value under {@link roundKeys.current}. */
export type CurrentRecord = { id: number };
/** The value under {@link roundKeys.admin}. */
export type AdminRecord = { token: string };

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
  /**
   * True when round `id` is current. A remembered yes of any age is taken as it is: every key and
   * vote commit checks its round's phase record, so a round closed since is refused there (409
   * `round_closed`), never written. A no is read again before it counts.
   */
  isCurrent(id: number): Promise<boolean>;
  /** Round `id`, or null when there is none. */
  round(id: number): Promise<RoundRecord | null>;
  /** Declares round `id` (2 and up) relayed; idempotent. */
  declareRelayed(id: number): Promise<void>;
  /** The store of round `id` (which must exist): the election's for round 1. */
  storeOf(id: number): Promise<Store>;
  /** Starts a round with `body` and makes it current, closing the one before; answers its id. */
  start(body: wire.RoundStart): Promise<number>;
  /**
   * Round `id`'s phase record (2 and up), null while joining; read from KV unless this process saw
   * it voting already (it then changes only by closing, which every commit checks). Past the join
   * deadline, voting is opened first if enough keys joined.
   */
  phase(id: number): Promise<PhaseRecord | null>;
  /** Opens voting in round `id` (2 and up; the presenter's call), idempotent. */
  openVoting(id: number): Promise<PhaseRecord>;
  /** The groups of round `id` (2 and up) and its pending keys (protocol §2.8). */
  groups(id: number): Promise<wire.RoundGroups>;
  /** The card sets of the database (protocol §2.11). */
  readonly cardSets: CardSets;
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
  // Round 1 takes keys and votes until a later round closes it, checked in every commit.
  options.election.setGate(electionGate());

  const records = new Map<number, RoundRecord>([[1, first]]);
  const stores = new Map<number, Promise<Store>>([[1, Promise.resolve(options.election)]]);
  /** Phase records seen voting: they change only by closing, which every commit checks. */
  const voting = new Map<number, PhaseRecord>();
  const cardSets = createCardSets(kv);
  const storeFor = async (record: RoundRecord) =>
    createStore(kv, {
      ...(record.cards ? { cards: await storeCardsOf(cardSets, record) } : {}),
      prefix: roundPrefix(record.id),
      now,
      recordBudgetBytes: ROUND_RECORD_BUDGET,
      capacity: { keys: directoryBound(ROUND_KEY_CAPACITY) },
      gate: roundGate(kv, record, now),
    });
  /** The record of round `id` (2 and up), or 404 `unknown_round`. */
  const laterRound = async (id: number) => {
    const record = id === 1 ? null : await rounds.round(id);
    if (!record) throw refusal("unknown_round", `No round "${id}"`);
    return record;
  };
  const seen = (id: number, phase: PhaseRecord | null) => {
    if (phase?.phase === "voting") voting.set(id, phase);
    else voting.delete(id);
    return phase;
  };
  let cached: { id: number; at: number } | null = null;
  let reading: Promise<number> | null = null;
  let listing: { at: number; value: wire.RoundList } | null = null;

  async function readCurrent(): Promise<number> {
    const entry = await readRetrying(() => kv.get<CurrentRecord>(roundKeys.current()));
    const id = entry.value?.id ?? 1;
    cached = { id, at: now() };
    return id;
  }

  const rounds: Rounds = {
    adminToken,
    cardSets,
    ttlMs: ttl,
    async list() {
      // Every open page asks every few seconds: one listing a second serves them all.
      if (listing !== null && now() - listing.at < ttl) return listing.value;
      // Current first: it is set in the commit that writes its round, so a listing made after
      // it always holds it, even when another process starts a round in between.
      const current = await readCurrent();
      const listed: RoundRecord[] = [];
      // Each round's phase record sits beside its record: one listing reads both.
      const phases = new Map<number, PhaseRecord>();
      const relayed = new Set<number>();
      await listEntries<RoundRecord | PhaseRecord>(kv, {
        selector: { prefix: [ROUNDS_PREFIX, "round"] },
        options: { batchSize: LIST_BATCH_MAX },
        restart: () => (listed.length = 0, phases.clear(), relayed.clear()),
        each: (entry) => {
          const id = entry.key[2] as number;
          if (entry.key[3] === "relayed") relayed.add(id);
          else if (entry.key.length === 4) phases.set(id, entry.value as PhaseRecord);
          else listed.push(entry.value as RoundRecord);
        },
      });
      for (const record of listed) records.set(record.id, record);
      const last = listed.at(-1);
      // The current round past its join deadline opens here, read by every process every second.
      const deadline = last ? joinDeadline(last) : null;
      if (last?.id === current && !phases.has(last.id) && deadline !== null && now() >= deadline) {
        const phase = await currentPhase(kv, last, now);
        if (phase) phases.set(last.id, phase);
      }
      const value: wire.RoundList = {
        current,
        rounds: [
          {
            ...roundInfo(first, null),
            phase: current === 1 ? "voting" : "closed",
            openedAt: first.createdAt,
          },
          ...listed.map((record) => ({
            ...roundInfo(record, seen(record.id, phases.get(record.id) ?? null)),
            relayed: relayed.has(record.id),
          })),
        ],
      };
      listing = { at: now(), value };
      return value;
    },
    async current() {
      if (cached !== null && now() - cached.at < ttl) return cached.id;
      return await readCurrent();
    },
    async isCurrent(id) {
      if (cached !== null && cached.id === id) return true;
      // A no is read afresh (one read for all who ask at once), never taken from memory.
      reading ??= readCurrent().finally(() => reading = null);
      return await reading === id;
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
        store = rounds.round(id).then((record) => {
          if (!record) throw new Error(`No round ${id}`);
          return storeFor(record);
        });
        stores.set(id, store);
        store.catch(() => stores.delete(id));
      }
      return store;
    },
    async phase(id) {
      const known = voting.get(id);
      if (known && await rounds.current() === id) return known;
      return seen(id, await currentPhase(kv, await laterRound(id), now));
    },
    async declareRelayed(id) {
      await laterRound(id);
      // One value, only ever true: a commit that landed twice stores the same.
      const res = await tryCommit(kv.atomic().set(roundKeys.relayed(id), true));
      if (!res?.ok) throw new Error(`Declaring round ${id} relayed did not commit`);
      listing = null;
    },
    async openVoting(id) {
      const opened = await openVoting(kv, await laterRound(id), { now, manual: true });
      return seen(id, opened)!;
    },
    async groups(id) {
      const record = await laterRound(id);
      const phase = await rounds.phase(id);
      if (phase?.keysAtOpen == null) return groupsOf(record, phase, 0);
      const store = await rounds.storeOf(id);
      return groupsOf(record, phase, (await store.keyPage(0, 0)).total);
    },
    async start(body) {
      const cards = await roundCardSet(cardSets, body, ROUND_MIN_VOTERS.fallback);
      for (let attempt = 0;; attempt++) {
        const current = await readRetrying(() => kv.get<CurrentRecord>(roundKeys.current()));
        const closing = current.value?.id ?? 1;
        const closingPhase = await readRetrying(() => kv.get<PhaseRecord>(phaseKey(closing)));
        const last = await lastRoundId(kv);
        const id = last + 1;
        const record: RoundRecord = {
          id,
          question: body.question,
          choices: body.choices,
          createdAt: now(),
          blockIntervalMs: body.blockIntervalMs ?? ROUND_INTERVAL_MS.fallback,
          minVoters: body.minVoters ?? ROUND_MIN_VOTERS.fallback,
          lateJoiners: body.lateJoiners ?? false,
          ...(body.joinSeconds === undefined ? {} : { joinSeconds: body.joinSeconds }),
          ...(cards ? { cards } : {}),
        };
        // Genesis and key are in place before any process is pointed at the round. A start of
        // the other kind (carded or open) racing for this id may have made the genesis first: it
        // is left to that start, and this one takes the next id once it committed.
        const store = storeFor(record);
        const genesis = await (await store).block(0);
        if (genesis?.prev_hash !== (cards?.sha256 ?? GENESIS_PREV_HASH)) {
          if (attempt >= GENESIS_WAITS) throw busy(1);
          await backoff(attempt);
          continue;
        }
        // The round before is closed in the commit that makes this one current: a key or vote
        // committing into it later fails its check of that record (409 round_closed).
        const res = await tryCommit(
          kv.atomic()
            .check(current)
            .check(closingPhase)
            .check({ key: roundKeys.round(id), versionstamp: null })
            .set(roundKeys.round(id), record)
            .set(phaseKey(closing), closedPhase(closingPhase.value, id))
            .set(roundKeys.current(), { id } satisfies CurrentRecord),
        );
        // A commit that failed or threw may have landed all the same (over KV Connect, a write
        // whose reply was lost is sent again and fails its own checks): read back, never start
        // a second round for one request.
        if (res?.ok || await holdsRecord(kv, record)) {
          records.set(id, record);
          if (!stores.has(id)) stores.set(id, store);
          voting.delete(closing);
          listing = null;
          cached = { id, at: now() };
          return id;
        }
        if (attempt >= MAX_ATTEMPTS) throw new Error("Starting a round kept conflicting");
        await backoff(attempt);
      }
    },
  };
  // The vote path asks whether its round is current before reading a body, and a vote's read of
  // a ring of 8 leaves out the election's gate when it is known (./mod.ts voteInputs): both are
  // read at start, in one getMany, so a fresh instance's first vote costs no read for them.
  const [current] = await options.election.readGateWith([roundKeys.current()]);
  cached = { id: (current.value as CurrentRecord | null)?.id ?? 1, at: now() };
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
    // The last entry is the last round's record or its phase record: the id is the third part.
    each: (entry) => last = entry.key[2] as number,
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
