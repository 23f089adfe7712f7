/**
 * The sealer of the rounds after the first (protocol §4.9): a round a vote landed in is sealed on
 * its next tick, the current round on its own ticks and a round that is no longer current within
 * {@link CLOSED_ROUND_TICK_MS}, however many rounds start meanwhile. It reads KV only when there is
 * work (server/work_watch.ts): a vote this process took, or a moved work stamp, after which it
 * reads every round's guard, head and work record (three a round, in `getMany`s of ten keys) and
 * seals the rounds where something waits, whether they ended long ago or not.
 * @module
 */
import type { BlockRecord } from "../lib/protocol/schemas.ts";
import { sealNextBlock } from "./sealer.ts";
import { getManyChunked, LIST_BATCH_MAX, listEntries } from "./store/kv_calls.ts";
import { type HeadRecord, ledgerKeys, type OpenRecord, type WorkRecord } from "./store/layout.ts";
import { roundPrefix, type Rounds, ROUNDS_PREFIX, sealDue } from "./store/rounds.ts";
import { mayHaveWork } from "./store/work.ts";
import type { WorkWatch } from "./work_watch.ts";

/** How soon a vote that landed in a round no longer current is sealed, ms. */
export const CLOSED_ROUND_TICK_MS = 1_000;

/** The name the rounds' sealer takes the work stamp's moves under. */
export const ROUNDS = "rounds";

/** What one run sealed, by round. */
export type RoundSeal = { round: number; blocks: BlockRecord[] };

/** The sealer's memory: the rounds with work waiting for their tick. */
export type RoundSealer = {
  /** Seals what is due between the ticks `previous` (exclusive) and `now` (inclusive). */
  run(previous: number, now: number): Promise<RoundSeal[]>;
};

/** A sealer over `rounds` in `kv`, told of work by `watch`; each process keeps its own. */
export function createRoundSealer(
  { kv, rounds, watch }: { kv: Deno.Kv; rounds: Rounds; watch: WorkWatch },
): RoundSealer {
  const due = new Set<number>();
  return {
    async run(previous, now) {
      for (const id of watch.takeRounds()) due.add(id);
      if (watch.take(ROUNDS)) {
        try {
          for (const id of await roundsWithWork(kv)) due.add(id);
        } catch (error) {
          watch.retry(ROUNDS);
          throw error;
        }
      }
      const done: RoundSeal[] = [];
      for (const id of [...due].sort((a, b) => a - b)) {
        // Round 1 is the election's, sealed on its own schedule (protocol §6).
        const record = id === 1 ? null : await rounds.round(id);
        if (record === null) {
          due.delete(id);
          continue;
        }
        // On its own tick, or on the closed rounds' tick once it is no longer current (the
        // current id, kept a second, is read only then).
        const own = sealDue(previous, now, record.blockIntervalMs);
        if (!own && !sealDue(previous, now, CLOSED_ROUND_TICK_MS)) continue;
        if (!own && await rounds.current() === id) continue;
        due.delete(id);
        try {
          const blocks = await sealNextBlock(await rounds.storeOf(id), now);
          if (blocks.length > 0) done.push({ round: id, blocks });
        } catch (error) {
          // One round's failure never stops the others; its next tick tries again.
          due.add(id);
          console.error(`Sealing round ${id} failed, retrying next tick:`, error);
        }
      }
      return done;
    },
  };
}

/**
 * The rounds after the first where something may wait: a block closed but not finalized, or a
 * vote in the open block (its work record names the open block), read three keys a round.
 */
async function roundsWithWork(kv: Deno.Kv): Promise<number[]> {
  // The rounds' records, listed in one trip: the ids alone are needed here.
  const ids: number[] = [];
  await listEntries(kv, {
    selector: { prefix: [ROUNDS_PREFIX, "round"] },
    options: { batchSize: LIST_BATCH_MAX },
    restart: () => ids.length = 0,
    // A round's phase and relay entries sit beside its record, one key part longer: skipped.
    each: (entry) => {
      if (entry.key.length === 3) ids.push(entry.key[2] as number);
    },
  });
  const keys = ids.flatMap((id) => {
    const at = ledgerKeys(roundPrefix(id));
    return [at.open(), at.head(), at.work()];
  });
  const entries = await getManyChunked<unknown>(kv, keys);
  return ids.filter((_, i) => {
    const [open, head, work] = entries.slice(3 * i, 3 * i + 3).map((entry) => entry.value);
    return mayHaveWork(open as OpenRecord, head as HeadRecord, work as WorkRecord);
  });
}
