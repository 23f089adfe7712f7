/**
 * The anonymity lens as hooks for the islands: the chain height followed while it matters, and one
 * analysis per height and reveals, each run in an anonymity worker of its own; only new blocks are
 * read.
 * @module
 */
import { useEffect, useRef, useState } from "react";
import { startWorker } from "../runtime.ts";
import type { Reveal } from "../../lib/client/anonymity/anonymity.ts";
import type {
  LensAnswer,
  LensMessage,
  LensResult,
} from "../../lib/client/anonymity/anonymity_lens.ts";
import {
  allBallots,
  type LensSource,
  readSealedRings,
  type SealedRings,
} from "../../lib/client/anonymity/sealed_rings.ts";
import { messageOf } from "../../lib/client/text.ts";

/** The lens's packing code, loaded once on first use. */
export function loadLens() {
  return import("../../lib/client/anonymity/anonymity_lens.ts");
}

/** What the lens shows: the latest result, and what it is doing or what went wrong. */
export type LensState = {
  /** Height the result was computed at. */
  height: number | null;
  result: LensResult | null;
  /** Time the last analysis took in the worker, in ms. */
  ms: number | null;
  /** "Reading sealed ballots: block 3 of 40", "Analysing 10000 sealed ballots…", or null. */
  progress: string | null;
  problem: string | null;
};

/** Runs lens jobs; answers null for a job a later one has replaced. */
type Runner = { run(request: Omit<LensMessage, "seq">): Promise<LensAnswer | null>; stop(): void };

/**
 * Runs each lens job in a worker of its own, stopped once it has answered, or as soon as a later job
 * replaces it: the analysis of a large record leaves tens of megabytes in its worker's heap, which
 * an idle worker would keep. A page whose build carries no worker gets the failure as the job's
 * (see islands/runtime.ts).
 */
function createRunner(): Runner {
  let seq = 0;
  let running: { worker: Worker; resolve: (answer: LensAnswer | null) => void } | null = null;
  const stop = () => {
    running?.worker.terminate();
    running?.resolve(null);
    running = null;
  };
  return {
    run(request) {
      stop();
      const mine = ++seq;
      return new Promise((resolve) => {
        const worker = startWorker("anonymity");
        const job = { worker, resolve };
        running = job;
        const finish = (answer: LensAnswer) => {
          if (running !== job) return;
          running = null;
          worker.terminate();
          resolve(answer);
        };
        worker.onmessage = (event: MessageEvent<LensAnswer>) => finish(event.data);
        worker.onerror = (event) => {
          event.preventDefault();
          finish({ seq: mine, error: `The anonymity worker failed: ${event.message}` });
        };
        worker.postMessage({ ...request, seq: mine });
      });
    },
    stop,
  };
}

/** The chain height, read every `pollMs` while `active` (null before the first read). */
export function useChainHeight(
  readHeight: () => Promise<number>,
  { active, pollMs }: { active: boolean; pollMs: number },
): number | null {
  const [height, setHeight] = useState<number | null>(null);
  useEffect(() => {
    if (!active) return;
    let live = true;
    const read = () =>
      readHeight().then((h) => live && setHeight(h), () => {/* the next poll tries again */});
    read();
    const timer = setInterval(read, pollMs);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [active]);
  return height;
}

/**
 * The lens over blocks 1..`height` (nothing while it is null), with `reveals` applied; with
 * `decoyUse` it also reads the key directory (only its new keys each time) for the decoy-use test.
 */
export function useAnonymityLens(
  source: LensSource,
  { height, reveals = [], decoyUse = false }: {
    height: number | null;
    reveals?: readonly Reveal[];
    decoyUse?: boolean;
  },
): LensState {
  const [state, setState] = useState<LensState>({
    height: null,
    result: null,
    ms: null,
    progress: null,
    problem: null,
  });
  const rings = useRef<SealedRings>(new Map());
  const directory = useRef<string[]>([]);
  const runner = useRef<Runner | null>(null);
  const revealKey = JSON.stringify(reveals);

  useEffect(() => {
    if (height === null) return;
    let live = true;
    const update = (change: Partial<LensState>) => live && setState((s) => ({ ...s, ...change }));
    (async () => {
      try {
        runner.current ??= createRunner();
        rings.current = await readSealedRings(source.readBlock, {
          height,
          known: rings.current,
          onProgress(done, total) {
            if (done < total) {
              update({ progress: `Reading sealed ballots: block ${done + 1} of ${total}` });
            }
          },
        });
        const ballots = allBallots(rings.current);
        if (decoyUse) {
          const known = directory.current;
          directory.current = [...known, ...await source.readKeys(known.length)];
        }
        if (!live) return;
        update({ progress: `Analysing ${ballots.length} sealed ballots…` });
        // Loaded on first use, not on first paint (a phone with a relay loads it when it joins).
        const { packBallots, unpackLensResult } = await loadLens();
        const packed = packBallots(ballots);
        const answer = await runner.current!.run({
          ballots: packed,
          reveals: [...reveals],
          directory: decoyUse ? directory.current : null,
        });
        if (!live || answer === null) return;
        if ("error" in answer) return update({ progress: null, problem: answer.error });
        const result = unpackLensResult(answer, { ballots, packed });
        update({ height, result, ms: answer.ms, progress: null, problem: null });
      } catch (error) {
        update({ progress: null, problem: messageOf(error) });
      }
    })();
    return () => {
      live = false;
    };
  }, [height, revealKey]);

  useEffect(() => () => runner.current?.stop(), []);
  return state;
}
