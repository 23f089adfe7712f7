/**
 * One verification thread of the pool (./pool.ts): runs each job it is sent with runJob over its
 * share of the process's member cache, and answers with the job's id.
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { createMemberCache } from "../../lib/protocol/member_cache.ts";
import { runJob, warmUp } from "./jobs.ts";
import type { WorkerReply, WorkerRequest } from "./types.ts";

let members = createMemberCache({ budgetBytes: 0 });

self.onmessage = (event: MessageEvent<WorkerRequest>) => {
  const request = event.data;
  if (request.type === "configure") {
    members = createMemberCache({ budgetBytes: request.memberBudgetBytes });
    return;
  }
  if (request.type === "stats") {
    const stats = { held: members.size, capacity: members.capacity };
    self.postMessage({ id: request.id, stats } satisfies WorkerReply);
    return;
  }
  let reply: WorkerReply;
  try {
    reply = { id: request.id, result: runJob(request.job, members) };
  } catch (error) {
    const { name, message } = error as Error;
    reply = { id: request.id, error: { name, message } };
  }
  self.postMessage(reply);
};

// Compiled before the first job is answered; jobs sent meanwhile wait in the message queue, and
// the pool times stalls only from `ready` on.
// A failed check is an uncaught error: the pool replaces the worker, and gives up after a few.
if (!warmUp()) throw new Error("the warm-up check failed: this build does not verify correctly");
self.postMessage({ ready: true } satisfies WorkerReply);
