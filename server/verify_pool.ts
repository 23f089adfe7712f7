// Vote verification on a pool of worker threads (server/verify_worker.ts), one per core by
// default, so ingest uses every core while the request thread only parses, reads and commits.
// Each worker keeps its own member cache. Requests go to the worker with the fewest outstanding
// verifications. A key enters a worker's cache when it is registered (admit) or when a
// verification that met it is settled as kept, after the API's registration check (see
// MemberStaging in server/api_vote.ts).
import type { MemberCacheOptions } from "../lib/protocol/member_cache.ts";
import type { RingCheck, RingSignature } from "../lib/protocol/ring_signature.ts";
import type { MemberStaging, VerifyVote } from "./api_vote.ts";

/** Messages to a verification worker. */
export type WorkerRequest =
  | { type: "configure"; cache: MemberCacheOptions }
  | { type: "verify"; id: number; signature: RingSignature; payload: string }
  | { type: "settle"; id: number; keep: boolean }
  | { type: "admit"; key: string }
  | { type: "stats"; id: number };

/**
 * What a worker's member cache holds: entry count, entries with tables, their keys, and how many
 * registered keys still wait to be admitted.
 */
export type WorkerCacheStats = { size: number; tabled: number; admitting: number; keys: string[] };

/** Messages from a verification worker, answering the request with the same id. */
export type WorkerReply =
  | { id: number; result: RingCheck }
  | { id: number; error: { name: string; message: string } }
  | { id: number; stats: WorkerCacheStats };

/** Options of {@link createVerifyPool}: worker count and each worker's member cache. */
export type VerifyPoolOptions = { workers?: number; cache?: MemberCacheOptions };

/** A running pool: `verify` has the API's VerifyVote shape; `close` ends every worker. */
export type VerifyPool = {
  readonly size: number;
  verify: VerifyVote;
  /**
   * A key was just registered: every worker checks it and builds its tables in the background,
   * between verifications, so the key's first verifications find them built.
   */
  admit(key: string): void;
  /** Each worker's member cache, for tests and diagnostics. */
  cacheStats(): Promise<WorkerCacheStats[]>;
  close(): void;
};

type Waiter = { resolve(reply: WorkerReply): void; reject(error: Error): void };
type Slot = { worker: Worker; waiting: Map<number, Waiter> };

/**
 * Each worker's member cache unless told otherwise: window-4 tables (about 266 KB per key, see
 * lib/protocol/member_cache.ts) for up to 512 MiB of keys, about 2,000 keys per worker. Keys beyond it are
 * still cached (point and Hp) and verified, with shared-doubling products instead of table walks.
 */
export const POOL_CACHE: MemberCacheOptions = { window: 4, tableBudgetBytes: 512 * 1024 * 1024 };

/** Starts `workers` verification threads (navigator.hardwareConcurrency by default, at least 1). */
export function createVerifyPool(opts: VerifyPoolOptions = {}): VerifyPool {
  const count = Math.max(1, opts.workers ?? navigator.hardwareConcurrency ?? 1);
  let nextId = 1;
  let closed = false;
  const slots: Slot[] = Array.from({ length: count }, () => {
    const worker = new Worker(new URL("./verify_worker.ts", import.meta.url), { type: "module" });
    const slot: Slot = { worker, waiting: new Map() };
    worker.onmessage = (event: MessageEvent<WorkerReply>) => {
      const waiter = slot.waiting.get(event.data.id);
      slot.waiting.delete(event.data.id);
      waiter?.resolve(event.data);
    };
    worker.onerror = (event: ErrorEvent) => {
      // A worker that fails outside a request cannot be trusted with later ones: fail what waits.
      event.preventDefault();
      const error = new Error(`Verification worker failed: ${event.message}`);
      slot.waiting.forEach((waiter) => waiter.reject(error));
      slot.waiting.clear();
    };
    worker.postMessage({ type: "configure", cache: opts.cache ?? POOL_CACHE } as WorkerRequest);
    return slot;
  });

  function ask(slot: Slot, request: WorkerRequest & { id: number }): Promise<WorkerReply> {
    if (closed) return Promise.reject(new Error("The verification pool is closed"));
    return new Promise((resolve, reject) => {
      slot.waiting.set(request.id, { resolve, reject });
      slot.worker.postMessage(request);
    });
  }

  function leastBusy(): Slot {
    return slots.reduce((best, slot) => (slot.waiting.size < best.waiting.size ? slot : best));
  }

  async function verify(
    signature: RingSignature,
    payload: string,
    staging?: MemberStaging,
  ): Promise<RingCheck> {
    const slot = leastBusy();
    const id = nextId++;
    const reply = await ask(slot, { type: "verify", id, signature, payload });
    if ("error" in reply) {
      const ErrorType = reply.error.name === "RangeError"
        ? RangeError
        : reply.error.name === "TypeError"
        ? TypeError
        : Error;
      throw new ErrorType(reply.error.message);
    }
    if (!("result" in reply)) throw new Error("Verification worker answered out of turn");
    // Without a staging area nobody vouches for the members: the worker forgets them.
    const settle = (keep: boolean) => {
      if (!closed) slot.worker.postMessage({ type: "settle", id, keep } as WorkerRequest);
    };
    if (staging && reply.result.ok) staging.onSettle(settle);
    else settle(false);
    return reply.result;
  }

  return {
    size: count,
    verify,
    admit(key) {
      if (closed) return;
      for (const slot of slots) slot.worker.postMessage({ type: "admit", key } as WorkerRequest);
    },
    async cacheStats() {
      const replies = await Promise.all(
        slots.map((slot) => ask(slot, { type: "stats", id: nextId++ })),
      );
      return replies.map((reply) => {
        if (!("stats" in reply)) throw new Error("Verification worker answered out of turn");
        return reply.stats;
      });
    },
    close() {
      if (closed) return;
      closed = true;
      const error = new Error("The verification pool is closed");
      for (const slot of slots) {
        slot.worker.terminate();
        slot.waiting.forEach((waiter) => waiter.reject(error));
        slot.waiting.clear();
      }
    },
  };
}
