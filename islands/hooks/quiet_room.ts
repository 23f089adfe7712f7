/**
 * The reads a quiet phone's state answers (page §14.8), the wait of its other reads while it
 * holds them, and its votes' timing: loaded with the relay transport (a page without a relay
 * pinned never needs them); the signals they read are in quiet_signals.ts.
 * @module
 */
import { answeredByState, answerFromState } from "../../lib/client/rounds/state_answers.ts";
import type { RoundState } from "../../lib/protocol/hall_schemas.ts";
import { nextPollDelay, type PollStage } from "../../lib/client/relay/poll_schedule.ts";
import { quietHold, quietRoom, roundOver } from "./quiet_signals.ts";
import { sendWindowMs } from "../../lib/protocol/hall.ts";
import { checkWindow } from "../../lib/client/relay/send_window.ts";
import { sendWindowText, windowDiffersText } from "../../lib/client/rounds/window_text.ts";

export { mayHoldPin, quietHold, quietRoom, roundOver } from "./quiet_signals.ts";

/** The reads a quiet phone makes while it holds the others: it signs after the first two. */
const WHILE_HOLDING = /^\/api\/rounds(?:\/\d+\/(?:state|groups\/\d+|vote|tag\/[^/]+))?$/;

/** Resolves once `path` may be sent: at once, or when the hold ends. */
export function afterHold(path: string): Promise<void> {
  if (!quietHold.peek() || WHILE_HOLDING.test(path)) return Promise.resolve();
  return new Promise((resolve) => {
    let stop = () => {};
    stop = quietHold.subscribe((holding) => {
      if (holding) return;
      queueMicrotask(() => stop());
      resolve();
    });
  });
}

/** How long a read the state answers waits for the quiet round's first state read. */
const FIRST_STATE_WAIT_MS = 20_000;

/** The quiet round's state once read, or null when there is none within `ms` (or no quiet round). */
function firstState(ms: number): Promise<RoundState | null> {
  return new Promise((resolve) => {
    let stop = () => {};
    const timer = setTimeout(() => {
      stop();
      resolve(null);
    }, ms);
    stop = quietRoom.subscribe((room) => {
      if (room !== null && room.state === null) return;
      clearTimeout(timer);
      queueMicrotask(() => stop());
      resolve(room?.state ?? null);
    });
  });
}

/**
 * The answer of `GET url` from the quiet round's latest state (waiting for the first one), or null
 * when it is not one the state answers (then the call goes out as usual).
 */
export async function quietAnswer(url: string, method: string): Promise<Response | null> {
  const path = new URL(url, "http://page.invalid").pathname;
  if (quietRoom.peek() === null || method !== "GET" || !answeredByState(path)) return null;
  const state = quietRoom.peek()?.state ?? await firstState(FIRST_STATE_WAIT_MS);
  if (state === null) return null;
  const answer = answerFromState(state, method, path);
  if (answer === null) return null;
  return new Response(answer.body, { headers: { "content-type": answer.type } });
}

/**
 * The timing of quiet round `round`'s votes from its latest state: when voting opened, the sealing
 * interval and this phone's own W; null when there is no such state.
 */
export function quietTiming(
  round: number,
): { openedAt: number; intervalMs: number; windowMs: number; sealAt: number } | null {
  const state = quietRoom.peek()?.state ?? null;
  if (state === null || state.round !== round || state.openedAt === null) return null;
  const windowMs = ownWindowMs(state);
  if (windowMs === null) return null;
  const { openedAt, intervalMs } = state;
  return { openedAt, intervalMs, windowMs, sealAt: state.open.nextSealAt };
}

/** Uniform in [0, 1), from the browser's random source. */
const random = () => crypto.getRandomValues(new Uint32Array(1))[0] / 2 ** 32;

/**
 * Reads quiet round `round`'s state with `api` (the page's client of that round) now, then after
 * each {@link nextPollDelay} of the current `stage()`, until the read that sees the round over
 * (`onOver` runs then); answers the stop.
 */
export function startQuietReads(
  api: { roundState(): Promise<RoundState> },
  round: number,
  stage: () => PollStage,
  onOver: () => void,
): () => void {
  let live = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const read = async () => {
    let ended = false;
    try {
      const state = await api.roundState();
      if (!live) return;
      quietRoom.value = { round, state };
      if (roundOver(state)) {
        ended = true;
        onOver();
      }
    } catch (error) {
      console.error(`The round's state could not be read: ${(error as Error).message}`);
    }
    if (!live) return;
    const delay = ended ? null : nextPollDelay(stage(), random);
    if (delay !== null) timer = setTimeout(read, delay);
  };
  read();
  return () => {
    live = false;
    clearTimeout(timer);
  };
}

/** W as this phone works it out from `state` (page §14.8), or null before voting opens. */
export function ownWindowMs(state: RoundState): number | null {
  if (state.keysAtOpen === null || state.openedAt === null) return null;
  const { keysAtOpen, intervalMs, verifyRate } = state;
  return sendWindowMs({ keysAtOpen, intervalMs, verifyRate });
}

/**
 * The send window lines of `state` (page §14.8): this phone's W and its line, and the line saying
 * the server's figure is another, if it is; null before voting opens.
 */
export function windowLines(
  state: RoundState,
): { own: number; line: string; differs: { served: number; text: string } | null } | null {
  const own = ownWindowMs(state);
  if (own === null) return null;
  const served = state.sendWindowMs;
  const differs = served !== null && checkWindow(own, served).differs
    ? { served, text: windowDiffersText(own, served) }
    : null;
  return { own, line: sendWindowText(own), differs };
}
