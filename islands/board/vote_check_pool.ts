/**
 * The board's one pool of audit workers (lib/client/audit/check_pool.ts), shared by the one-click
 * audit and the signature status of listed votes.
 * @module
 */
import { createVoteCheckPool, type VoteCheckPool } from "../../lib/client/audit/check_pool.ts";
import { startWorker } from "../runtime.ts";

let shared: VoteCheckPool | null = null;

/**
 * The page's one pool of audit workers, started on first use with one worker per core
 * (`navigator.hardwareConcurrency`, 2 when the browser does not say), shared by the one-click
 * audit and the signature status of listed votes; started again once every worker has failed.
 */
export function boardPool(): VoteCheckPool {
  // A pool whose workers have all failed is started afresh on the next use.
  if (shared?.size === 0) shared = null;
  shared ??= createVoteCheckPool(
    navigator.hardwareConcurrency || 2,
    () => startWorker("audit"),
  );
  return shared;
}
