/**
 * Browser-safe. When a phone sends its vote through the relay (protocol §7): not when its choice
 * was pressed, which anyone watching the room or the relay could match, but at a time drawn at
 * random in a window every phone of the round shares, so the time a vote arrives says as little as
 * possible about whose it is. Pure: the clock and the random source are passed in.
 * @module
 */
import { sendWindowMs, WINDOW_INTERVALS } from "../../protocol/hall.ts";

export { sendWindowMs, WINDOW_INTERVALS };

/** How long after voting opens (or a late group forms) the send window starts. */
export const SEND_DELAY_MS = 5_000;

/** What a phone waiting for its send time says. */
export const KEEP_OPEN_TEXT = "Keep this page open until your vote is sent.";

/** A source of numbers uniform in [0, 1), as `Math.random`. */
export type Random = () => number;

/** Why a vote is sent when it is. */
export type SendReason =
  /** Pressed before or during the window: a time drawn in the window, after the press. */
  | "window"
  /** Pressed after the window, or the window's draw fell before the press: U[0, W] after it. */
  | "after-press"
  /** Queued or in doubt when the page loaded: U[0, W] after the load, never at once. */
  | "resume";

/** When to send, in ms since the epoch, and why. */
export type SendPlan = { at: number; reason: SendReason };

/** W, the window's length: two sealing intervals of `intervalMs` each. */
export function windowMs(intervalMs: number): number {
  if (!(Number.isFinite(intervalMs) && intervalMs > 0)) {
    throw new RangeError(`the sealing interval must be a positive number of ms, got ${intervalMs}`);
  }
  return WINDOW_INTERVALS * intervalMs;
}

/** `random()` checked to lie in [0, 1). */
function uniform(random: Random): number {
  const u = random();
  if (!(u >= 0 && u < 1)) {
    throw new RangeError(`the random source gave ${u}, not a number in [0, 1)`);
  }
  return u;
}

/** The window of a group opened at `openedAt`: [openedAt + 5 s, openedAt + 5 s + W]. */
export function sendWindow(
  openedAt: number,
  intervalMs: number,
): { start: number; end: number } {
  const start = openedAt + SEND_DELAY_MS;
  return { start, end: start + windowMs(intervalMs) };
}

/**
 * When to send a vote pressed at `pressedAt` in a group whose voting opened at `openedAt` (a late
 * group: the time it formed). The send time is `openedAt + 5 s + U[0, W]` whatever the press time;
 * should that draw fall before the press, or the press come after the window, the vote waits a
 * fresh U[0, W] from the press instead. A vote is never sent at the moment it is pressed.
 */
export function planVoteSend(
  { openedAt, pressedAt, intervalMs }: { openedAt: number; pressedAt: number; intervalMs: number },
  random: Random,
): SendPlan {
  const { start, end } = sendWindow(openedAt, intervalMs);
  const w = windowMs(intervalMs);
  if (pressedAt <= end) {
    const drawn = start + uniform(random) * w;
    if (drawn > pressedAt) return { at: drawn, reason: "window" };
  }
  return { at: pressedAt + uniform(random) * w, reason: "after-press" };
}

/**
 * When to send (or settle) a vote found queued or in doubt when the page loaded at `loadedAt`,
 * in a group opened at `openedAt`: as if pressed at the load, so never at once, and a reload is
 * not a beacon: a time in the window still to come, or a fresh U[0, W] after the load.
 */
export function planResume(
  { openedAt, loadedAt, intervalMs }: { openedAt: number; loadedAt: number; intervalMs: number },
  random: Random,
): SendPlan {
  const { at } = planVoteSend({ openedAt, pressedAt: loadedAt, intervalMs }, random);
  return { at, reason: "resume" };
}

/**
 * The window a phone uses: always its own W, computed from the values fixed at the opening;
 * `differs` when the server's `sendWindowMs` is another number, which the phone says.
 */
export function checkWindow(own: number, served: number | null): {
  windowMs: number;
  differs: boolean;
} {
  return { windowMs: own, differs: served !== null && served !== own };
}

/** A redraw needs 1/REDRAW_LEAST of the window left: a sliver of it would be sending at once. */
export const REDRAW_LEAST = 4;

/** Why a hall's vote is sent when it is. */
export type HallSendReason =
  /** The draw in the window fell after the phone was ready. */
  | "window"
  /** The phone was ready after its draw: drawn again over what is left of the window. */
  | "redrawn"
  /** The phone was ready after the window: U(0, W] after it was ready. */
  | "after-window"
  /** Queued or in doubt when the page loaded: as if ready at the load. */
  | "resume";

/** When to send, in ms since the epoch, and why. */
export type HallSendPlan = { at: number; reason: HallSendReason };

/**
 * When a phone ready at `readyAt` (its group read and its ballot signed) sends its vote in a group
 * opened at `openedAt`, with a window of `windowMs` (W, {@link sendWindowMs}): drawn in
 * [openedAt + 5 s, openedAt + 5 s + W]; a draw at or before `readyAt` is drawn again over what is
 * left of the window, (readyAt, end], when a quarter of it is left at least; otherwise, and past
 * the window, U(0, W] after `readyAt`. Never at once. An `openedAt` after `readyAt` counts as
 * `readyAt`.
 */
export function planHallSend(
  { openedAt, readyAt, windowMs }: { openedAt: number; readyAt: number; windowMs: number },
  random: Random,
): HallSendPlan {
  if (!(Number.isFinite(windowMs) && windowMs > 0)) {
    throw new RangeError(`the send window must be a positive number of ms, got ${windowMs}`);
  }
  // A phone is ready after voting opened: an opening said to come later is taken as now, so that
  // no figure of the server's holds a vote back past one window.
  const start = Math.min(openedAt, readyAt) + SEND_DELAY_MS;
  const end = start + windowMs;
  const drawn = start + uniform(random) * windowMs;
  if (drawn > readyAt) return { at: drawn, reason: "window" };
  // 1 - U lies in (0, 1]: a time after `readyAt`, at most the window's end; what is left of the
  // window must be a quarter of it at least, or the phone draws as one ready after it.
  if (end - readyAt >= windowMs / REDRAW_LEAST) {
    return { at: readyAt + (1 - uniform(random)) * (end - readyAt), reason: "redrawn" };
  }
  return { at: readyAt + (1 - uniform(random)) * windowMs, reason: "after-window" };
}

/** {@link planHallSend} for a vote found queued or in doubt when the page loaded at `loadedAt`. */
export function planHallResume(
  { openedAt, loadedAt, windowMs }: { openedAt: number; loadedAt: number; windowMs: number },
  random: Random,
): HallSendPlan {
  const { at } = planHallSend({ openedAt, readyAt: loadedAt, windowMs }, random);
  return { at, reason: "resume" };
}
