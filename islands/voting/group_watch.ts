/**
 * A phone's watch of its group in a round with phases (page §14.2): asks
 * `GET /api/rounds/{id}/groups` every 2 s until its key is in a group, is left out of a closed
 * round, or the served groups fail their check; a failed read keeps what was known.
 * @module
 */
import { useEffect, useState } from "react";
import type { ApiClient } from "../../lib/client/api_client.ts";
import { repeatEvery } from "../hooks/polling.ts";
import {
  type GroupRule,
  type GroupState,
  readGroupState,
} from "../../lib/client/rounds/round_group.ts";

/** How often a phone asks for its group while it waits. */
const GROUP_POLL_MS = 2000;

/** The states a phone stops asking in: nothing more can change. */
const FINAL = new Set<GroupState["kind"]>(["group", "closed", "refused"]);

/**
 * While `ownId` is known (non-null), the group state of that key, asked every
 * {@link GROUP_POLL_MS} until final; null until the first answer.
 */
export function useGroupWatch(
  api: Pick<ApiClient, "groups" | "keys" | "keyById">,
  { ownId, rule }: { ownId: number | null; rule: GroupRule | null },
): GroupState | null {
  const [state, setState] = useState<GroupState | null>(null);
  useEffect(() => {
    if (ownId === null || rule === null) {
      setState(null);
      return;
    }
    return repeatEvery(GROUP_POLL_MS, async ({ live, stop }) => {
      const next = await readGroupState(api, { ownId, rule });
      if (!live()) return;
      if (next.kind === "unknown") {
        console.error(`The round's groups could not be read: ${next.reason}`);
        return;
      }
      setState((old) => JSON.stringify(old) === JSON.stringify(next) ? old : next);
      if (FINAL.has(next.kind)) stop();
    });
  }, [ownId, rule?.minVoters, rule?.lateJoiners]);
  return state;
}
