// Browser-safe. The order of the tally of `GET /api/tally` (protocol §4): count descending, then
// payload ascending, so equal counts read the same on the server, in the auditor and on the board.

import type { TallyEntry } from "./schemas.ts";

/** Tally order: negative when row `a` comes before row `b` (more votes, or as many and a lower payload). */
export function compareTallyRows(a: TallyEntry, b: TallyEntry): number {
  return b.count - a.count || (a.payload < b.payload ? -1 : a.payload > b.payload ? 1 : 0);
}

/** The rows of `counts` (payload → votes) in tally order. */
export function rankTally(counts: Map<string, number>): TallyEntry[] {
  return [...counts].map(([payload, count]) => ({ payload, count })).sort(compareTallyRows);
}

/** The tally of `payloads`, one vote each, in tally order. */
export function tallyOf(payloads: Iterable<string>): TallyEntry[] {
  const counts = new Map<string, number>();
  for (const p of payloads) counts.set(p, (counts.get(p) ?? 0) + 1);
  return rankTally(counts);
}
