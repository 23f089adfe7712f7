/**
 * Browser-safe. The waiting line of a phone in a round with phases (page §14.2), from its group
 * state: what it waits for, in plain words, or null once it can vote.
 * @module
 */
import type { GroupState } from "../../lib/client/rounds/round_group.ts";
import {
  LATE_OFF_TEXT,
  lateWaitingText,
  refusedGroupText,
  waitingToOpenText,
} from "../../lib/client/rounds/round_texts.ts";

/** The line a phone shows while its vote cannot be sent yet; null once it is in a group. */
export function groupWaitingText(
  { group, minVoters, joinDeadline }: {
    group: GroupState | null;
    minVoters: number;
    joinDeadline: number | null;
  },
): string | null {
  if (group === null || group.kind === "join" || group.kind === "unknown") {
    return waitingToOpenText({ joinDeadline, minVoters });
  }
  switch (group.kind) {
    case "group":
      return null;
    case "pending":
      return group.lateJoiners ? lateWaitingText(group) : LATE_OFF_TEXT;
    case "closed":
      return "This round ended before your key was in a group, so it never voted.";
    case "refused":
      return refusedGroupText(group.reason);
  }
}
