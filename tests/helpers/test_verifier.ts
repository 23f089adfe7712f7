// The verifier the API suites run against: a pool of two real worker threads where the runtime
// has `Worker`, this thread's verifier where it does not (tests/server/api_without_worker_test.ts
// removes the global and runs the same suites again). One per test process, created at load.
import { createInProcessVerifier } from "../../server/verifier/in_process.ts";
import type { Verifier } from "../../server/verifier/types.ts";
import { createVerifyPool } from "../../server/verifier/pool.ts";

/** The shared verifier of this test process. */
export const testVerifier: Verifier = typeof globalThis.Worker === "function"
  ? createVerifyPool({ workers: 2 })
  : createInProcessVerifier();
