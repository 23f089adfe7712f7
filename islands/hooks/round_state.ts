/**
 * A quiet phone (page §14.8): a phone with a relay pinned, in a round with phases, reads the
 * round's state (`GET /api/rounds/{r}/state`) on one jittered schedule that backs off once its vote
 * is sealed and proven, and stops after the read that sees the round closed. The page's other
 * timed reads (the open block, the checkpoint, the groups) are answered from that state
 * ({@link quietAnswer}), so nothing else is sent on a timer.
 * @module
 */
import { useEffect, useRef } from "react";
import { createApiClient } from "../../lib/client/api_client.ts";
import { nextPollDelay, type PollStage } from "../../lib/client/relay/poll_delays.ts";
import type { RoundState } from "../../lib/protocol/hall_schemas.ts";
import { loadRelay, pageFetch } from "./page_fetch.ts";
import { quietRoom } from "./quiet_signals.ts";

export type { PollStage } from "../../lib/client/relay/poll_delays.ts";
export { quietRoom } from "./quiet_signals.ts";

/** The stages in the order a phone goes through them. */
const STAGES: readonly PollStage[] = ["waiting", "voting", "sent", "proven", "closed"];

/** The earliest of `stages` (a page with several voters polls for the one furthest behind). */
export function earliestStage(stages: Iterable<PollStage>): PollStage {
  let earliest: PollStage = "closed";
  let any = false;
  for (const stage of stages) {
    any = true;
    if (STAGES.indexOf(stage) < STAGES.indexOf(earliest)) earliest = stage;
  }
  return any ? earliest : "waiting";
}

/** Uniform in [0, 1), from the browser's random source. */
const random = () => crypto.getRandomValues(new Uint32Array(1))[0] / 2 ** 32;

/**
 * While `active`, round `round` is the quiet round: its state is read now, then after each
 * {@link nextPollDelay} of the current `stage`, until the read that sees the round over (the
 * schedule, `startQuietReads` of quiet_room.ts, loads with the relay transport);
 * `onOver` runs once then. Answers the latest state (null before the first).
 */
export function useQuietRoom(
  { round, active, stage, onOver }: {
    round: number;
    active: boolean;
    stage: PollStage;
    onOver?: () => void;
  },
): RoundState | null {
  const stageRef = useRef(stage);
  stageRef.current = stage;
  const over = useRef(onOver);
  over.current = onOver;
  useEffect(() => {
    if (!active) return;
    quietRoom.value = { round, state: null };
    // The schedule loads with the relay transport, which its reads go through anyway.
    // A load that failed is a read that failed: tried again on the schedule.
    const api = createApiClient({ fetch: pageFetch, ledger: { round } });
    let live = true;
    let stop = () => {};
    const begin = () =>
      loadRelay().then((relay) => {
        if (live) {
          stop = relay.startQuietReads(api, round, () => stageRef.current, () => over.current?.());
        }
      }, (error) => {
        console.error(`The round's state could not be read: ${(error as Error).message}`);
        if (!live) {
          return;
        }
        const timer = setTimeout(begin, nextPollDelay(stageRef.current, random) ?? 0);
        stop = () => clearTimeout(timer);
      });
    begin();
    return () => {
      live = false;
      stop();
      if (quietRoom.peek()?.round === round) quietRoom.value = null;
    };
  }, [round, active]);
  const room = quietRoom.value;
  return room !== null && room.round === round ? room.state : null;
}
