/**
 * Browser-safe. The tally of the board's projector view (page §10.11): a round with choices shows
 * every choice in the order it was asked, at 0 too, so bars never jump; a free-text round shows the
 * served order, the most common answers first, and sums up the rest; and the fingerprints of a
 * round's groups.
 * @module
 */
import type { Tally } from "../../protocol/schemas.ts";
import { hexToBytes } from "../../protocol/bytes.ts";
import { groupFingerprint } from "../../protocol/groups.ts";

/** One bar: the payload, its count, and its length as a share of the longest bar (0 to 1). */
export type RoomRow = { payload: string; count: number; share: number };

/** The bars, and what did not fit: how many more answers, with how many votes between them. */
export type RoomTally = { rows: RoomRow[]; more: { answers: number; votes: number } | null };

/** The most bars the projector view shows: as many as a round may have choices (protocol §4.9). */
export const ROOM_ROWS = 12;

/**
 * The bars of `tally` for a round offering `choices` (none: free text): each choice once, in order,
 * with its served count or 0, then any payload the tally holds that is not a choice (a server that
 * counts what it should have refused is shown, not hidden); at most `limit` bars, the rest summed.
 */
export function roomTally(
  choices: readonly string[],
  tally: Tally | null,
  { limit = ROOM_ROWS }: { limit?: number } = {},
): RoomTally {
  const served = new Map((tally?.results ?? []).map((r) => [r.payload, r.count]));
  const listed = [
    ...choices.map((payload) => ({ payload, count: served.get(payload) ?? 0 })),
    ...(tally?.results ?? []).filter((r) => !choices.includes(r.payload))
      .map(({ payload, count }) => ({ payload, count })),
  ];
  const shown = listed.slice(0, limit);
  const rest = listed.slice(limit);
  const longest = Math.max(1, ...shown.map((r) => r.count));
  return {
    rows: shown.map((r) => ({ ...r, share: r.count / longest })),
    more: rest.length === 0
      ? null
      : { answers: rest.length, votes: rest.reduce((sum, r) => sum + r.count, 0) },
  };
}

/** A group as the projector shows it: its key ids and the short fingerprint of its keys. */
export type RoomGroup = { ids: number[]; fingerprint: string };

/**
 * The fingerprint of every group (protocol §2.8) from the round's directory, `keys` by id; a group
 * with a key missing from `keys` is left out until the directory is read again.
 */
export function roomGroups(
  groups: readonly number[][],
  keys: ReadonlyMap<number, string>,
): RoomGroup[] {
  return groups.flatMap((ids) => {
    const members = ids.map((id) => keys.get(id));
    if (members.some((key) => key === undefined)) return [];
    const bytes = members.map((key) => hexToBytes(key!, 32, "group key"));
    return [{ ids: [...ids], fingerprint: groupFingerprint(bytes) }];
  });
}
