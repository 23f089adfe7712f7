/**
 * Browser-safe. A round's phases as the pages read them (protocol §4.9): the phase fields of a
 * listed round, and whether its votes are signed over a group.
 * @module
 */
import type { RoundInfo, RoundList, RoundPhase } from "../../protocol/schemas.ts";

/** A listed round, with its phase fields. */
export type PhasedRoundInfo = RoundInfo;
/** Answer of `GET /api/rounds`, every round with its phase fields. */
export type PhasedRoundList = RoundList;
export type { RoundPhase };

/** The phase fields of a round. */
export type RoundPhaseFields = Pick<
  RoundInfo,
  "phase" | "minVoters" | "lateJoiners" | "openedAt" | "joinDeadline"
>;

/** The phase fields of `round`. */
export function phaseFields(round: RoundInfo): RoundPhaseFields {
  const { phase, minVoters, lateJoiners, openedAt, joinDeadline } = round;
  return { phase, minVoters, lateJoiners, openedAt, joinDeadline };
}

/**
 * True when votes in `round` are signed over a group (protocol §2.8): every round but round 1,
 * which keeps the specified ring rule.
 */
export function votesByGroup(round: Pick<RoundInfo, "id">): boolean {
  return round.id !== 1;
}
