// A pool of audit workers (islands/workers/audit.ts), one per core the browser reports, behind the
// audit's VoteChecker interface: a chunk of votes is cut into slices, each slice goes to the
// worker with the least work queued, and the findings come back in the chunk's order.
import type { VoteChecker, VoteFinding } from "../../lib/app/vote_checks.ts";
import type { VoteRecord } from "../../lib/protocol/schemas.ts";
import { startWorker } from "../../components/Island.ts";

/** What the page sends a worker: a numbered slice of votes. */
export type VoteCheckRequest = { id: number; votes: VoteRecord[] };
/** What a worker answers: the slice's findings in order, or why it could not check them. */
export type VoteCheckResponse =
  | { id: number; findings: VoteFinding[]; error?: undefined }
  | { id: number; error: string; findings?: undefined };

/** Votes per message: small enough to balance the workers, large enough to amortize a message. */
const SLICE = 25;

/** A running pool: its checker, its size, and how to stop its workers. */
export type VoteCheckPool = { check: VoteChecker; size: number; close(): void };

type Pending = {
  resolve: (findings: VoteFinding[]) => void;
  reject: (error: Error) => void;
  votes: number;
};

/** Starts `size` workers with `start` and answers the pool over them. */
export function createVoteCheckPool(size: number, start: () => Worker): VoteCheckPool {
  let nextId = 0;
  const workers = Array.from({ length: Math.max(1, size) }, () => {
    const worker = start();
    const pending = new Map<number, Pending>();
    const state = { worker, pending, queued: 0 };
    worker.onmessage = ({ data }: MessageEvent<VoteCheckResponse>) => {
      const job = pending.get(data.id);
      if (!job) return;
      pending.delete(data.id);
      state.queued -= job.votes;
      if (data.error !== undefined) job.reject(new Error(`Audit worker: ${data.error}`));
      else job.resolve(data.findings);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      for (const job of pending.values()) {
        job.reject(new Error(`Audit worker failed: ${event.message || "no reason given"}`));
      }
      pending.clear();
      state.queued = 0;
    };
    return state;
  });

  function send(votes: VoteRecord[]): Promise<VoteFinding[]> {
    const target = workers.reduce((a, b) => (b.queued < a.queued ? b : a));
    const id = nextId++;
    target.queued += votes.length;
    return new Promise((resolve, reject) => {
      target.pending.set(id, { resolve, reject, votes: votes.length });
      target.worker.postMessage({ id, votes } satisfies VoteCheckRequest);
    });
  }

  return {
    size: workers.length,
    async check(votes) {
      const slices: Promise<VoteFinding[]>[] = [];
      for (let i = 0; i < votes.length; i += SLICE) slices.push(send(votes.slice(i, i + SLICE)));
      return (await Promise.all(slices)).flat();
    },
    close() {
      for (const { worker } of workers) worker.terminate();
    },
  };
}

let shared: VoteCheckPool | null = null;

/**
 * The page's one pool of audit workers, started on first use with one worker per core
 * (`navigator.hardwareConcurrency`, 2 when the browser does not say), shared by the one-click
 * audit and the signature status of listed votes.
 */
export function boardPool(): VoteCheckPool {
  shared ??= createVoteCheckPool(
    navigator.hardwareConcurrency || 2,
    () => startWorker("audit"),
  );
  return shared;
}
