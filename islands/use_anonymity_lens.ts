// The anonymity lens as a hook for the islands: follows the chain height, reads the sealed
// ballots' rings of new blocks only, and runs one analysis per height (and per set of reveals) in
// the anonymity worker, so the page stays responsive. Every island that shows anonymity figures
// uses this one hook; the voting page shares its result among all panels.
import { useEffect, useRef, useState } from "react";
import { startWorker } from "../components/Island.ts";
import type { Reveal, RingBallot } from "../lib/app/anonymity.ts";
import {
  type LensAnswer,
  type LensRequest,
  type LensResult,
  runLens,
} from "../lib/app/anonymity_lens.ts";
import { allBallots, readSealedRings, type SealedRings } from "../lib/app/sealed_rings.ts";

/** Where the lens reads the public record. */
export type LensSource = {
  /** Height of the last sealed block. */
  height(): Promise<number>;
  /** The ballots of one sealed block. */
  readBlock(height: number): Promise<RingBallot[]>;
  /** Registered keys in the directory. */
  keyCount(): Promise<number>;
};

/** What the hook shows: the latest result, and what it is doing or what went wrong. */
export type LensState = {
  height: number | null;
  result: LensResult | null;
  /** Time the last analysis took in the worker, in ms. */
  ms: number | null;
  /** "Reading sealed ballots: block 3 of 40", "Analysing 10,000 ballots…", or null when idle. */
  progress: string | null;
  problem: string | null;
};

/** Runs lens jobs in the worker, keeping only the answer to the latest request. */
type Runner = { run(request: Omit<LensRequest, "seq">): Promise<LensAnswer | null>; stop(): void };

function createRunner(): Runner {
  let seq = 0;
  let worker: Worker | null = null;
  try {
    worker = startWorker("anonymity");
  } catch {
    // A build without the worker: the analysis runs on the page's thread instead.
  }
  const waiting = new Map<number, (answer: LensAnswer) => void>();
  if (worker) {
    worker.onmessage = (event: MessageEvent<LensAnswer>) => {
      waiting.get(event.data.seq)?.(event.data);
      waiting.delete(event.data.seq);
    };
  }
  return {
    async run(request) {
      const mine = ++seq;
      let answer: LensAnswer;
      if (worker) {
        answer = await new Promise<LensAnswer>((resolve) => {
          waiting.set(mine, resolve);
          worker!.postMessage({ ...request, seq: mine });
        });
      } else {
        const started = performance.now();
        try {
          answer = { ...runLens({ ...request, seq: mine }), ms: performance.now() - started };
        } catch (error) {
          answer = { seq: mine, error: error instanceof Error ? error.message : String(error) };
        }
      }
      return mine === seq ? answer : null;
    },
    stop() {
      worker?.terminate();
    },
  };
}

/**
 * The lens over the sealed record while `active`, refreshed every `pollMs` when the chain grows
 * and at once when `reveals` change.
 */
export function useAnonymityLens(
  source: LensSource,
  { active, pollMs, reveals = [] }: { active: boolean; pollMs: number; reveals?: Reveal[] },
): LensState {
  const [state, setState] = useState<LensState>({
    height: null,
    result: null,
    ms: null,
    progress: null,
    problem: null,
  });
  const rings = useRef<SealedRings>(new Map());
  const runner = useRef<Runner | null>(null);
  const latest = useRef({ reveals, analysed: "" });
  latest.current.reveals = reveals;
  const revealKey = JSON.stringify(reveals);

  useEffect(() => {
    if (!active) return;
    runner.current ??= createRunner();
    let live = true;
    let busy = false;
    async function refresh() {
      if (busy) return;
      busy = true;
      try {
        const height = await source.height();
        const wanted = `${height}:${JSON.stringify(latest.current.reveals)}`;
        if (!live || wanted === latest.current.analysed) return;
        rings.current = await readSealedRings(source.readBlock, {
          height,
          known: rings.current,
          onProgress(done, total) {
            if (live && total > 0 && done < total) {
              setState((s) => ({
                ...s,
                progress: `Reading sealed ballots: block ${done + 1} of ${total}`,
              }));
            }
          },
        });
        const ballots = allBallots(rings.current);
        const keyCount = await source.keyCount();
        if (!live) return;
        setState((s) => ({ ...s, progress: `Analysing ${ballots.length} sealed ballots…` }));
        const answer = await runner.current!.run({
          ballots,
          reveals: latest.current.reveals,
          keyCount,
        });
        if (!live || answer === null) return;
        if ("error" in answer) {
          setState((s) => ({ ...s, progress: null, problem: answer.error }));
          return;
        }
        latest.current.analysed = wanted;
        const { ms, ...result } = answer;
        setState({ height, result, ms, progress: null, problem: null });
      } catch (error) {
        if (live) {
          setState((s) => ({
            ...s,
            progress: null,
            problem: error instanceof Error ? error.message : String(error),
          }));
        }
      } finally {
        busy = false;
      }
    }
    refresh();
    const timer = setInterval(refresh, pollMs);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [active, revealKey]);

  useEffect(() => () => runner.current?.stop(), []);
  return state;
}
