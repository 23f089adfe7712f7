/**
 * The verifier on a pool of worker threads (./worker.ts), one per core by default, so ingest and
 * registration use every core while the request thread only parses, reads and commits.
 * @module
 */
import { DEFAULT_MEMBER_BUDGET } from "../../lib/protocol/member_cache.ts";
import {
  DEFAULT_MAX_QUEUED,
  type JobResult,
  type MemberStats,
  type Verifier,
  verifierBusy,
  type VerifierJob,
  type VerifierOptions,
  type WorkerReply,
  type WorkerRequest,
} from "./types.ts";

/** Options of {@link createVerifyPool}. */
export type VerifyPoolOptions = VerifierOptions & {
  /** Worker count; navigator.hardwareConcurrency by default, at least 1. */
  workers?: number;
  /** A job unanswered this long means its worker is stuck: it is replaced. */
  stallMs?: number;
  /** The worker module; tests substitute one that can be made to fail. */
  workerUrl?: URL;
  /** A worker not ready (loaded and warmed up) this long after its start is replaced. */
  startMs?: number;
};

/** A running pool: a {@link Verifier}, plus the count of workers replaced so far. */
export type VerifyPool = Verifier & { readonly size: number; readonly replaced: number };

type Pending = {
  id: number;
  job: VerifierJob;
  attempts: number;
  sentAt: number;
  resolve(value: unknown): void;
  reject(error: Error): void;
};
type Slot = {
  worker: Worker;
  /** Whether the worker has loaded and warmed up; a job is only timed for a stall from then on. */
  ready: boolean;
  /** When the worker was started (performance.now()). */
  startedAt: number;
  pending: Map<number, Pending>;
  stats: Map<number, (stats: MemberStats) => void>;
  /**
   * Jobs a failed worker held, retried on this one one at a time, alone, so that the job that
   * failed it fails only itself; while any is left the slot takes no other job if it can help it.
   */
  suspects: Pending[];
};

const DEFAULT_STALL_MS = 30_000;
const DEFAULT_START_MS = 120_000;
/**
 * Workers that fail before they are ready, one after another, before the pool gives up: a module
 * that cannot load or a warm-up that fails its own check fails every time.
 */
const MAX_START_FAILURES = 3;

function errorFrom(reply: { name: string; message: string }): Error {
  const ErrorType = reply.name === "RangeError"
    ? RangeError
    : reply.name === "TypeError"
    ? TypeError
    : Error;
  return new ErrorType(reply.message);
}

/**
 * Starts the verification workers. A job goes to the worker with the fewest outstanding jobs.
 * Workers hold no per-key state of their own beyond a least-recently-used cache of decoded
 * members, the process budget divided by the worker count: every verification brings its members'
 * stored precomputations along.
 *
 * A worker that fails (an uncaught error, or a job unanswered for `stallMs` once the worker has
 * loaded and warmed up, which can take many seconds on a busy machine) is terminated and replaced;
 * each job it held is sent once more, to the replacement, one at a time and alone — so the job that
 * failed the worker fails only itself again, and is answered 503 `busy`. `ready` settles once every worker has warmed up (warmUp in ./jobs.ts).
 */
