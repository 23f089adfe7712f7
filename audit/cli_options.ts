/**
 * How `deno task audit` (audit.ts) runs an audit: the votes' signatures checked on one audit worker
 * per core, as on the board, and the progress shown on stderr.
 * @module
 */
import { stripVTControlCharacters } from "node:util";
import type { AuditProgress } from "../lib/client/audit/audit.ts";
import { createVoteCheckPool } from "../lib/client/audit/check_pool.ts";
import type { TrustedWitnesses } from "../lib/client/audit/log_checks.ts";
import { inThreadChecker, type VoteChecker } from "../lib/client/audit/vote_checks.ts";
import { progressLine } from "./cli_report.ts";

/** The audit worker the board runs too; the command line starts it from its module. */
const CHECK_WORKER = new URL("../lib/client/audit/check_worker.ts", import.meta.url);

/**
 * The checker of the votes' signatures: one audit worker per core, as on the board, where this
 * runtime has workers and may read the modules they load (this checkout); this thread's checker
 * otherwise, and for any chunk the workers could not check (a worker that failed to start or
 * stopped): the same checks, only slower. `close` stops the workers.
 */
function voteChecker(): { checker?: VoteChecker; parallel?: number; close(): void } {
  const root = new URL("../", import.meta.url);
  const readable = root.protocol !== "file:" ||
    Deno.permissions.querySync({ name: "read", path: root }).state === "granted";
  if (typeof globalThis.Worker !== "function" || !readable) return { close() {} };
  const pool = createVoteCheckPool(
    navigator.hardwareConcurrency || 2,
    () => new Worker(CHECK_WORKER, { type: "module" }),
  );
  const here = inThreadChecker();
  let warned = false;
  const warn = (reason: string) => {
    if (warned) return;
    warned = true;
    console.error(
      `audit: ${stripVTControlCharacters(reason)}; checking in this thread instead`,
    );
  };
  const checker: VoteChecker = async (votes, context) => {
    if (pool.size === 0) warn("the audit workers could not start");
    else {
      try {
        return await pool.check(votes, context);
      } catch (error) {
        warn((error as Error).message);
      }
    }
    return await here(votes);
  };
  // Pages in flight: enough to keep every worker busy, as on the board.
  return { checker, parallel: pool.size * 2, close: () => pool.close() };
}

/** The audit's options for the pinned `key` and `witnesses`, with its progress on stderr. */
export function auditOptions(
  { key, witnesses }: { key: string | null; witnesses: TrustedWitnesses | null },
) {
  const encoder = new TextEncoder();
  const tty = Deno.stderr.isTerminal();
  const workers = voteChecker();
  let last = 0;
  return {
    trusted: {
      ...(key === null ? {} : { key }),
      ...(witnesses === null ? {} : { witnesses }),
    },
    ...(workers.checker ? { checker: workers.checker, parallel: workers.parallel } : {}),
    onProgress: (p: AuditProgress) => {
      const now = Date.now();
      if (!tty && now - last < 1000 && p.done !== p.total) return;
      last = now;
      Deno.stderr.writeSync(encoder.encode(progressLine(p) + (tty ? "" : "\n")));
    },
    /** Ends the progress line on a terminal, and stops the workers. */
    done: () => {
      workers.close();
      if (tty) Deno.stderr.writeSync(encoder.encode("\n"));
    },
  };
}
