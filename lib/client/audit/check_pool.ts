/**
 * Browser-safe. A pool of audit workers (./check_worker.ts), one per core, behind the audit's
 * VoteChecker: a chunk of votes is cut into slices, each sent to the least busy worker, findings in
 * order. The board starts its workers from the page's bundle, the command line from the module.
 * @module
 */
import type { VoteRecord } from "../../protocol/schemas.ts";
import type { VoteChecker, VoteFinding } from "./vote_checks.ts";

/** What the page sends a worker: a numbered slice of votes. */
export type VoteCheckRequest = { id: number; votes: VoteRecord[] };
/** What a worker answers: the slice's findings in order, or why it could not check them. */
export type VoteCheckResponse =
  | { id: number; findings: VoteFinding[]; error?: undefined }
  | { id: number; error: string; findings?: undefined };

/** Votes per message: small enough to balance the workers, large enough to amortize a message. */
const SLICE = 25;

/**
 * How long a worker with slices queued may stay silent before it is taken for hung: far above
 * the time one slice takes, so only a worker that stopped answering reaches it.
 */
export const WORKER_SILENCE_MS = 60_000;

/** The part of a Worker the pool uses (a test can stand in for it). */
export type PoolWorker = Pick<Worker, "postMessage" | "terminate" | "onmessage" | "onerror">;

/** A running pool: its checker, how many workers still run, and how to stop them. */
export type VoteCheckPool = { check: VoteChecker; readonly size: number; close(): void };

type Pending = {
  resolve: (findings: VoteFinding[]) => void;
  reject: (error: Error) => void;
  votes: number;
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
 * rejected; once none is left, every check rejects.
 */
export function createVoteCheckPool(
  size: number,
  start: () => PoolWorker,
  { silenceMs = WORKER_SILENCE_MS }: { silenceMs?: number } = {},
): VoteCheckPool {
  let nextId = 0;

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
    slot.worker.onmessage = ({ data }: MessageEvent<VoteCheckResponse>) => {
      const job = slot.pending.get(data.id);
      if (!job) return;
      slot.pending.delete(data.id);
      slot.queued -= job.votes;
      watch(slot);
      if (data.error !== undefined) job.reject(new Error(`Audit worker: ${data.error}`));
      else job.resolve(data.findings);
    };
    slot.worker.onerror = (event) => {
      event.preventDefault();
      retire(slot, `Audit worker failed: ${event.message || "no reason given"}`);
    };
    return slot;
  });

  function send(votes: VoteRecord[]): Promise<VoteFinding[]> {
    const live = slots.filter((s) => s.alive);
    if (live.length === 0) {
      return Promise.reject(new Error("Every audit worker has failed; reload the page to audit"));
    }
    const target = live.reduce((a, b) => (b.queued < a.queued ? b : a));
    const id = nextId++;
    target.queued += votes.length;
    return new Promise((resolve, reject) => {
      target.pending.set(id, { resolve, reject, votes: votes.length });
      if (target.pending.size === 1) watch(target);
      target.worker.postMessage({ id, votes } satisfies VoteCheckRequest);
    });
  }

  return {
    get size() {
      return slots.filter((s) => s.alive).length;
    },
    async check(votes) {
      const slices: Promise<VoteFinding[]>[] = [];
      for (let i = 0; i < votes.length; i += SLICE) slices.push(send(votes.slice(i, i + SLICE)));
      return (await Promise.all(slices)).flat();
    },
    close() {
      for (const slot of slots) retire(slot, "Audit workers closed");
    },
  };
}
