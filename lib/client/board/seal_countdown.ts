/**
 * Browser-safe. The open block of a round as the pages show it (protocol §4.9
 * `GET /api/rounds/{id}/block/open`): the time left to the next seal tick and the votes waiting,
 * as a result, and the one place that result is put into words.
 * @module
 */
import type { OpenBlock } from "../../protocol/schemas.ts";

/** The server counts the votes waiting up to this many (protocol §4.9). */
export const WAITING_COUNTED_UP_TO = 1000;

/** How long until the next seal tick, in whole seconds rounded up, and the votes waiting. */
export type SealCountdown = {
  /** Seconds to the next seal tick; 0 once it is due. */
  seconds: number;
  /** Votes waiting in the open block, as served. */
  waiting: number;
  /** The server stopped counting: `waiting` or more are waiting. */
  atLeast: boolean;
};

/**
 * The countdown of `open` at time `now` (ms since the epoch). Seal ticks fall on the multiples of
 * the interval (protocol §4.9), so with no vote waiting a tick that has passed since the read is
 * followed by the next; with votes waiting it stays due until the next read says what was sealed.
 * The time left is kept within one interval, so a browser clock behind the server's never shows
 * more than a tick away.
 */
export function sealCountdown(open: OpenBlock, now: number): SealCountdown {
  const { nextSealAt, intervalMs, votes } = open;
  let left = nextSealAt - now;
  if (left <= 0 && votes === 0) left = intervalMs - ((now - nextSealAt) % intervalMs);
  return {
    seconds: Math.max(0, Math.ceil(Math.min(left, intervalMs) / 1000)),
    waiting: votes,
    atLeast: votes >= WAITING_COUNTED_UP_TO,
  };
}

/** `seconds` as the pages write a wait: `4 s`, `1 min 5 s`, `2 min`. */
export function formatWait(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const rest = seconds % 60;
  return `${Math.floor(seconds / 60)} min${rest === 0 ? "" : ` ${rest} s`}`;
}

/** The votes waiting in words: `no votes waiting`, `1 vote waiting`, `3 votes waiting`. */
export function waitingText({ waiting, atLeast }: SealCountdown): string {
  if (atLeast) return `${waiting} or more votes waiting`;
  if (waiting === 0) return "no votes waiting";
  return `${waiting} ${waiting === 1 ? "vote" : "votes"} waiting`;
}

/**
 * The time part in words. No block is sealed without a vote (protocol §3.5), so with none waiting
 * it names the seal tick, not a block: `Next block sealed in 4 s`, `Next seal in 4 s`.
 */
export function sealTimeText({ seconds, waiting }: SealCountdown): string {
  if (waiting === 0) return `Next seal in ${formatWait(seconds)}`;
  return seconds === 0
    ? "Sealing the next block now"
    : `Next block sealed in ${formatWait(seconds)}`;
}

/** The whole line: `Next block sealed in 4 s · 3 votes waiting`. */
export function sealCountdownText(countdown: SealCountdown): string {
  return `${sealTimeText(countdown)} · ${waitingText(countdown)}`;
}
