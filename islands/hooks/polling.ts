/**
 * The pages' timed reads, as hooks (the board, the projector view, the voting page): a read
 * repeated every few seconds (the open block of protocol §4.9, a round's head and tally, the
 * presenter's counts), and a clock for the countdown to the next seal.
 * @module
 */
import { useEffect, useMemo, useState } from "react";
import type { ApiClient } from "../../lib/client/api_client.ts";
import type { OpenBlock, Tally } from "../../lib/protocol/schemas.ts";
import { messageOf } from "../../lib/client/text.ts";

/** The last answer of a repeated read (null before the first), and why the last read failed. */
export type Polled<T> = { value: T | null; problem: string | null };

/** What a repeated step may ask of its repetition. */
export type Repetition = {
  /** False once the repetition was stopped: an answer that arrives after is dropped. */
  live(): boolean;
  /** No more steps after this one. */
  stop(): void;
};

/**
 * Runs `step` every `everyMs` (and at once, unless `atOnce` is false), never two at once: a step
 * still running when the next is due skips that one. Answers the function that stops it.
 */
export function repeatEvery(
  everyMs: number,
  step: (repetition: Repetition) => Promise<void>,
  { atOnce = true }: { atOnce?: boolean } = {},
): () => void {
  let live = true;
  let busy = false;
  const repetition: Repetition = { live: () => live, stop };
  async function once() {
    if (busy || !live) return;
    busy = true;
    try {
      await step(repetition);
    } finally {
      busy = false;
    }
  }
  const timer = setInterval(once, everyMs);
  if (atOnce) once();
  function stop() {
    live = false;
    clearInterval(timer);
  }
  return stop;
}

/**
 * `read()` now and every `everyMs` while the calling component lives, never two at once. A failed
 * read keeps the last answer and says why; the next good one clears that. The `read` of the first
 * render is the one repeated: a component that reads elsewhere is mounted afresh (a `key`).
 */
export function usePolled<T>(read: () => Promise<T>, everyMs: number): Polled<T> {
  const [polled, setPolled] = useState<Polled<T>>({ value: null, problem: null });
  useEffect(() =>
    repeatEvery(everyMs, async ({ live }) => {
      try {
        const value = await read();
        if (live()) setPolled({ value, problem: null });
      } catch (error) {
        if (live()) setPolled((old) => ({ value: old.value, problem: messageOf(error) }));
      }
    }), []);
  return polled;
}

/** The open block of `api`'s round (`GET /api/rounds/{id}/block/open`), read every `everyMs`. */
export function useOpenBlock(api: ApiClient, everyMs: number): Polled<OpenBlock> {
  return usePolled(() => api.openBlock(), everyMs);
}

/** A round's head height and its tally as served at that height (or just after). */
export type HeadTally = { height: number; tally: Tally };

/**
 * The head height of `api`'s ledger, read every `everyMs`, and its tally, read again only when the
 * height has changed.
 */
export function useHeadTally(api: ApiClient, everyMs: number): Polled<HeadTally> {
  const read = useMemo(() => {
    let known: HeadTally | null = null;
    return async () => {
      const { height } = await api.blockStatus();
      if (known?.height !== height) known = { height, tally: await api.tally() };
      return known;
    };
  }, []);
  return usePolled(read, everyMs);
}

/** How often the countdown's clock ticks: often enough that a second never lingers. */
export const CLOCK_TICK_MS = 250;

/** The time now (ms since the epoch), renewed every {@link CLOCK_TICK_MS}. */
export function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), CLOCK_TICK_MS);
    return () => clearInterval(timer);
  }, []);
  return now;
}
