/**
 * Browser-safe. A pool of audit workers (./check_worker.ts), one per core, behind the audit's
 * VoteChecker. Each ring member is checked once (./audit_keys.ts): the keys a chunk of votes needs
 * that no worker has checked yet are split between the workers, their key data (with wide or narrow
 * combs while the budgets have room, else checked keys) kept in this thread; then the chunk is cut
 * into slices, each sent with its members' key data to the least busy worker, verifications in
 * order. The board starts its workers from the page's bundle, the command line from the module.
 * @module
 */
import { HEX32_PATTERN } from "../../protocol/bytes.ts";
import type { VoteRecord } from "../../protocol/schemas.ts";
import {
  createKeyStore,
  KEY_FORMS,
  type KeyData,
  type KeyForm,
  type KeyStoreOptions,
} from "./audit_keys.ts";
import type { VoteChecker, VoteVerification } from "./vote_checks.ts";

/**
 * What the page sends a worker: keys to check and give in a form, or a numbered slice of votes
 * with the key data of their ring members (by hex key) that this thread holds.
 */
export type CheckRequest =
  | { id: number; type: "keys"; keys: string[]; form: KeyForm }
  | { id: number; type: "votes"; votes: VoteRecord[]; members: [string, Uint8Array][] };

/** What a worker answers: each key's precomputation or refusal, a slice's verifications, or why not. */
export type CheckResponse =
  | { id: number; type: "keys"; keys: KeyData[]; error?: undefined }
  | { id: number; type: "votes"; verifications: VoteVerification[]; error?: undefined }
  | { id: number; error: string; type?: undefined };

/** Votes per message: small enough to balance the workers, large enough to amortize a message. */
const SLICE = 25;

/** Keys per message to precompute: about as much work as a slice of votes. */
const KEY_BATCH = 100;

/**
 * Keys per message of each form, relative to KEY_BATCH: a checked key costs about a third of a
 * precomputation, a key with narrow combs about four fifths.
 */
const BATCH_FACTOR: Record<KeyForm, number> = { combs: 1, narrow: 1.25, checked: 3 };

/** Relative work of a vote against a key's precomputation, to find the least busy worker. */
const VOTE_COST = 4;

/**
 * How long a worker with work queued may stay silent before it is taken for hung: far above
 * the time one message takes, so only a worker that stopped answering reaches it.
 */
export const WORKER_SILENCE_MS = 60_000;

/** The part of a Worker the pool uses (a test can stand in for it). */
export type PoolWorker = Pick<Worker, "postMessage" | "terminate" | "onmessage" | "onerror">;

/**
 * A running pool: its checker, how many workers still run, how many keys it has precomputed (each
 * key counted once, however many votes it is in), how to let go of the precomputations it keeps
 * (a later check precomputes again the keys it needs), and how to stop the workers.
 */
export type VoteCheckPool = {
  check: VoteChecker;
  readonly size: number;
  readonly keysPrecomputed: number;
  /** How many keys the pool keeps key data for now, by form. */
  readonly keysKept: Record<KeyForm, number>;
  releaseKeys(): void;
  close(): void;
};

/**
 * Options: the workers' silence bound, and the byte budgets of each form of key data kept
 * (./audit_keys.ts; the directory's size comes with the votes).
 */
export type VoteCheckPoolOptions = {
  silenceMs?: number;
  budgets?: Omit<KeyStoreOptions, "directorySize">;
};

type Request = CheckRequest extends infer R ? R extends unknown ? Omit<R, "id"> : never : never;

type Pending = {
  resolve: (response: CheckResponse) => void;
  reject: (error: Error) => void;
  cost: number;
};

type Slot = {
  worker: PoolWorker;
  pending: Map<number, Pending>;
  queued: number;
  alive: boolean;
  watchdog: ReturnType<typeof setTimeout> | undefined;
};

/**
 * Starts `size` workers with `start` and answers the pool over them. A worker that fails or stays
 * silent for `silenceMs` with work queued is stopped and never sent to again, its slices
 * rejected (a key it owed is then checked by the worker that meets it); once none is left, every
 * check rejects.
 */
