/**
 * The projector view's audit of a round (page §10.11): the board's one-click audit
 * (lib/client/audit/, the same code as `deno task audit`) run by itself whenever the round's head
 * height changes, never two at once, anchored in the round's remembered key and heads (page §12).
 * @module
 */
import { useEffect, useMemo, useState } from "react";
import type { ApiClient } from "../../lib/client/api_client.ts";
import { auditLedger, type AuditProgress } from "../../lib/client/audit/audit.ts";
import { withGroupRule } from "../../lib/client/audit/groups.ts";
import type { AuditSource } from "../../lib/client/audit/source.ts";
import { latestRunner } from "../../lib/client/board/latest_run.ts";
import { parseSeenHeads, SEEN_HEADS_KEY } from "../../lib/client/log/heads.ts";
import type { PageStorage } from "../../lib/client/rounds/round_storage.ts";
import { messageOf } from "../../lib/client/text.ts";
import { boardPool } from "./vote_check_pool.ts";

/** What an audit run found: at which height, whether every check holds, and what it covered. */
export type RoomAuditResult = {
  ok: boolean;
  height: number;
  votes: number;
  blocks: number;
  failures: number;
  /** Why the audit could not run at all (its workers did not start, it threw); a failure too. */
  problem: string | null;
};

/** The audit's state: the last result (null before the first) and the run in progress, if any. */
export type RoomAudit = {
  result: RoomAuditResult | null;
  /** The progress of the run in progress; null when none runs. */
  running: AuditProgress | null;
};

/**
 * The audit of `api`'s round `round`, with its group rule (protocol §2.8), run again whenever
 * `height` changes (see the module comment).
 */
export function useRoundAudit(
  api: ApiClient,
  { round, height, storage }: { round: number; height: number | null; storage: PageStorage },
): RoomAudit {
  const [audit, setAudit] = useState<RoomAudit>({ result: null, running: null });
  const runner = useMemo(() => {
    let live = true;
    const runner = latestRunner<number>(async () => {
      const show = (next: (old: RoomAudit) => RoomAudit) => live && setAudit(next);
      const starting = { phase: "keys", done: 0, total: 0 } as const;
      show((old) => ({ ...old, running: starting }));
      const result = await auditOnce(
        withGroupRule(api, round),
        storage,
        (p) => show((old) => ({ ...old, running: p })),
      );
      show(() => ({ result, running: null }));
    });
    return { ...runner, stop: () => (live = false) };
  }, []);
  useEffect(() => runner.stop, []);
  useEffect(() => {
    if (height !== null) runner.ask(height);
  }, [height]);
  return audit;
}

/** One audit of the whole round with the board's workers; a run that cannot be made fails. */
async function auditOnce(
  api: AuditSource,
  storage: PageStorage,
  onProgress: (progress: AuditProgress) => void,
): Promise<RoomAuditResult> {
  try {
    const pool = boardPool();
    const seen = parseSeenHeads(storage.getItem(SEEN_HEADS_KEY));
    const report = await auditLedger(api, {
      checker: pool.check,
      parallel: pool.size * 2,
      onProgress,
      trusted: { key: seen.key ?? undefined, heads: seen.heads },
    });
    const { ok, height, votes, blocks } = report;
    return { ok, height, votes, blocks, failures: report.failures.length, problem: null };
  } catch (error) {
    return { ok: false, height: 0, votes: 0, blocks: 0, failures: 1, problem: messageOf(error) };
  }
}
