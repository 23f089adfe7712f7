/**
 * Browser-safe. A round's phases as the pages read them (protocol §4.9): the phase fields of a
 * listed round with their defaults for a server that does not send them, the answers of
 * `GET /api/rounds/{id}/groups` and `POST /api/rounds/{id}/voting`, and the fingerprint a phone and
 * the projector show of a group.
 * @module
 */
import * as z from "zod/mini";
import { RoundInfo } from "../../protocol/schemas.ts";

/** A round's phase: keys join, then votes are taken, then a later round closed it. */
export type RoundPhase = "join" | "voting" | "closed";

const Phase = z.enum(["join", "voting", "closed"]);
const KeyId = z.int().check(z.gte(1, "must be a positive integer"));
const Count = z.int().check(z.gte(0, "must be a non-negative integer"));

/** One listed round with its phase fields; each is optional for a server that lists none. */
export const PhasedRoundInfo = z.extend(RoundInfo, {
  phase: z.optional(Phase),
  minVoters: z.optional(KeyId),
  lateJoiners: z.optional(z.boolean()),
  openedAt: z.optional(z.nullable(Count)),
  joinDeadline: z.optional(z.nullable(Count)),
});
/** Answer of `GET /api/rounds` read with every round's phase fields. */
export const PhasedRoundList = z.object({ current: KeyId, rounds: z.array(PhasedRoundInfo) });
/** Answer of `GET /api/rounds/{id}/groups`: the partition of protocol §2.8 and the keys pending. */
export const RoundGroups = z.object({
  phase: Phase,
  keysAtOpen: z.nullable(Count),
  groups: z.array(z.array(KeyId)),
  pending: z.array(KeyId),
});
/** Answer of `POST /api/rounds/{id}/voting`: voting is open, over these groups. */
export const VotingOpened = z.object({
  phase: z.literal("voting"),
  groups: z.array(z.array(KeyId)),
});

export type PhasedRoundInfo = z.infer<typeof PhasedRoundInfo>;
export type PhasedRoundList = z.infer<typeof PhasedRoundList>;
export type RoundGroups = z.infer<typeof RoundGroups>;
export type VotingOpened = z.infer<typeof VotingOpened>;

/** The phase fields of a round, each with its default filled in. */
export type RoundPhaseFields = {
  phase: RoundPhase;
  minVoters: number;
  lateJoiners: boolean;
  openedAt: number | null;
  joinDeadline: number | null;
};

/** The smallest group of a round when the presenter sets none (protocol §4.9). */
export const DEFAULT_MIN_VOTERS = 8;

/**
 * The phase fields of `round`: a field the server did not send takes its default; a round that
 * lists no phase is taking votes (round 1, or a server without phases).
 */
export function phaseFields(round: PhasedRoundInfo): RoundPhaseFields {
  return {
    phase: round.phase ?? "voting",
    minVoters: round.minVoters ?? DEFAULT_MIN_VOTERS,
    lateJoiners: round.lateJoiners ?? false,
    openedAt: round.openedAt ?? null,
    joinDeadline: round.joinDeadline ?? null,
  };
}

/**
 * True when votes in `round` are signed over a group (protocol §2.8): every round but round 1, on
 * a server that lists phases. Round 1 keeps the specified ring rule.
 */
export function votesByGroup(round: PhasedRoundInfo): boolean {
  return round.id !== 1 && round.phase !== undefined;
}
