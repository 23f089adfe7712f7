/**
 * Browser-safe. The rounds of protocol §4.9 as the bulletin board and its projector view name and
 * link them: the `round` parameter read, a round's title, the list of rounds with the one shown
 * and the current one marked, and the board's own addresses.
 * @module
 */
import type { RoundInfo, RoundList } from "../../protocol/schemas.ts";

/** A round id as the address writes it: a decimal integer from 1, without leading zeros. */
const ROUND_PARAM = /^[1-9][0-9]{0,8}$/;

/** The round a `round` query parameter names, or null when it is absent or not a round id. */
export function parseRoundParam(value: string | null): number | null {
  return value !== null && ROUND_PARAM.test(value) ? Number(value) : null;
}

/** `Round {id}`: how every page names a round. */
export function roundName(id: number): string {
  return `Round ${id}`;
}

/**
 * What a round asks, for a heading: its question, or for a round without one (the election, round
 * 1) what it takes, `Free-text vote`.
 */
export function roundQuestion(round: Pick<RoundInfo, "question"> | null | undefined): string {
  const question = round?.question.trim() ?? "";
  return question === "" ? "Free-text vote" : question;
}

/** One round in the board's list. */
export type RoundLink = {
  id: number;
  href: string;
  question: string;
  /** The board shows this round. */
  shown: boolean;
  /** The voting page shows this round: it is the one taking votes. */
  current: boolean;
};

/** Every round of `list` by ascending id, linked to its board, `shown` and the current one marked. */
export function roundLinks(list: RoundList, shown: number): RoundLink[] {
  return [...list.rounds].sort((a, b) => a.id - b.id).map((round) => ({
    id: round.id,
    href: boardHref({ round: round.id }),
    question: roundQuestion(round),
    shown: round.id === shown,
    current: round.id === list.current,
  }));
}

/** Where a board address points: a round (none: round 1's plain board), a vote, the room view. */
export type BoardPlace = { round?: number | null; vote?: string | null; view?: "room" | null };

/**
 * The board's address for `place`: `/board`, `/board?round=2`, `/board?round=2#vote={voteId}`,
 * `/board?view=room`. The vote is in the fragment, which the browser never sends: the server's log
 * does not learn which vote someone opened (protocol §7). The query and fragment alone
 * (`?round=2#vote=…`, or "" for none) with `queryOnly`.
 */
export function boardHref(place: BoardPlace, { queryOnly = false } = {}): string {
  const params = new URLSearchParams();
  if (place.view === "room") params.set("view", "room");
  if (place.round != null) params.set("round", String(place.round));
  const query = params.size === 0 ? "" : `?${params}`;
  const fragment = place.vote == null ? "" : `#vote=${encodeURIComponent(place.vote)}`;
  return queryOnly ? query + fragment : `/board${query}${fragment}`;
}

/** The vote id of a board address's fragment (`#vote={voteId}`), or null. */
export function sharedVote(fragment: string): string | null {
  for (const part of fragment.replace(/^#/, "").split("&")) {
    if (!part.startsWith("vote=")) continue;
    try {
      const id = decodeURIComponent(part.slice("vote=".length));
      return id === "" ? null : id;
    } catch {
      return null;
    }
  }
  return null;
}