export function createVoteCheckPool(
  size: number,
  start: () => PoolWorker,
  { silenceMs = WORKER_SILENCE_MS, budgets = {} }: VoteCheckPoolOptions = {},
): VoteCheckPool {
  let nextId = 0;
  let keysPrecomputed = 0;
  let keys = createKeyStore(budgets);
  /** The directory size the store was made for: the store is remade for another. */
  let storeFor: number | undefined;
  /** Keys being checked, each by one worker, and when they will be in `keys`. */
  const precomputing = new Map<string, Promise<void>>();
  /** How many of them will arrive in each form. */
  const pending: Record<KeyForm, number> = { combs: 0, narrow: 0, checked: 0 };

  /** Stops `slot` for good and rejects everything it still owed. */
  function retire(slot: Slot, reason: string) {
    if (!slot.alive) return;
    slot.alive = false;
    clearTimeout(slot.watchdog);
    slot.worker.terminate();
    for (const job of slot.pending.values()) job.reject(new Error(reason));
    slot.pending.clear();
    slot.queued = 0;
  }

  /** (Re)arms the silence timer of `slot` while it owes answers. */
  function watch(slot: Slot) {
    clearTimeout(slot.watchdog);
    slot.watchdog = slot.pending.size === 0 ? undefined : setTimeout(
      () => retire(slot, `Audit worker did not answer within ${silenceMs / 1000} s`),
      silenceMs,
    );
  }

  const slots = Array.from({ length: Math.max(1, size) }, () => {
    const slot: Slot = {
      worker: start(),
      pending: new Map(),
      queued: 0,
      alive: true,
      watchdog: undefined,
    };
    slot.worker.onmessage = ({ data }: MessageEvent<CheckResponse>) => {
      const job = slot.pending.get(data.id);
      if (!job) return;
      slot.pending.delete(data.id);
      slot.queued -= job.cost;
      watch(slot);
      if (data.error !== undefined) job.reject(new Error(`Audit worker: ${data.error}`));
      else job.resolve(data);
    };
    slot.worker.onerror = (event) => {
      event.preventDefault();
      retire(slot, `Audit worker failed: ${event.message || "no reason given"}`);
    };
    return slot;
  });

  /** Sends `request` to the least busy live worker; its answer, of the same type. */
  function send<T extends Request>(
    request: T,
    cost: number,
  ): Promise<Extract<CheckResponse, { type: T["type"] }>> {
    const live = slots.filter((s) => s.alive);
    if (live.length === 0) {
      return Promise.reject(new Error("Every audit worker has failed; reload the page to audit"));
    }
    const target = live.reduce((a, b) => (b.queued < a.queued ? b : a));
    const id = nextId++;
    target.queued += cost;
    return new Promise((resolve, reject) => {
      target.pending.set(id, {
        resolve: resolve as (response: CheckResponse) => void,
        reject,
        cost,
      });
      if (target.pending.size === 1) watch(target);
      target.worker.postMessage({ ...request, id } as CheckRequest);
    });
  }

  /**
   * Checks, split between the workers, the keys of `wanted` that are neither kept nor being
   * checked, as many as the store has room for, each in the form the store has room for (combs
   * first); settles once each of them is kept, or was given up (a worker failed). Null when there
   * is nothing to wait for. A key left out (the store is full, or a worker failed) is checked by the
   * worker verifying its vote, each time: a full store takes no more keys, since pushing keys out
   * for others would only bring through this thread, and leave for its collector, the data of every
   * ring member met again later.
   */
  function precompute(wanted: Set<string>): Promise<unknown> | null {
    const fresh: Record<KeyForm, string[]> = { combs: [], narrow: [], checked: [] };
    for (const key of wanted) {
      if (keys.has(key) || precomputing.has(key)) continue;
      const form = keys.roomFor(pending);
      if (form === null) break;
      fresh[form].push(key);
      pending[form]++;
    }
    for (const form of KEY_FORMS) {
      const batchSize = Math.round(KEY_BATCH * BATCH_FACTOR[form]);
      for (let i = 0; i < fresh[form].length; i += batchSize) {
        const batch = fresh[form].slice(i, i + batchSize);
        const cost = batch.length / BATCH_FACTOR[form];
        const store = keys;
        const done = send({ type: "keys", keys: batch, form }, cost).then(
          (answer) => {
            // Answers for a store let go of meanwhile are dropped with it.
            if (keys !== store) return;
            answer.keys.forEach((data, k) => keys.set(batch[k], data));
            keysPrecomputed += batch.length;
          },
          () => {},
        ).finally(() => {
          batch.forEach((key) => precomputing.delete(key));
          pending[form] -= batch.length;
        });
        for (const key of batch) precomputing.set(key, done);
      }
    }
    const waits = [...wanted].flatMap((key) => precomputing.get(key) ?? []);
    return waits.length === 0 ? null : Promise.all(waits);
  }

  /** Sends `votes` in slices, each with its members' precomputations; verifications in order. */
  async function verify(votes: VoteRecord[]): Promise<VoteVerification[]> {
    const slices: Promise<VoteVerification[]>[] = [];
    for (let i = 0; i < votes.length; i += SLICE) {
      const slice = votes.slice(i, i + SLICE);
      const request = { type: "votes" as const, votes: slice, members: membersOf(slice) };
      slices.push(send(request, slice.length * VOTE_COST).then((a) => a.verifications));
    }
    return (await Promise.all(slices)).flat();
  }

  /** The key data kept for the ring members of `votes`, once each. */
  function membersOf(votes: readonly VoteRecord[]): [string, Uint8Array][] {
    const out = new Map<string, Uint8Array>();
    for (const vote of votes) {
      for (const key of vote.publicKeys ?? []) {
        const data = keys.get(key);
        if (data !== undefined && typeof data !== "string") out.set(key, data);
      }
    }
    return [...out];
  }

  return {
    get size() {
      return slots.filter((s) => s.alive).length;
    },
    get keysPrecomputed() {
      return keysPrecomputed;
    },
    get keysKept() {
      return keys.kept;
    },
    check(votes, { directory } = {}) {
      if (directory !== undefined && directory.size !== storeFor) {
        storeFor = directory.size;
        keys = createKeyStore({ ...budgets, directorySize: storeFor });
      }
      // Once a directory was given, the store is kept for its keys: votes checked without one (the
      // board's listed votes) use what it holds and leave the rest to the workers, so that keys
      // outside the directory never take its room.
      if (directory === undefined && storeFor !== undefined) return verify(votes);
      const wanted = new Set<string>();
      for (const vote of votes) {
        for (const key of vote.publicKeys ?? []) {
          if (HEX32_PATTERN.test(key) && (directory?.has(key) ?? true)) wanted.add(key);
        }
      }
      // Slices are sent at once when every key is kept: nothing waits that need not.
      const keysReady = precompute(wanted);
      return keysReady === null ? verify(votes) : keysReady.then(() => verify(votes));
    },
    releaseKeys() {
      keys = createKeyStore({ ...budgets, directorySize: storeFor });
    },
    close() {
      for (const slot of slots) retire(slot, "Audit workers closed");
    },
  };
}
