// The real verification worker (server/verifier/worker.ts), except that a vote whose payload is
// CRASH_PAYLOAD makes it fail with an uncaught error, as a worker that runs out of memory or
// hits a bug would: for the tests of the pool's recovery. A worker module: never import it.
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import "../../server/verifier/worker.ts";
import type { WorkerRequest } from "../../server/verifier/types.ts";
import { CRASH_PAYLOAD } from "./crash_payload.ts";

const real = self.onmessage!;
self.onmessage = (event: MessageEvent<WorkerRequest>) => {
  const request = event.data;
  if (
    request.type === "job" && request.job.type === "verify" && request.job.payload === CRASH_PAYLOAD
  ) {
    throw new Error("the verification worker failed");
  }
  real.call(self, event);
};
