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

/** Deadline of each request of the watch's client (protocol §4.5): a stalled one is a timeout. */
export const REQUEST_TIMEOUT_MS = 8_000;

/**
 * Deadline of one whole check (protocol §4.5): a check still running then raises `unchecked` at
 * once, and the next tick starts afresh instead of waiting behind it. It stops a server that
 * answers each of a check's requests (the key and status together, then up to MAX_LINK_REQUESTS
 * block reads) just before {@link REQUEST_TIMEOUT_MS}, and a transport that never settles.
 */
export const CHECK_DEADLINE_MS = 20_000;

/**
 * Signed block records shown on this page since the last check, by ledger, then by height and
 * hash: a round's records are checked by that round's watch only, under that round's key, even
 * when an answer of the round the page just left arrives late.
 */
const fedByLedger = new Map<string, Map<string, ShownHead>>();
/** The watch of each ledger, woken when a record is fed. */
const wakes = new Map<string, () => void>();

/** The name a ledger's records are kept under: round 1 is the election's ledger. */
export function ledgerKey(ledger: LedgerName): string {
  if (typeof ledger === "string") return ledger;
  return ledger.round === 1 ? "election" : `round/${ledger.round}`;
}

function fedOf(key: string): Map<string, ShownHead> {
  let fed = fedByLedger.get(key);
  if (!fed) fedByLedger.set(key, fed = new Map());
  return fed;
}

/** Hands block records the page was shown, of ledger `key`, to that ledger's fork watch. */
export function feedHeads(records: readonly ShownHead[], key = "election"): void {
  refeed(key, records);
  if (records.length > 0) wakes.get(key)?.();
}

function refeed(key: string, records: readonly ShownHead[]): void {
  const fed = fedOf(key);
  for (const r of records) fed.set(`${r.height}:${r.hash}`, r);
}

/**
 * The page's API client of `ledger` (the election's by default, or a round's): same origin, every
 * block record it receives fed to that ledger's fork watch.
 */
export function pageApiClient(ledger: LedgerName = "election"): ApiClient {
  const key = ledgerKey(ledger);
  return createApiClient({ fetch, ledger, onBlocks: (records) => feedHeads(records, key) });
}

/** One check of the watch: the records it took, and whether its deadline passed before it ended. */
type Run = { shown: ShownHead[]; abandoned: boolean; watchdog?: ReturnType<typeof setTimeout> };

/**
 * Runs {@link checkShownChain} over the records fed since the last run, now, every `everyMs` and
 * soon after a record is fed, until the answered function is called; `onFork` hears the first
 * fork found, `onAlerts` every alert raised so far (each kind once, kept once raised, but for
 * `unchecked`, which the next check that can be made clears), `onError` every check that could
 * not be made. A check that could not be made keeps its records for the next one. A check not
 * finished `deadlineMs` after it started is abandoned: `unchecked` is raised then, the next tick
 * starts afresh, and whatever the abandoned check ends with is dropped — it neither stores nor
 * raises nor clears anything.
 */
export function watchHeads(
  api: ApiClient,
  {
    storage,
    everyMs,
    deadlineMs = CHECK_DEADLINE_MS,
    ledger = "election",
    onFork,
    onAlerts,
    onError,
  }: {
    storage: HeadStorage;
    /** The ledger watched: its records are the ones {@link pageApiClient} of it feeds. */
    ledger?: string;
    everyMs: number;
    deadlineMs?: number;
    onFork: (evidence: ForkEvidence) => void;
    onAlerts: (alerts: HeadAlert[]) => void;
    onError: (message: string) => void;
  },
): () => void {
  const fed = fedOf(ledger);
  let live = true;
  let found = false;
  let current: Run | null = null;
  let pending = false;
  let soon: ReturnType<typeof setTimeout> | undefined;
  const raised = new Map<HeadAlert["kind"], HeadAlert>();
  const notify = (update: () => void) => {
    const before = JSON.stringify([...raised.values()]);
    update();
    if (JSON.stringify([...raised.values()]) !== before) onAlerts([...raised.values()]);
  };
  const unchecked = (reason: string) => {
    onError(`Signed heads could not be checked: ${reason}`);
    notify(() => raised.set("unchecked", uncheckedAlert(reason)));
  };
  const once = async (run: Run) => {
    // An abandoned check may still finish: it must not overwrite what a later one stored.
    const guarded: HeadStorage = {
      getItem: (key) => storage.getItem(key),
      setItem: (key, value) => {
        if (live && !run.abandoned) storage.setItem(key, value);
      },
    };
    try {
      const observed = await checkShownChain(api, { storage: guarded, shown: run.shown });
      if (!live || run.abandoned) return;
      // Only a check that could not be made is undone by one that could; findings stay.
      notify(() => {
        raised.delete("unchecked");
        for (const alert of headAlerts(observed)) {
          if (!raised.has(alert.kind)) raised.set(alert.kind, alert);
        }
      });
      if (observed.fork) {
        found = true;
        onFork(observed.fork);
      }
    } catch (error) {
      if (!live || run.abandoned) return;
      refeed(ledger, run.shown);
      unchecked((error as Error).message);
    }
  };
  const start = () => {
    pending = false;
    const run: Run = { shown: [...fed.values()], abandoned: false };
    fed.clear();
    current = run;
    run.watchdog = setTimeout(() => {
      if (current !== run) return;
      run.abandoned = true;
      current = null;
      refeed(ledger, run.shown);
      unchecked(`the check did not finish in ${deadlineMs / 1000} s`);
      if (pending) check();
    }, deadlineMs);
    once(run).finally(() => {
      clearTimeout(run.watchdog);
      if (current !== run) return;
      current = null;
      if (pending) check();
    });
  };
  // A tick during a check runs once it ends (or is abandoned): ticks never pile up behind it.
  const check = () => {
    if (found || !live) return;
    if (current) pending = true;
    else start();
  };
  const wake = () => {
    clearTimeout(soon);
    soon = setTimeout(check, FEED_DELAY_MS);
  };
  wakes.set(ledger, wake);
  check();
  const timer = setInterval(check, everyMs);
  return () => {
    live = false;
    if (wakes.get(ledger) === wake) wakes.delete(ledger);
    clearTimeout(soon);
    clearInterval(timer);
    clearTimeout(current?.watchdog);
  };
}

/** What the fork watch has found: fork evidence against the server, and the other alerts. */
export type HeadWatch = { fork: ForkEvidence | null; alerts: HeadAlert[] };

/**
 * The fork watch of a page: the chain's head and every block record fed by
 * {@link pageApiClient} checked against the signed heads this browser has seen, now, every
 * `everyMs` and whenever a record is fed, for as long as the calling island lives; each request
 * within {@link REQUEST_TIMEOUT_MS}, each check within {@link CHECK_DEADLINE_MS}.
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
    setFork(null);
    setAlerts([]);
    return watchHeads(createApiClient({ fetch, ledger, timeoutMs: REQUEST_TIMEOUT_MS }), {
      storage: storage ?? localStorage,
      ledger: ledgerKey(ledger),
      everyMs,
      onFork: setFork,
      onAlerts: setAlerts,
      onError: console.error,
    });
  }, [round]);
  return { fork, alerts };
}
