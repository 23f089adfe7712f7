/**
 * Browser-safe. A quiet phone's group (page §14.8): its key's place by the round's state read, and
 * its group read whole, once (`GET /api/rounds/{id}/groups/{g}`), held to the checks
 * round_group.ts holds `/groups` to. Only a quiet phone needs it: the page loads it in the quiet
 * phone's chunk.
 * @module
 */
import { hexToBytes } from "../../protocol/bytes.ts";
import { groupFingerprint, roundGroups, ruleIsSound } from "../../protocol/groups.ts";
import type { ApiClient } from "../api_client.ts";
import type { RoundState } from "../../protocol/hall_schemas.ts";
import { messageOf } from "../text.ts";
import { type GroupRule, type GroupState, sameGroups } from "./round_group.ts";

/** Where a phone's key stands by the state read alone, before any read of its group. */
export type GroupPlace =
  | Exclude<GroupState, { kind: "group" }>
  | { kind: "member"; group: number; ids: number[]; late: boolean };

/**
 * The place of key `ownId` by the round's state read (`GET /api/rounds/{id}/state`): the rule must
 * be sound, the served partition the one the group rule gives for its `keysAtOpen` and the keys it
 * lists, within the directory's size (`total`), as `readGroupState` holds `/groups` to.
 * Reads nothing.
 */
export function placeInGroups(
  state: Pick<RoundState, "phase" | "keysAtOpen" | "groups" | "pending" | "total">,
  { ownId, rule }: { ownId: number; rule: GroupRule },
): GroupPlace {
  if (state.phase === "join") return { kind: "join" };
  const { keysAtOpen, groups, pending } = state;
  if (keysAtOpen === null) {
    if (state.phase === "closed") return { kind: "closed" };
    return { kind: "refused", reason: "the server lists no keys at the opening of voting" };
  }
  if (!ruleIsSound({ keysAtOpen, ...rule })) {
    return {
      kind: "refused",
      reason: `the server says voting opened with ${keysAtOpen} keys and minVoters ` +
        `${rule.minVoters}: a round opens with at least minVoters keys, 8 to 64 (protocol §4.9)`,
    };
  }
  const late = groups.reduce((sum, g) => sum + g.length, 0) - keysAtOpen;
  const total = keysAtOpen + Math.max(0, late) + pending.length;
  const expected = roundGroups({ keysAtOpen, total, ...rule });
  if (!sameGroups(expected.groups, groups) || expected.pending.join() !== pending.join()) {
    return {
      kind: "refused",
      reason: "the server's groups are not the ones the group rule gives (protocol §2.8)",
    };
  }
  if (total > state.total) {
    return {
      kind: "refused",
      reason: `the groups list ${total} keys, the key directory holds ${state.total}`,
    };
  }
  const group = groups.findIndex((ids) => ids.includes(ownId));
  if (group < 0) {
    if (state.phase === "closed") return { kind: "closed" };
    if (ownId <= keysAtOpen) {
      return {
        kind: "refused",
        reason: `key ${ownId} joined before voting opened but is in no group`,
      };
    }
    const missing = rule.lateJoiners ? rule.minVoters - pending.length : 0;
    return { kind: "pending", missing, ...rule };
  }
  return { kind: "member", group, ids: groups[group], late: ownId > keysAtOpen };
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
