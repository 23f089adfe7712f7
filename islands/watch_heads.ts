// The pages' watch over the chain they show (protocol §4 "Signed heads"): the check of
// lib/app/heads.ts, now and on a timer, for as long as the island lives. It keeps a timer, so it
// lives with the islands (the voting page and the board), not in the pure lib/.
import { useEffect, useState } from "react";
import { type ApiClient, createApiClient } from "../lib/app/api_client.ts";
import { checkShownChain, type HeadAlert, headAlerts, type HeadStorage } from "../lib/app/heads.ts";
import type { ForkEvidence } from "../lib/protocol/schemas.ts";

/**
 * Runs {@link checkShownChain} now and every `everyMs` until the answered function is called;
 * `onFork` hears the first fork found, `onAlerts` every alert raised so far (a changed key,
 * unsigned heads, a rollback: each kind once, kept once raised), `onError` every check that could
 * not be made.
 */
export function watchHeads(
  api: ApiClient,
  { storage, everyMs, onFork, onAlerts, onError }: {
    storage: HeadStorage;
    everyMs: number;
    onFork: (evidence: ForkEvidence) => void;
    onAlerts: (alerts: HeadAlert[]) => void;
    onError: (message: string) => void;
  },
): () => void {
  let live = true;
  let found = false;
  const raised = new Map<HeadAlert["kind"], HeadAlert>();
  const check = async () => {
    if (found) return;
    try {
      const observed = await checkShownChain(api, { storage });
      if (!live) return;
      const fresh = headAlerts(observed).filter((alert) => !raised.has(alert.kind));
      for (const alert of fresh) raised.set(alert.kind, alert);
      if (fresh.length > 0) onAlerts([...raised.values()]);
      if (observed.fork) {
        found = true;
        onFork(observed.fork);
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

/** What the fork watch has found: fork evidence against the server, and the other alerts. */
export type HeadWatch = { fork: ForkEvidence | null; alerts: HeadAlert[] };

/**
 * The fork watch of a page: the chain's head (and the block at the highest remembered height)
 * checked against the signed heads this browser has seen, now and every `everyMs`, for as long as
 * the calling island lives.
 */
export function useHeadWatch(everyMs: number): HeadWatch {
  const [fork, setFork] = useState<ForkEvidence | null>(null);
  const [alerts, setAlerts] = useState<HeadAlert[]>([]);
  useEffect(() =>
    watchHeads(createApiClient({ fetch }), {
      storage: localStorage,
      everyMs,
      onFork: setFork,
      onAlerts: setAlerts,
      onError: console.error,
    }), []);
  return { fork, alerts };
}
