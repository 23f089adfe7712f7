/**
 * Browser-safe. Work that follows a changing value, one run at a time: asked again while it runs,
 * it runs once more afterwards for the latest value asked, the ones in between dropped. The
 * projector view audits a round this way as its head grows (page §10.11).
 * @module
 */

/** See {@link latestRunner}. */
export type LatestRunner<T> = {
  /** Runs `work(value)` now, or once the run in progress ends if `value` is still the latest. */
  ask(value: T): void;
  /** Resolves once no run is in progress and none is waiting. */
  idle(): Promise<void>;
};

/**
 * A runner of `work` that never runs it twice at once and, once a run ends, runs it only for the
 * latest value asked meanwhile. A run that throws is reported to `onError` and the next one still
 * runs.
 */
export function latestRunner<T>(
  work: (value: T) => Promise<void>,
  { onError = () => {} }: { onError?: (error: unknown) => void } = {},
): LatestRunner<T> {
  let busy = false;
  let current: Promise<void> = Promise.resolve();
  let waiting: { value: T } | null = null;

  // `busy` is cleared in the same step that finds nothing waiting, so an ask never falls between a
  // run that is ending and the next.
  async function drain(): Promise<void> {
    busy = true;
    try {
      while (waiting !== null) {
        const { value } = waiting;
        waiting = null;
        try {
          await work(value);
        } catch (error) {
          onError(error);
        }
      }
    } finally {
      busy = false;
    }
  }

  return {
    ask(value) {
      waiting = { value };
      if (!busy) current = drain();
    },
    async idle() {
      while (busy) await current;
    },
  };
}
