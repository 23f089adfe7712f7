/**
 * The sealer of the rounds after the first (protocol §4.9): the current round on its own ticks,
 * and every earlier round until nothing waits in it any more. A vote verified as its round ended
 * may still land in that round's open block; it is sealed however many rounds start meanwhile.
 * @module
 */
import type { BlockRecord } from "../lib/protocol/schemas.ts";
import { sealNextBlock } from "./sealer.ts";
import { type Rounds, sealDue } from "./store/rounds.ts";

/** How often a round that is no longer current is sealed while votes may still land in it. */
export const CLOSED_ROUND_TICK_MS = 1_000;

/**
 * How long after a round ends a vote may still land in it: one that passed the round check just
 * before, then waited for the verifier (whose stalls end at 30 s). After that, an empty closed
 * round is drained and left alone.
 */
export const DRAIN_GRACE_MS = 60_000;

/** What one run sealed, by round. */
export type RoundSeal = { round: number; blocks: BlockRecord[] };

/** The sealer's memory: rounds found drained by this process. */
export type RoundSealer = {
  /** Seals what is due between the ticks `previous` (exclusive) and `now` (inclusive). */
  run(previous: number, now: number): Promise<RoundSeal[]>;
};

/** A sealer over `rounds`; each process keeps its own (a drained round is checked once a start). */
export function createRoundSealer(rounds: Rounds): RoundSealer {
  const drained = new Set<number>();
  return {
    async run(previous, now) {
      const { current, rounds: listed } = await rounds.list();
      const done: RoundSeal[] = [];
      for (const [i, round] of listed.entries()) {
        // Round 1 is the election's, sealed on its own schedule (protocol §6).
        if (round.id === 1 || drained.has(round.id)) continue;
        const closed = round.id !== current;
        const every = closed ? CLOSED_ROUND_TICK_MS : round.blockIntervalMs;
        if (!sealDue(previous, now, every)) continue;
        try {
          const store = await rounds.storeOf(round.id);
          const blocks = await sealNextBlock(store, now);
          if (blocks.length > 0) done.push({ round: round.id, blocks });
          const endedAt = listed[i + 1]?.createdAt;
          if (closed && endedAt !== undefined && now - endedAt > DRAIN_GRACE_MS) {
            const [open, pending] = await Promise.all([store.openBlock(), store.pendingBlock()]);
            if (open.votes === 0 && pending === null) drained.add(round.id);
          }
        } catch (error) {
          // One round's failure never stops the others; its next tick tries again.
          console.error(`Sealing round ${round.id} failed, retrying next tick:`, error);
        }
      }
      return done;
    },
  };
}
