/**
 * Browser-safe. A phone's group in a round with phases (protocol §2.8): read from
 * `GET /api/rounds/{id}/groups`, the partition recomputed by the group rule and held to the
 * served one, every member's key read from the directory by id, the ring in id order; or what the
 * phone waits for instead. Also the entries a phone keeps of its round: the choice pressed before
 * voting opened, and that its key waits for a late group.
 * @module
 */
import { hexToBytes } from "../../protocol/bytes.ts";
import { groupFingerprint, roundGroups, ruleIsSound } from "../../protocol/groups.ts";
import type { ApiClient } from "../api_client.ts";
import { messageOf } from "../text.ts";
import { groupIndexOf } from "./group_index.ts";
import { isMarkedLate, lateKey, type PageStorage } from "./round_storage.ts";

export { isMarkedLate };

/**
 * Where a phone's key stands: voting not open yet; in a group (its ids, keys in id order, its
 * fingerprint, and whether it is a late group); pending (a late key: with late joiners on, the
 * late keys still missing before its group fills); left out when the round closed; the served
 * groups refused by the check, with why; or not known now (a read failed; asked again later).
 */
export type GroupState =
  | { kind: "join" }
  | { kind: "group"; ids: number[]; keys: string[]; fingerprint: string; late: boolean }
  | { kind: "pending"; lateJoiners: boolean; missing: number; minVoters: number }
  | { kind: "closed" }
  | { kind: "refused"; reason: string }
  | { kind: "unknown"; reason: string };

/** The round's rule the served groups are held to. */
export type GroupRule = { minVoters: number; lateJoiners: boolean };

/** True when `a` and `b` hold the same groups of the same ids, in the same order. */
export function sameGroups(a: readonly number[][], b: readonly number[][]): boolean {
  return a.length === b.length &&
    a.every((g, i) => g.length === b[i].length && g.every((id, j) => id === b[i][j]));
}

/** The served partition of a round with phases: `/groups` answers it, and the state read holds it. */
export type ServedPartition = {
  phase: "join" | "voting" | "closed";
  keysAtOpen: number | null;
  groups: number[][];
  pending: number[];
};

/** Where a key stands by the served partition alone, before any read of its group's keys. */
export type GroupPlace =
  | Exclude<GroupState, { kind: "group" }>
  | { kind: "member"; group: number; ids: number[]; late: boolean };

/** A served partition that holds: its keys at the opening, and the keys its groups and pending list. */
export type SoundPartition = { kind: "sound"; keysAtOpen: number; total: number };

/**
 * The served partition held to the round's rule: the rule must be sound (at least `minVoters` keys
 * at the opening, `minVoters` 8 to 64), and the partition the one the group rule gives for its
 * `keysAtOpen` and the keys it lists. Reads nothing.
 */
export function checkPartition(
  served: ServedPartition,
  rule: GroupRule,
): Exclude<GroupState, { kind: "group" }> | SoundPartition {
  if (served.phase === "join") return { kind: "join" };
  const { keysAtOpen, groups, pending } = served;
  if (keysAtOpen === null) {
    // The next round started while this one was still joining: no key of it ever votes.
    if (served.phase === "closed") return { kind: "closed" };
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
  return { kind: "sound", keysAtOpen, total };
}

/**
 * The place of key `ownId` in a `sound` partition, `directory` the key directory's size, which
 * must hold every key the partition lists. Reads nothing.
 */
export function placeKey(
  served: ServedPartition,
  { keysAtOpen, total }: SoundPartition,
  { ownId, rule, directory }: { ownId: number; rule: GroupRule; directory: number },
): GroupPlace {
  if (total > directory) {
    return {
      kind: "refused",
      reason: `the groups list ${total} keys, the key directory holds ${directory}`,
    };
  }
  const { groups, pending } = served;
  const group = groupIndexOf(groups, ownId);
  if (group === null) {
    if (served.phase === "closed") return { kind: "closed" };
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
 * The group state of key `ownId` in the round `api` calls: `/groups` held to the rule
 * ({@link checkPartition}), then the directory's size read and the key placed ({@link placeKey}),
 * then every member's key read by its id, which must come back under that id.
 */
export async function readGroupState(
  api: Pick<ApiClient, "groups" | "keys" | "keyById">,
  { ownId, rule }: { ownId: number; rule: GroupRule },
): Promise<GroupState> {
  let served;
  try {
    served = await api.groups();
  } catch (error) {
    return { kind: "unknown", reason: messageOf(error) };
  }
  const partition = checkPartition(served, rule);
  if (partition.kind !== "sound") return partition;
  let directory: number;
  try {
    directory = (await api.keys(0, 1)).total;
  } catch (error) {
    return { kind: "unknown", reason: messageOf(error) };
  }
  const place = placeKey(served, partition, { ownId, rule, directory });
  if (place.kind !== "member") return place;
  const { ids, late } = place;
  let keys: string[];
  try {
    const records = await Promise.all(ids.map((id) => api.keyById(id)));
    const wrong = records.findIndex((record, i) => record.id !== ids[i]);
    if (wrong >= 0) {
      return { kind: "refused", reason: `key ${ids[wrong]} came back as key ${records[wrong].id}` };
    }
    keys = records.map((record) => record.key);
  } catch (error) {
    return { kind: "unknown", reason: messageOf(error) };
  }
  const fingerprint = groupFingerprint(keys.map((key) => hexToBytes(key, 32, "group key")));
  return { kind: "group", ids, keys, fingerprint, late };
}

/** Storage key of the choice a voter pressed before its vote could be sent. */
function choiceKey(namespace: string): string {
  return `${namespace}:chosen`;
}

/** The choice `namespace` pressed and has not sent yet, or null. */
export function readChosen(storage: PageStorage, namespace: string): string | null {
  return storage.getItem(choiceKey(namespace));
}

/** Keeps `choice` (or, null, forgets it) until it is signed and sent. */
export function keepChosen(storage: PageStorage, namespace: string, choice: string | null): void {
  if (choice === null) storage.removeItem(choiceKey(namespace));
  else storage.setItem(choiceKey(namespace), choice);
}

/** Marks (or, false, unmarks) `namespace` as waiting for a late group. */
export function markLate(storage: PageStorage, namespace: string, waiting: boolean): void {
  if (waiting) storage.setItem(lateKey(namespace), "waiting");
  else storage.removeItem(lateKey(namespace));
}
