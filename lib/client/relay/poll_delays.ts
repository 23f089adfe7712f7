/**
 * Browser-safe. When a relayed phone reads the round's state next (protocol §7.4): every poll
 * jittered, less often once its own vote is sealed and proven, none after the read that saw the
 * round closed; and how often a consistency proof is read. Pure: the random source is passed in.
 * @module
 */

/** A source of numbers uniform in [0, 1), as `Math.random`. */
export type Random = () => number;

/**
 * Where a phone stands: waiting for the opening or for its late group; voting (its vote not yet
 * sent) or sent (not yet sealed and proven); proven (sealed, proof and "sealed with" read); or
 * closed (the round closed: one last read, then none).
 */
export type PollStage = "waiting" | "voting" | "sent" | "proven" | "closed";

/** The state read's delay range per stage, ms: uniform in [min, max]. */
export const POLL_DELAYS_MS: Record<Exclude<PollStage, "closed">, { min: number; max: number }> = {
  waiting: { min: 8_000, max: 12_000 },
  voting: { min: 8_000, max: 12_000 },
  sent: { min: 8_000, max: 12_000 },
  proven: { min: 25_000, max: 35_000 },
};

/** A consistency proof is read at most once a minute, and only when the checkpoint grew. */
export const CHECKPOINT_CHECK_MS = 60_000;

/**
 * Ms until the next state read in `stage`, jittered; null once closed (the read that saw the
 * round closed was the last, with its checkpoint check).
 */
export function nextPollDelay(stage: PollStage, random: Random): number | null {
  if (stage === "closed") return null;
  const { min, max } = POLL_DELAYS_MS[stage];
  const u = random();
  if (!(u >= 0 && u < 1)) throw new RangeError(`the random source gave ${u}, not in [0, 1)`);
  return min + u * (max - min);
}
