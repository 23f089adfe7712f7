/**
 * The pages' watch over the chain they show (protocol §4.5): every signed block record the page's
 * API client receives is fed to the check of lib/client/heads.ts, which runs at once and on a timer
 * for as long as the island lives. It keeps a timer, so it lives with the islands, not in lib/.
 * @module
 */
import { useEffect, useState } from "react";
import { type ApiClient, createApiClient, type LedgerName } from "../../lib/client/api_client.ts";
import {
  checkShownChain,
  type HeadAlert,
  headAlerts,
  type HeadStorage,
  type ShownHead,
  uncheckedAlert,
} from "../../lib/client/heads.ts";
import type { ForkEvidence } from "../../lib/protocol/schemas.ts";

/** How long the watch waits after a record is fed before it checks, gathering a burst. */
const FEED_DELAY_MS = 200;

/** Signed block records shown on this page since the last check, by height and hash. */
const fed = new Map<string, ShownHead>();
let wake: (() => void) | null = null;

/** Hands block records the page was shown to its fork watch. */
export function feedHeads(records: readonly ShownHead[]): void {
  for (const r of records) fed.set(`${r.height}:${r.hash}`, r);
  if (records.length > 0) wake?.();
}

/**
 * The page's API client of `ledger` (the election's by default, or a round's): same origin, every
 * block record it receives fed to the fork watch.
 */
export function pageApiClient(ledger: LedgerName = "election"): ApiClient {
  return createApiClient({ fetch, ledger, onBlocks: feedHeads });
}

/**
 * Runs {@link checkShownChain} over the records fed since the last run, now, every `everyMs` and
 * soon after a record is fed, until the answered function is called; `onFork` hears the first
 * fork found, `onAlerts` every alert raised so far (each kind once, kept once raised, but for
 * `unchecked`, which the next check that can be made clears), `onError` every check that could
 * not be made. A check that could not be made keeps its records for the next one.
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
  let running: Promise<void> | null = null;
  let soon: ReturnType<typeof setTimeout> | undefined;
  const raised = new Map<HeadAlert["kind"], HeadAlert>();
  const once = async () => {
    const shown = [...fed.values()];
    fed.clear();
    try {
      const observed = await checkShownChain(api, { storage, shown });
      if (!live) return;
      const fresh = headAlerts(observed).filter((alert) => !raised.has(alert.kind));
      for (const alert of fresh) raised.set(alert.kind, alert);
      // Only a check that could not be made is undone by one that could; findings stay.
      const cleared = raised.delete("unchecked");
      if (fresh.length > 0 || cleared) onAlerts([...raised.values()]);
      if (observed.fork) {
        found = true;
        onFork(observed.fork);
      }
    } catch (error) {
      for (const r of shown) fed.set(`${r.height}:${r.hash}`, r);
      if (!live) return;
      onError(`Signed heads could not be checked: ${(error as Error).message}`);
      raised.set("unchecked", uncheckedAlert((error as Error).message));
      onAlerts([...raised.values()]);
    }
  };
  const check = async () => {
    if (found || !live) return;
    while (running) await running;
    running = once().finally(() => running = null);
    await running;
  };
  wake = () => {
    clearTimeout(soon);
    soon = setTimeout(check, FEED_DELAY_MS);
  };
  check();
  const timer = setInterval(check, everyMs);
  return () => {
    live = false;
    wake = null;
    clearTimeout(soon);
    clearInterval(timer);
  };
}

/** What the fork watch has found: fork evidence against the server, and the other alerts. */
export type HeadWatch = { fork: ForkEvidence | null; alerts: HeadAlert[] };

/**
 * The fork watch of a page: the chain's head and every block record fed by
 * {@link pageApiClient} checked against the signed heads this browser has seen, now, every
 * `everyMs` and whenever a record is fed, for as long as the calling island lives.
 */
export function useHeadWatch(
  everyMs: number,
  { ledger = "election", storage }: { ledger?: LedgerName; storage?: HeadStorage } = {},
): HeadWatch {
  const [fork, setFork] = useState<ForkEvidence | null>(null);
  const [alerts, setAlerts] = useState<HeadAlert[]>([]);
  const round = typeof ledger === "object" ? ledger.round : ledger;
  useEffect(() => {
    // A page that moved to another ledger (a new round) starts its watch afresh.
    fed.clear();
    setFork(null);
    setAlerts([]);
    return watchHeads(createApiClient({ fetch, ledger }), {
      storage: storage ?? localStorage,
      everyMs,
      onFork: setFork,
      onAlerts: setAlerts,
      onError: console.error,
    });
  }, [round]);
  return { fork, alerts };
}
