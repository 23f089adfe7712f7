/**
 * Browser-safe. The group rule of a round as the audit checks it (protocol §2.8): what the rule
 * depends on besides the directory (`keysAtOpen`, read from the round's `/groups`, and the round's
 * `minVoters` and `lateJoiners`, read from `/api/rounds`), and the check that a vote's ring is
 * exactly one group, recomputed from the directory the audit read.
 * @module
 */
import { ringIsGroup } from "../../protocol/groups.ts";
import type { ApiClient } from "../api_client.ts";
import { readRoundCards, type RoundCardsRead } from "./cards.ts";

/** A round's group rule: null `keysAtOpen` when voting never opened (then no ring is a group). */
export type RoundGroupRule = { keysAtOpen: number | null; minVoters: number; lateJoiners: boolean };

/** The calls of a round's API client the group rule is read with (lib/client/api_client.ts). */
export type GroupRuleSource = Pick<ApiClient, "rounds" | "groups" | "cardSet">;

/**
 * The group rule of round `round` (2 and up) through `api`, the round's API client: its settings
 * from `GET /api/rounds` and its `keysAtOpen` from `GET /api/rounds/{round}/groups`. Rejects when
 * the server does not answer them, or does not list the round.
 */
export async function readGroupRule(api: GroupRuleSource, round: number): Promise<RoundGroupRule> {
  const [list, groups] = await Promise.all([api.rounds(), api.groups()]);
  const info = list.rounds.find((r) => r.id === round);
  if (!info) throw new Error(`the rounds listed do not include round ${round}`);
  return {
    keysAtOpen: groups.keysAtOpen,
    minVoters: info.minVoters,
    lateJoiners: info.lateJoiners,
  };
}

/**
 * `api` with the group rule of its round `round` (2 and up), read once when the audit asks for it
 * ({@link readGroupRule}), and its card set, null for an open round (./cards.ts); round 1 has
 * neither, and `api` is answered as it is.
 */
export function withGroupRule<T extends GroupRuleSource>(
  api: T,
  round: number | null,
): T & {
  groupRule?: () => Promise<RoundGroupRule>;
  cards?: () => Promise<RoundCardsRead | null>;
} {
  if (round === null || round === 1) return api;
  let rule: Promise<RoundGroupRule> | null = null;
  let cards: Promise<RoundCardsRead | null> | null = null;
  return {
    ...api,
    groupRule: () => rule ??= readGroupRule(api, round),
    cards: () => cards ??= readRoundCards(api, round),
  };
}

/**
 * Whether a ring of registered keys, in ring order, is one group of the round under `rule`, the
 * keys' ids taken from the `directory` as read (its order is id order, from 1).
 */
export function groupCheck(
  rule: RoundGroupRule,
  directory: ReadonlySet<string>,
): (members: readonly string[]) => boolean {
  const idOf = new Map<string, number>();
  for (const key of directory) idOf.set(key, idOf.size + 1);
  const { keysAtOpen } = rule;
  return (members) =>
    keysAtOpen !== null &&
    ringIsGroup(members.map((key) => idOf.get(key) ?? 0), { ...rule, keysAtOpen });
}
