/**
 * Browser-safe. What every section of the bulletin board receives: the board's one state, and the
 * type of a section component; and the round a section's shared links name.
 * @module
 */
import type { BulletinState } from "./state.ts";

/** Props of a bulletin board section. */
export type SectionProps = { bulletin: BulletinState };

/**
 * The round a shared board address names: none for round 1, whose board is plain `/board`, and
 * for the practice ledger, which is no round.
 */
export function sharedRound(round: number | null): number | null {
  return round === null || round === 1 ? null : round;
}
