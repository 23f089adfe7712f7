/**
 * A phone's watch of its group in a round with phases (page §14.5, §14.8), until its key is in a
 * group, is left out of a closed round, or the served groups fail their check; a failed read keeps
 * what was known. A quiet phone hands in the state it reads on its own schedule: the served
 * partition is checked from it and its group read whole, once (`GET /api/rounds/{id}/groups/{g}`).
 * Any other page asks `GET /api/rounds/{id}/groups` every 2 s and reads its group's keys by id.
 * @module
 */
import { useEffect, useRef, useState } from "react";
import type { ApiClient } from "../../lib/client/api_client.ts";
import type { RoundState } from "../../lib/protocol/hall_schemas.ts";
import { repeatEvery } from "../hooks/polling.ts";
import { loadRelay } from "../hooks/page_fetch.ts";
import {
  type GroupRule,
  type GroupState,
  readGroupState,
} from "../../lib/client/rounds/round_group.ts";

/** How often a page that is not quiet asks for its group while it waits. */
const GROUP_POLL_MS = 2000;

/** The states a phone stops asking in: nothing more can change. */
const FINAL = new Set<GroupState["kind"]>(["group", "closed", "refused"]);

/** What the watch needs: its key's id and public key, the round's rule, and a quiet phone's state. */
export type GroupWatchOptions = {
  ownId: number | null;
  ownKey: string | null;
  rule: GroupRule | null;
  /** A quiet phone's latest state read (null before the first); undefined: ask every 2 s. */
  state?: RoundState | null;
};

/**
 * While `ownId` is known (non-null), the group state of that key, until final; null until the
 * first answer.
 */
export function useGroupWatch(
  api: Pick<ApiClient, "group" | "groups" | "keys" | "keyById">,
  { ownId, ownKey, rule, state }: GroupWatchOptions,
): GroupState | null {
  const [group, setGroup] = useState<GroupState | null>(null);
  const known = useRef<GroupState | null>(null);
  const reading = useRef(false);
  const mounted = useRef(true);
  useEffect(() => () => {
    mounted.current = false;
  }, []);
  const quiet = state !== undefined;
  const settle = (next: GroupState) => {
    if (next.kind === "unknown") {
      console.error(`The round's groups could not be read: ${next.reason}`);
      return;
    }
    known.current = next;
    setGroup((old) => JSON.stringify(old) === JSON.stringify(next) ? old : next);
  };
  // A quiet phone: each new state is checked; the group is read once its key is in one.
  useEffect(() => {
    if (!quiet || state === null || ownId === null || ownKey === null || rule === null) return;
    if (known.current !== null && FINAL.has(known.current.kind)) return;
    if (reading.current) return;
    reading.current = true;
    // A read under way is never dropped for a newer state: its group is the one to keep.
    // The quiet phone's chunk: a static file of the page's own server, never sent through the relay.
    loadRelay().then(({ readGroupFromState }) =>
      readGroupFromState(api, { ownId, ownKey, rule, state })
    ).then((next) => {
      if (mounted.current) settle(next);
    }).finally(() => (reading.current = false));
  }, [quiet, state, ownId, ownKey, rule?.minVoters, rule?.lateJoiners]);
  // Any other page: the groups asked every GROUP_POLL_MS until final.
  useEffect(() => {
    if (quiet || ownId === null || rule === null) {
      if (!quiet) setGroup(null);
      return;
    }
    return repeatEvery(GROUP_POLL_MS, async ({ live, stop }) => {
      const next = await readGroupState(api, { ownId, rule });
      if (!live()) return;
      settle(next);
      if (FINAL.has(next.kind)) stop();
    });
  }, [quiet, ownId, rule?.minVoters, rule?.lateJoiners]);
  return group;
}
