/**
 * Where a voter's panel stands on a quiet phone (page §14.8): the stage its round's state read is
 * scheduled by, and the index of its group, which its block's per-group count is read by.
 * @module
 */
import type { GroupState } from "../../lib/client/rounds/round_group.ts";
import type { VoteLine } from "../../lib/client/voter/status.ts";
import type { RoundState } from "../../lib/protocol/hall_schemas.ts";
import { groupIndexOf } from "../../lib/client/rounds/group_index.ts";
import type { PollStage } from "../hooks/round_state.ts";

/** Where a panel stands, for a quiet phone's schedule (page §14.8). */
export function panelStage(
  { group, voteStatus, proven }: {
    group: GroupState | null;
    voteStatus: VoteLine["status"];
    proven: boolean;
  },
): PollStage {
  if (voteStatus === "voted") return proven ? "proven" : "sent";
  if (voteStatus === "pending") return "sent";
  if (group?.kind === "closed") return "closed";
  return group?.kind === "group" ? "voting" : "waiting";
}

/** A quiet phone's group index, for its block's per-group count; null elsewhere. */
export function quietGroupIndex(state: RoundState | null | undefined, keyId: string | null) {
  return state && keyId !== null ? groupIndexOf(state.groups, Number(keyId)) : null;
}
