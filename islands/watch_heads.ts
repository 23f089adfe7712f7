// The pages' watch over the chain they show (protocol §4 "Signed heads"): the check of
// lib/app/heads.ts, now and on a timer, for as long as the island lives. It keeps a timer, so it
// lives with the islands (the voting page and the board), not in the pure lib/.
import { useEffect, useState } from "react";
import { type ApiClient, createApiClient } from "../lib/app/api_client.ts";
import { checkShownChain, type HeadStorage } from "../lib/app/heads.ts";
import type { ForkEvidence } from "../lib/protocol/schemas.ts";

/**
 * Runs {@link checkShownChain} now and every `everyMs` until the answered function is called;
 * `onFork` hears the first fork found, `onError` every check that could not be made.
 */
export function watchHeads(
  api: ApiClient,
  { storage, everyMs, onFork, onError }: {
    storage: HeadStorage;
    everyMs: number;
    onFork: (evidence: ForkEvidence) => void;
    onError: (message: string) => void;
  },
): () => void {
  let live = true;
  let found = false;
  const check = async () => {
    if (found) return;
    try {
      const { fork } = await checkShownChain(api, { storage });
      if (live && fork) {
        found = true;
        onFork(fork);
      }
    } catch (error) {
      if (live) onError(`Signed heads could not be checked: ${(error as Error).message}`);
    }
  };
  check();
  const timer = setInterval(check, everyMs);
  return () => {
    live = false;
    clearInterval(timer);
  };
}

/**
 * Fork evidence against the server, once found: the chain's head (and the block at the highest
 * remembered height) checked against the signed heads this browser has seen, now and every
 * `everyMs`, for as long as the calling island lives.
 */
export function useForkEvidence(everyMs: number): ForkEvidence | null {
  const [fork, setFork] = useState<ForkEvidence | null>(null);
  useEffect(() =>
    watchHeads(createApiClient({ fetch }), {
      storage: localStorage,
      everyMs,
      onFork: setFork,
      onError: console.error,
    }), []);
  return fork;
}
