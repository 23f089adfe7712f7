/**
 * Browser-safe. How often a relayed phone reads the round's state (protocol §7.4): every poll
 * jittered, less often once its own vote is sealed and proven, a minimum checkpoint check until
 * the round closes and one after; and a budget every relayed request goes through, at most 20 in
 * any 60 s. Pure: the clock and the random source are passed in.
 * @module
 */

import { CHECKPOINT_CHECK_MS } from "./poll_delays.ts";

export {
  CHECKPOINT_CHECK_MS,
  nextPollDelay,
  POLL_DELAYS_MS,
  type PollStage,
  type Random,
} from "./poll_delays.ts";

/** Most relayed requests of one phone in any 60 s. */
export const MAX_REQUESTS_PER_MINUTE = 20;

/** The most relayed requests a page sends in any 60 s: a margin of two under the phone's bound. */
export const PAGE_REQUESTS_PER_MINUTE = 18;

/**
 * True when the checkpoint of `size` calls for a consistency proof from `checkedSize`, checked
 * last at `checkedAt`: it grew, and a minute has passed (or the round closed: `final`).
 */
export function checkpointDue(
  { size, checkedSize, checkedAt, now, final = false }: {
    size: number;
    checkedSize: number | null;
    checkedAt: number | null;
    now: number;
    final?: boolean;
  },
): boolean {
  if (checkedSize !== null && size <= checkedSize) return false;
  if (final || checkedAt === null) return true;
  return now - checkedAt >= CHECKPOINT_CHECK_MS;
}

/**
 * The relayed requests a phone sent in the last minute: every one goes through `delayFor`
 * first and is `record`ed when sent, so no 60 s holds more than `maxPerMinute`.
 */
export class RequestBudget {
  readonly #sent: number[] = [];
  constructor(readonly maxPerMinute: number = MAX_REQUESTS_PER_MINUTE) {}

  /** Ms to wait at `now` before one more request fits the last 60 s; 0 when it fits now. */
  delayFor(now: number): number {
    this.#forget(now);
    if (this.#sent.length < this.maxPerMinute) return 0;
    return this.#sent[this.#sent.length - this.maxPerMinute] + 60_000 - now;
  }

  /** Notes a request sent at `now`. */
  record(now: number): void {
    this.#forget(now);
    this.#sent.push(now);
  }

  /** Requests sent in the 60 s before `now`. */
  inLastMinute(now: number): number {
    this.#forget(now);
    return this.#sent.length;
  }

  #forget(now: number): void {
    while (this.#sent.length > 0 && this.#sent[0] <= now - 60_000) this.#sent.shift();
  }
}
