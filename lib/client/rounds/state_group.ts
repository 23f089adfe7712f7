/**
 * Browser-safe. A quiet phone's group (page §14.8): its key's place by the round's state read, and
 * its group read whole, once (`GET /api/rounds/{id}/groups/{g}`), held to the checks
 * round_group.ts holds `/groups` to. Only a quiet phone needs it: the page loads it in the quiet
 * phone's chunk.
 * @module
 */
import { hexToBytes } from "../../protocol/bytes.ts";
import { groupFingerprint } from "../../protocol/groups.ts";
import type { ApiClient } from "../api_client.ts";
import type { RoundState } from "../../protocol/hall_schemas.ts";
import { messageOf } from "../text.ts";
import {
  checkPartition,
  type GroupPlace,
  type GroupRule,
  type GroupState,
  placeKey,
} from "./round_group.ts";

/**
 * The place of key `ownId` by the round's state read (`GET /api/rounds/{id}/state`), held as
 * `readGroupState` holds `/groups`, the directory's size the state's `total`. Reads nothing.
 */
export function placeInGroups(
  state: Pick<RoundState, "phase" | "keysAtOpen" | "groups" | "pending" | "total">,
  { ownId, rule }: { ownId: number; rule: GroupRule },
): GroupPlace {
  const partition = checkPartition(state, rule);
  if (partition.kind !== "sound") return partition;
  return placeKey(state, partition, { ownId, rule, directory: state.total });
}

/**
 * The group state of key `ownId` (its key `ownKey`) from the round's `state` and ONE read of its
 * group by index (`GET /api/rounds/{id}/groups/{g}`, the same read for every member): the checks of
 * {@link placeInGroups}, then the group read must answer the index and the ids asked, with the
 * phone's own key at its own id; the fingerprint is computed from the keys read.
 */
export async function readGroupFromState(
  api: Pick<ApiClient, "group">,
  { ownId, ownKey, rule, state }: {
    ownId: number;
    ownKey: string;
    rule: GroupRule;
    state: Pick<RoundState, "phase" | "keysAtOpen" | "groups" | "pending" | "total">;
  },
): Promise<GroupState> {
  const place = placeInGroups(state, { ownId, rule });
  if (place.kind !== "member") return place;
  let read;
  try {
    read = await api.group(place.group);
  } catch (error) {
    return { kind: "unknown", reason: messageOf(error) };
  }
  if (read.group !== place.group || read.ids.join() !== place.ids.join()) {
    return {
      kind: "refused",
      reason: `asked for group ${place.group} (ids ${place.ids[0]}–${place.ids.at(-1)}), ` +
        `the server answered group ${read.group} of other ids`,
    };
  }
  if (read.keys.length !== read.ids.length) {
    return {
      kind: "refused",
      reason: `the group lists ${read.ids.length} ids and ${read.keys.length} keys`,
    };
  }
  if (read.keys[read.ids.indexOf(ownId)] !== ownKey) {
    return {
      kind: "refused",
      reason: `the group does not hold this phone's key at its id ${ownId}`,
    };
  }
  if (new Set(read.keys).size !== read.keys.length) {
    return { kind: "refused", reason: "the group lists one key twice" };
  }
  const fingerprint = groupFingerprint(read.keys.map((key) => hexToBytes(key, 32, "group key")));
  return { kind: "group", ids: read.ids, keys: read.keys, fingerprint, late: place.late };
}
