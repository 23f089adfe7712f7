/**
 * What a voter's panel keeps doing once it has a vote (page §4, §11): a pending vote asks until its
 * block is sealed, then is verified again; a verified vote checks its own tag on the board.
 * @module
 */
import { useEffect, useRef, useState } from "react";
import * as actions from "../../lib/client/voter/panel_actions.ts";
import { repeatEvery } from "../hooks/polling.ts";
import {
  type ColouredLine,
  type TagCheck,
  type VoteLine,
  voteStage,
} from "../../lib/client/voter/status.ts";

/** How often a voter waiting for others asks how many keys are registered. */
const WAIT_POLL_MS = 2000;

/**
 * While `active`, asks every {@link WAIT_POLL_MS} how many more keys must be registered before a
 * ring of `ringSize` fills; `onEnough` runs once when none is missing any more. `missing` is null
 * until known; `recheck` asks again now.
 */
export function useWaitForVoters(
  io: actions.ClientIO,
  { ringSize, active, onEnough }: { ringSize: number; active: boolean; onEnough(): void },
): { missing: number | null; recheck(): void } {
  const [missing, setMissing] = useState<number | null>(null);
  const [asked, setAsked] = useState(0);
  const enough = useRef(onEnough);
  enough.current = onEnough;
  useEffect(() => {
    if (!active) return;
    return repeatEvery(WAIT_POLL_MS, async ({ live, stop }) => {
      const still = await actions.keysStillNeeded(io, ringSize);
      if (!live() || still === null) return;
      setMissing(still);
      if (still === 0) {
        stop();
        enough.current();
      }
    });
  }, [active, asked]);
  return { missing, recheck: () => setAsked((n) => n + 1) };
}

/** How often a pending vote asks whether its block is sealed. */
const PENDING_POLL_MS = 1500;

/**
 * While `voteLine` is pending, reads the chain height and runs `refresh` once it is sealed. A quiet
 * phone (page §14.8) hands in the sealed height of its state read instead (`sealedHeight`): nothing
 * more is read until it shows the block sealed.
 */
export function usePendingPoll(
  io: actions.ClientIO,
  namespace: string,
  voteLine: VoteLine,
  refresh: () => Promise<void>,
  sealedHeight?: number | null,
): void {
  const quiet = sealedHeight !== undefined;
  useEffect(() => {
    if (voteLine.status !== "pending" || sealedHeight === undefined || sealedHeight === null) {
      return;
    }
    const stored = actions.readStoredVote(io.storage, namespace);
    if (voteStage(stored, sealedHeight) !== "pending") refresh();
  }, [voteLine, sealedHeight]);
  useEffect(() => {
    if (voteLine.status !== "pending" || quiet) return;
    return repeatEvery(PENDING_POLL_MS, async ({ live }) => {
      const height = await actions.chainHeight(io);
      const stored = actions.readStoredVote(io.storage, namespace);
      if (live() && height !== null && voteStage(stored, height) !== "pending") await refresh();
    }, { atOnce: false });
  }, [voteLine, quiet]);
}

/**
 * The tag check line of a verified vote: the bulletin board is asked which vote holds its tag, and
 * another one means its key signed a vote it did not cast. Null until then, or when not verified.
 */
export function useOwnTagCheck(
  io: actions.ClientIO,
  namespace: string,
  voteLine: VoteLine,
): ColouredLine<TagCheck> | null {
  const [tagLine, setTagLine] = useState<ColouredLine<TagCheck> | null>(null);
  useEffect(() => {
    if (voteLine.status !== "voted") {
      setTagLine(null);
      return;
    }
    let live = true;
    actions.checkOwnTag(io, namespace).then((line) => {
      if (live) setTagLine(line);
    });
    return () => {
      live = false;
    };
  }, [voteLine]);
  return tagLine;
}
