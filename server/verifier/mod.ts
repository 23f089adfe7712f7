/**
 * The verifier the API uses for a vote's ring verification and a new key's checks and
 * precomputation: a pool of worker threads where the runtime has `Worker`, else this thread.
 * @module
 */
import { createInProcessVerifier } from "./in_process.ts";
import type { Verifier, VerifierOptions } from "./types.ts";

/**
 * The pool of worker threads where the runtime has `Worker` (one per core), else this thread's
 * verifier: the choice main.ts makes, so an edge runtime without workers still verifies.
 */
export async function createVerifier(opts: VerifierOptions = {}): Promise<Verifier> {
  if (typeof globalThis.Worker !== "function") return createInProcessVerifier(opts);
  // Loaded only here, so a runtime without workers never loads the pool.
  const { createVerifyPool } = await import("./pool.ts");
  return createVerifyPool(opts);
}
