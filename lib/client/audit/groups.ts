/**
 * Browser-safe. The group rule of a round as the audit checks it (protocol §2.8): what the rule
 * depends on besides the directory (`keysAtOpen`, read from the round's `/groups`, and the round's
 * `minVoters` and `lateJoiners`, read from `/api/rounds`), and the check that a vote's ring is
 * exactly one group, recomputed from the directory the audit read.
 * @module
 */
import { ringIsGroup } from "../../protocol/groups.ts";
import { RoundGroups, RoundList } from "../../protocol/schemas.ts";

/** A round's group rule: null `keysAtOpen` when voting never opened (then no ring is a group). */
export type RoundGroupRule = { keysAtOpen: number | null; minVoters: number; lateJoiners: boolean };

/** GET `path` of the server at `baseUrl` as JSON, or why not. */
async function getJson(fetcher: typeof fetch, baseUrl: string, path: string): Promise<unknown> {
  const url = new URL(path, baseUrl).href;
  const res = await fetcher(url, { headers: { accept: "application/json" } });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`GET ${path} answered ${res.status}`);
  }
  return await res.json();
}

/**
 * The group rule of round `round` (2 and up) of the server at `baseUrl`: its settings from
 * `GET /api/rounds` and its `keysAtOpen` from `GET /api/rounds/{round}/groups`. Rejects when the
 * server does not answer them in their documented form.
 */
export async function readGroupRule(
  fetcher: typeof fetch,
  baseUrl: string,
  round: number,
): Promise<RoundGroupRule> {
  const list = RoundList.safeParse(await getJson(fetcher, baseUrl, "/api/rounds"));
  const info = list.success ? list.data.rounds.find((r) => r.id === round) : undefined;
  if (!info) throw new Error(`GET /api/rounds does not list round ${round}`);
  const groups = RoundGroups.safeParse(
    await getJson(fetcher, baseUrl, `/api/rounds/${round}/groups`),
  );
  if (!groups.success) throw new Error(`GET /api/rounds/${round}/groups is malformed`);
  return {
    keysAtOpen: groups.data.keysAtOpen,
    minVoters: info.minVoters,
    lateJoiners: info.lateJoiners,
  };
}

/**
 * `source` with the group rule of round `round` (2 and up) of the server at `baseUrl`, read once
 * when the audit asks for it ({@link readGroupRule}).
 */
export function withGroupRule<T extends object>(
  source: T,
  fetcher: typeof fetch,
  baseUrl: string,
  round: number,
): T & { groups: () => Promise<RoundGroupRule> } {
  let rule: Promise<RoundGroupRule> | null = null;
  return { ...source, groups: () => rule ??= readGroupRule(fetcher, baseUrl, round) };
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
