/**
 * The budget of a page's relayed requests (page §14.8), kept in the tab's session storage so that
 * a reload does not start it afresh: at most {@link RELAYED_PER_MINUTE} in any 60 s.
 * @module
 */
import { PAGE_REQUESTS_PER_MINUTE, RequestBudget } from "../../lib/client/relay/poll_schedule.ts";
import type { Budget } from "../../lib/client/relay/page_transport.ts";

/** The most relayed requests a page sends in any 60 s (lib/client/relay/poll_schedule.ts). */
export const RELAYED_PER_MINUTE = PAGE_REQUESTS_PER_MINUTE;

/** Session-storage key of the times of this tab's last relayed requests (ms since the epoch). */
const SENT_KEY = "ringvote/relayed-sent";

/** The tab's budget, with the requests of the last minute before a reload counted in. */
export function pageBudget(storage: Storage = sessionStorage): Budget {
  const budget = new RequestBudget(RELAYED_PER_MINUTE);
  const now = Date.now();
  let kept: number[] = [];
  try {
    const stored = JSON.parse(storage.getItem(SENT_KEY) ?? "[]");
    if (Array.isArray(stored)) kept = stored.filter((t) => Number.isFinite(t) && t > now - 60_000);
  } catch {
    // Unreadable: counted from now.
  }
  for (const at of kept) budget.record(at);
  return {
    delayFor: (at) => budget.delayFor(at),
    record(at) {
      budget.record(at);
      kept = [...kept.filter((t) => t > at - 60_000), at];
      try {
        storage.setItem(SENT_KEY, JSON.stringify(kept));
      } catch {
        // Storage full or refused: the budget still holds for this load.
      }
    },
  };
}