export function createVerifyPool(opts: VerifyPoolOptions = {}): VerifyPool {
  const count = Math.max(1, opts.workers ?? navigator.hardwareConcurrency ?? 1);
  const maxQueued = opts.maxQueued ?? DEFAULT_MAX_QUEUED;
  const stallMs = opts.stallMs ?? DEFAULT_STALL_MS;
  const startMs = opts.startMs ?? DEFAULT_START_MS;
  const workerUrl = opts.workerUrl ?? new URL("./worker.ts", import.meta.url);
  const memberBudgetBytes = Math.floor(
    (opts.memberBudgetBytes ?? DEFAULT_MEMBER_BUDGET) / count,
  );
  let nextId = 1;
  let queued = 0;
  let replaced = 0;
  let closed = false;
  /** Why the pool gave up (workers kept failing before they were ready), once it has. */
  let broken: Error | undefined;
  let startFailures = 0;
  let allReady = () => {};
  let notReady = (_: Error) => {};
  const ready = new Promise<void>((resolve, reject) => {
    allReady = resolve;
    notReady = reject;
  });
  ready.catch(() => {}); // a caller that never awaits it must not see an unhandled rejection

  function startSlot(): Slot {
    const worker = new Worker(workerUrl, { type: "module" });
    const slot: Slot = {
      worker,
      ready: false,
      startedAt: performance.now(),
      pending: new Map(),
      stats: new Map(),
      suspects: [],
    };
    worker.onmessage = (event: MessageEvent<WorkerReply>) => {
      const reply = event.data;
      if ("ready" in reply) {
        slot.ready = true;
        startFailures = 0;
        // A worker replaced before it was ready counts once its replacement is.
        if (slots.every((s) => s.ready)) allReady();
        const now = performance.now();
        for (const pending of slot.pending.values()) pending.sentAt = now;
        return;
      }
      if ("stats" in reply) {
        slot.stats.get(reply.id)?.(reply.stats);
        slot.stats.delete(reply.id);
        return;
      }
      const pending = slot.pending.get(reply.id);
      if (!pending) return;
      slot.pending.delete(reply.id);
      queued--;
      if ("error" in reply) pending.reject(errorFrom(reply.error));
      else pending.resolve(reply.result);
      sendNextSuspect(slot);
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      replace(slot, `Verification worker failed: ${event.message}`);
    };
    worker.onmessageerror = () => replace(slot, "Verification worker sent an unreadable answer");
    worker.postMessage({ type: "configure", memberBudgetBytes } satisfies WorkerRequest);
    return slot;
  }

  const slots: Slot[] = Array.from({ length: count }, startSlot);

  function send(slot: Slot, pending: Pending): void {
    pending.sentAt = performance.now();
    slot.pending.set(pending.id, pending);
    slot.worker.postMessage(
      { type: "job", id: pending.id, job: pending.job } satisfies WorkerRequest,
    );
  }

  /**
   * The slot with the fewest outstanding jobs: ready slots that retry no suspect first, then any
   * that retries none (a cold one is warming up), then any.
   */
  function leastBusy(): Slot {
    const clear = slots.filter((slot) => slot.suspects.length === 0 && !isRetrying(slot));
    const warm = clear.filter((slot) => slot.ready);
    const pool = warm.length > 0 ? warm : clear.length > 0 ? clear : slots;
    return pool.reduce((best, slot) => slot.pending.size < best.pending.size ? slot : best);
  }

  /** True while `slot` runs a retried job. */
  function isRetrying(slot: Slot): boolean {
    for (const pending of slot.pending.values()) if (pending.attempts > 1) return true;
    return false;
  }

  /** Sends `slot` its next suspect once the one before it has been answered. */
  function sendNextSuspect(slot: Slot): void {
    if (isRetrying(slot)) return;
    const next = slot.suspects.shift();
    if (next) send(slot, next);
  }

  /**
   * Ends a failed worker, starts its replacement and gives its jobs one more chance; gives up
   * after MAX_START_FAILURES workers in a row failed before they were ready.
   */
  function replace(slot: Slot, reason: string): void {
    const index = slots.indexOf(slot);
    if (index < 0 || closed || broken) return;
    slot.worker.terminate();
    if (!slot.ready && ++startFailures >= MAX_START_FAILURES) {
      giveUp(new Error(`Verification workers keep failing before they are ready: ${reason}`));
      return;
    }
    const fresh = startSlot();
    slots[index] = fresh;
    replaced++;
    console.error(`${reason}; replaced it, ${slot.pending.size} jobs to retry`);
    // A job that failed on its retry, when it ran alone, is the one that fails workers: busy. The
    // others go to the fresh worker one at a time, after any suspects the failed one had left.
    fresh.suspects.push(...slot.suspects);
    for (const pending of slot.pending.values()) {
      if (pending.attempts >= 2) {
        queued--;
        pending.reject(verifierBusy());
      } else {
        pending.attempts++;
        fresh.suspects.push(pending);
      }
    }
    slot.pending.clear();
    slot.suspects = [];
    sendNextSuspect(fresh);
  }

  /** Stops every worker and answers every job 503 `busy`; `ready` rejects with `error`. */
  function giveUp(error: Error): void {
    broken = error;
    console.error(error.message);
    notReady(error);
    for (const slot of slots) {
      slot.worker.terminate();
      for (const pending of [...slot.pending.values(), ...slot.suspects]) {
        pending.reject(verifierBusy());
      }
      slot.pending.clear();
      slot.suspects = [];
    }
    queued = 0;
    clearInterval(watchdog);
  }

  // A job unanswered for stallMs means its worker hangs (or died without a word), and a worker
  // not ready startMs after its start never will be: replace it.
  const watchdog = setInterval(() => {
    const now = performance.now();
    for (const slot of slots.filter((s) => !s.ready && now - s.startedAt > startMs)) {
      replace(slot, `Verification worker not ready in ${startMs} ms`);
    }
    for (const slot of slots.filter((s) => s.ready)) {
      for (const pending of slot.pending.values()) {
        if (now - pending.sentAt > stallMs) {
          replace(slot, `Verification worker gave no answer in ${stallMs} ms`);
          break;
        }
      }
    }
  }, Math.max(10, Math.min(1_000, stallMs / 4)));
  Deno.unrefTimer(watchdog);

  function submit<J extends VerifierJob>(job: J): Promise<JobResult<J>> {
    if (closed) return Promise.reject(new Error("The verification pool is closed"));
    if (broken || queued >= maxQueued) return Promise.reject(verifierBusy());
    queued++;
    return new Promise((resolve, reject) => {
      send(leastBusy(), {
        id: nextId++,
        job,
        attempts: 1,
        sentAt: 0,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
    });
  }

  return {
    size: count,
    get replaced() {
      return replaced;
    },
    get queued() {
      return queued;
    },
    ready,
    verify: (signature, payload, members = []) =>
      submit({ type: "verify", signature, payload, members }),
    precompute: (key) => submit({ type: "precompute", key }),
    async memberStats() {
      if (broken || closed) return { held: 0, capacity: 0 };
      const each = await Promise.all(slots.map((slot) =>
        new Promise<MemberStats>((resolve) => {
          const id = nextId++;
          slot.stats.set(id, resolve);
          slot.worker.postMessage({ type: "stats", id } satisfies WorkerRequest);
        })
      ));
      return {
        held: each.reduce((sum, s) => sum + s.held, 0),
        capacity: each.reduce((sum, s) => sum + s.capacity, 0),
      };
    },
    close() {
      if (closed) return;
      closed = true;
      notReady(new Error("The verification pool is closed"));
      clearInterval(watchdog);
      for (const slot of slots) {
        slot.worker.terminate();
        for (const pending of [...slot.pending.values(), ...slot.suspects]) {
          pending.reject(new Error("The verification pool is closed"));
        }
        slot.pending.clear();
        slot.suspects = [];
      }
      queued = 0;
    },
  };
}
