/**
 * The verifier for runtimes without `Worker` (an edge runtime): jobs run on this thread in short
 * slices between event-loop turns, so other requests are answered in between.
 * @module
 */
import { createMemberCache, DEFAULT_MEMBER_BUDGET } from "../../lib/protocol/member_cache.ts";
import { nextTurn } from "../event_loop.ts";
import { runJob } from "./jobs.ts";
import {
  DEFAULT_MAX_QUEUED,
  type JobResult,
  type Verifier,
  verifierBusy,
  type VerifierJob,
  type VerifierOptions,
} from "./types.ts";

/** Longest stretch of in-process jobs between two event-loop turns, in ms (plus one job). */
const SLICE_MS = 20;

/**
 * The verifier for runtimes without workers: jobs run on this thread in arrival order, in slices
 * of SLICE_MS between event-loop turns, so a status request waits at most a slice and one job (a
 * ring-8 verification takes a few ms).
 */
export function createInProcessVerifier(opts: VerifierOptions = {}): Verifier {
  const maxQueued = opts.maxQueued ?? DEFAULT_MAX_QUEUED;
  const cache = createMemberCache({ budgetBytes: opts.memberBudgetBytes ?? DEFAULT_MEMBER_BUDGET });
  const jobs: { run(): void; reject(error: Error): void }[] = [];
  let running = false;
  let closed = false;

  async function drain(): Promise<void> {
    running = true;
    while (jobs.length > 0) {
      // A timer turn costs up to 4 ms once timers nest (the HTML timer clamp), so jobs run in
      // slices of SLICE_MS rather than one per turn.
      await nextTurn();
      const started = performance.now();
      while (jobs.length > 0 && performance.now() - started < SLICE_MS) jobs.shift()!.run();
    }
    running = false;
  }

  function submit<J extends VerifierJob>(job: J): Promise<JobResult<J>> {
    if (closed) return Promise.reject(new Error("The verifier is closed"));
    if (jobs.length >= maxQueued) return Promise.reject(verifierBusy());
    const answer = new Promise<JobResult<J>>((resolve, reject) => {
      jobs.push({
        run() {
          try {
            resolve(runJob(job, cache));
          } catch (error) {
            reject(error);
          }
        },
        reject,
      });
    });
    if (!running) drain();
    return answer;
  }

  return {
    verify: (signature, payload, members = []) =>
      submit({ type: "verify", signature, payload, members }),
    precompute: (key) => submit({ type: "precompute", key }),
    memberStats: () => Promise.resolve({ held: cache.size, capacity: cache.capacity }),
    ready: Promise.resolve(),
    get queued() {
      return jobs.length;
    },
    close() {
      closed = true;
      for (const job of jobs.splice(0)) job.reject(new Error("The verifier is closed"));
    },
  };
}
