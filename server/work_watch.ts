/**
 * What tells a process's sealers that there is work (protocol §5.3 "Work"): the votes this process
 * took (server/store/work.ts, no KV read), and the database's work stamp, read once every
 * {@link WORK_POLL_MS} for the votes other processes took. While nothing is voted anywhere, the
 * stamp is the one KV read a process makes.
 *
 * Why a poll and not `kv.watch`: over KV Connect a watch is a request held open by the database,
 * whose idle cost depends on the host and which denokv's own data path, the one the tests run,
 * does not serve; a read every 15 s costs 4 round trips a minute wherever the database is. A vote
 * is sealed on the next tick of the process that took it, as before; the poll only bounds how long
 * a vote waits when that process stops before its tick (one poll and one tick).
 * @module
 */
import { readRetrying } from "./store/kv_calls.ts";
import { isOwnStamp, noteAgain, takeNoted, takeNotedRounds, WORK_STAMP_KEY } from "./store/work.ts";

/** How often a process reads the work stamp, ms: at most 4 KV round trips a minute at rest. */
export const WORK_POLL_MS = 15_000;

/** A process's view of the work waiting for its sealers. */
export type WorkWatch = {
  /**
   * Reads the work stamp when {@link WORK_POLL_MS} has passed since the last read (or never), or
   * at once with `force` (a seal tick a minute apart: a vote another process took before it is
   * sealed on it).
   */
  poll(now: number, force?: boolean): Promise<void>;
  /**
   * True, once, when ledger `name` may have work: a vote this process took into it, a moved work
   * stamp since `name` was last taken, or, the first time, whatever a previous process left.
   */
  take(name: string): boolean;
  /** The rounds a vote landed in here since the last call, by id. */
  takeRounds(): number[];
  /** Marks ledger `name` again, so that a seal that failed is tried on the next tick. */
  retry(name: string): void;
};

/** Options of {@link createWorkWatch}. */
export type WorkWatchOptions = { pollMs?: number };

/** A watch over `kv`'s work stamp for this process's sealers. */
export function createWorkWatch(kv: Deno.Kv, options: WorkWatchOptions = {}): WorkWatch {
  const pollMs = options.pollMs ?? WORK_POLL_MS;
  let lastPoll: number | null = null;
  let stamp: string | null | undefined = undefined;
  // Each moved stamp starts a new epoch; a ledger taken in an older one has work to look at.
  let epoch = 0;
  const takenIn = new Map<string, number>();
  return {
    async poll(now, force = false) {
      if (!force && lastPoll !== null && now - lastPoll < pollMs) return;
      lastPoll = now;
      const entry = await readRetrying(() => kv.get(WORK_STAMP_KEY));
      // A stamp this process's own last vote set is work it has noted already.
      const moved = entry.versionstamp !== stamp && !isOwnStamp(kv, entry.versionstamp);
      if (stamp !== undefined && moved) epoch++;
      stamp = entry.versionstamp;
    },
    take(name) {
      const local = takeNoted(name);
      const seen = takenIn.get(name);
      takenIn.set(name, epoch);
      return local || seen === undefined || seen < epoch;
    },
    takeRounds: takeNotedRounds,
    retry: noteAgain,
  };
}
