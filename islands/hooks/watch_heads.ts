/**
 * The pages' watch over the chain they show (protocol §4.5): every signed block record the page's
 * API client receives (fed_heads.ts) is fed to the check of lib/client/log/chain_check.ts, which
 * runs at once and on a timer for as long as the island lives; a witnessing page cosigns what it
 * accepts (witness_cosign.ts). It keeps a timer, so it lives with the islands, not in lib/.
 * @module
 */
import { useEffect, useState } from "react";
import { type ApiClient, createApiClient, type LedgerName } from "../../lib/client/api_client.ts";
import { checkShownChain } from "../../lib/client/log/chain_check.ts";
import { pageFetch } from "./page_fetch.ts";
import {
  type AnyForkEvidence,
  type HeadAlert,
  logAlerts,
  uncheckedAlert,
} from "../../lib/client/log/head_alerts.ts";
import type { HeadStorage, ShownHead } from "../../lib/client/log/heads.ts";
import { parseLogMemory, SEEN_LOG_KEY } from "../../lib/client/log/log_memory.ts";
import { blockName, MAX_BEYOND_CHECKS } from "../../lib/client/log/log_view.ts";
import { unwitnessedBoundMs, type WitnessView } from "../../lib/client/log/log_witness.ts";
import {
  adoptPolicy,
  WITNESS_POLICY_KEY,
  type WitnessPolicy,
} from "../../lib/client/log/witness_policy.ts";
import type { NoteSigner } from "../../lib/protocol/note.ts";
import { fedOf, ledgerKey, onFed, refeed } from "./fed_heads.ts";
import { type WitnessActivity, witnessCosigner } from "./witness_cosign.ts";

/** The page's API client whose records feed its watch (fed_heads.ts), for the islands. */
export { feedHeads, ledgerKey, pageApiClient } from "./fed_heads.ts";
/** What a witnessing page did last, and how often it cosigns again (witness_cosign.ts). */
export { COSIGN_REFRESH_MS, WITNESS_COSIGNED_KEY, type WitnessActivity } from "./witness_cosign.ts";

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

/** One check of the watch: the records it took, and whether its deadline passed before it ended. */
type Run = { shown: ShownHead[]; abandoned: boolean; watchdog?: ReturnType<typeof setTimeout> };

/**
 * What the watch shows besides alerts: where the page stands with its witnesses (null without a
 * policy), the checkpoint size accepted, and whether a block shown (height and hash) is proven
 * included in it.
 */
export type LogView = {
  witness: WitnessView | null;
  size: number;
  proven: ReadonlySet<string>;
};

/**
 * Runs {@link checkShownChain} over the records fed since the last run, now, every `everyMs` and
 * soon after a record is fed, until the answered function is called; `onFork` hears the first
 * fork found (the checks go on after it, for the other alerts, but store nothing and cosign
 * nothing any more), `onAlerts` every alert raised so far (each kind once, kept once raised, but for
 * `unchecked`, which the next check that can be made clears), `onView` the log view after every
 * check, `onError` every check that could not be made. A check that could not be made keeps its
 * records for the next one, and so does one whose records lie above the checkpoint it read (for
 * {@link MAX_BEYOND_CHECKS} checks; then they are `withheld`). A check not finished `deadlineMs`
 * after it started is abandoned: `unchecked` is raised then, the next tick starts afresh, and
 * whatever the abandoned check ends with is dropped — it neither stores nor raises nor clears
 * anything. With `witness` (the page's witness key), each checkpoint accepted without any problem
 * is cosigned and submitted (again every {@link COSIGN_REFRESH_MS}), `onWitness` hearing how it
 * went: a witness cosigns only what it checked consistent with everything it remembers.
 */
export function watchHeads(
  api: ApiClient,
  {
    storage,
    everyMs,
    paused,
    holding,
    deadlineMs = CHECK_DEADLINE_MS,
    ledger = "election",
    policy = null,
    boundMs,
    witness = null,
    onFork,
    onAlerts,
    onView,
    onWitness,
    onError,
  }: {
    storage: HeadStorage;
    /** The ledger watched: its records are the ones {@link pageApiClient} of it feeds. */
    ledger?: string;
    everyMs: number;
    /** True while the timer's checks wait (a fed record still wakes one). */
    paused?: () => boolean;
    /** True while every check waits, the first one included: it runs at the first tick after. */
    holding?: () => boolean;
    deadlineMs?: number;
    policy?: WitnessPolicy | null;
    /** The bound of `unwitnessed`; read from the ledger's sealing interval by default. */
    boundMs?: number;
    witness?: NoteSigner | null;
    onFork: (evidence: AnyForkEvidence) => void;
    onAlerts: (alerts: HeadAlert[]) => void;
    onView?: (view: LogView) => void;
    onWitness?: (activity: WitnessActivity) => void;
    onError: (message: string) => void;
  },
): () => void {
  const fed = fedOf(ledger);
  let live = true;
  let found = false;
  let current: Run | null = null;
  let pending = false;
  let soon: ReturnType<typeof setTimeout> | undefined;
  let bound = boundMs;
  const beyondChecks = new Map<string, number>();
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
  const cosign = witnessCosigner(api, { storage, witness, live: () => live, onWitness });
  const boundOf = async () => {
    if (bound !== undefined || policy === null) return bound ?? 0;
    try {
      bound = unwitnessedBoundMs((await api.openBlock()).intervalMs);
    } catch {
      return unwitnessedBoundMs(Infinity); // the largest, until the interval can be read
    }
    return bound;
  };
  const once = async (run: Run) => {
    // An abandoned check may still finish: it must not overwrite what a later one stored.
    const guarded: HeadStorage = {
      getItem: (key) => storage.getItem(key),
      setItem: (key, value) => {
        if (live && !run.abandoned && !found) storage.setItem(key, value);
      },
    };
    try {
      const boundMs = await boundOf();
      const check = await checkShownChain(api, {
        storage: guarded,
        shown: run.shown,
        policy,
        boundMs,
      });
      if (!live || run.abandoned) return;
      const beyond = check.log?.beyond ?? [];
      const stuck = beyond.filter((block) => {
        const name = blockName(block);
        const checks = (beyondChecks.get(name) ?? 0) + 1;
        beyondChecks.set(name, checks);
        return checks > MAX_BEYOND_CHECKS;
      });
      // Blocks above the checkpoint wait, counted; those the check had no time for, uncounted.
      const again = new Set([...beyond, ...(check.log?.later ?? [])].map(blockName));
      refeed(ledger, run.shown.filter((head) => again.has(blockName(head))));
      const stuckAlerts = stuck.length === 0 ? [] : logAlerts([{
        kind: "withheld",
        what: `a checkpoint that holds block ${stuck[0].height}, which it showed`,
        reason: `its checkpoints stayed below it through ${MAX_BEYOND_CHECKS} checks`,
      }]);
      // Only a check that could not be made is undone by one that could; findings stay.
      notify(() => {
        raised.delete("unchecked");
        for (const alert of [...check.alerts, ...stuckAlerts]) {
          if (!raised.has(alert.kind)) raised.set(alert.kind, alert);
        }
      });
      if (check.log) {
        const memory = check.log.memory;
        onView?.({ witness: check.log.witness, size: memory.size, proven: new Set(memory.proven) });
      }
      if (check.fork) {
        // The first fork is the evidence shown; checks go on for the other alerts, storing nothing.
        if (!found) onFork(check.fork);
        found = true;
        return;
      }
      if (found) return;
      await cosign(check);
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
  let held = false;
  const check = () => {
    if (!live) return;
    // A check asked while the page holds them waits for the first tick after.
    if (holding?.()) held = true;
    else if (current) pending = true;
    else start();
  };
  const wake = () => {
    clearTimeout(soon);
    soon = setTimeout(check, FEED_DELAY_MS);
  };
  const unfed = onFed(ledger, wake);
  // What this browser remembers is shown at once, before the first check answers.
  const remembered = parseLogMemory(storage.getItem(SEEN_LOG_KEY));
  onView?.({ witness: null, size: remembered.size, proven: new Set(remembered.proven) });
  check();
  const timer = setInterval(() => {
    if (holding?.()) return;
    if (held || !paused?.()) {
      held = false;
      check();
    }
  }, everyMs);
  return () => {
    live = false;
    unfed();
    clearTimeout(soon);
    clearInterval(timer);
    clearTimeout(current?.watchdog);
  };
}

/** What the fork watch has found: fork evidence against the server, the other alerts, the log. */
export type HeadWatch = {
  fork: AnyForkEvidence | null;
  alerts: HeadAlert[];
  view: LogView | null;
  witnessing: WitnessActivity | null;
};

/**
 * The fork watch of a page: the log's checkpoint and every block record fed by
 * {@link pageApiClient} checked against what this browser has seen, under the page's witness
 * policy ({@link pagePolicy}), now, every `everyMs` and whenever a record is fed, for as long as
 * the calling island lives; each request within {@link REQUEST_TIMEOUT_MS}, each check within
 * {@link CHECK_DEADLINE_MS}. With `witness`, the page cosigns what it accepts.
 */
export function useHeadWatch(
  everyMs: number,
  { ledger = "election", storage, witness = null, paused, holding }: {
    ledger?: LedgerName;
    storage?: HeadStorage;
    witness?: NoteSigner | null;
    /** True while the timer's checks wait (a quiet phone's minimum check, page §14.8). */
    paused?: () => boolean;
    /** True while every check waits (a quiet phone about to sign, page §14.8). */
    holding?: () => boolean;
  } = {},
): HeadWatch {
  const [fork, setFork] = useState<AnyForkEvidence | null>(null);
  const [alerts, setAlerts] = useState<HeadAlert[]>([]);
  const [view, setView] = useState<LogView | null>(null);
  const [witnessing, setWitnessing] = useState<WitnessActivity | null>(null);
  const round = typeof ledger === "object" ? ledger.round : ledger;
  const witnessName = witness?.name ?? null;
  useEffect(() => {
    // A page that moved to another ledger (a new round) starts its watch afresh.
    setFork(null);
    setAlerts([]);
    setView(null);
    setWitnessing(null);
    return watchHeads(
      createApiClient({ fetch: pageFetch, ledger, timeoutMs: REQUEST_TIMEOUT_MS }),
      {
        storage: storage ?? localStorage,
        ledger: ledgerKey(ledger),
        everyMs,
        paused,
        holding,
        policy: pagePolicy().policy,
        witness,
        onFork: setFork,
        onAlerts: setAlerts,
        onView: setView,
        onWitness: setWitnessing,
        onError: console.error,
      },
    );
  }, [round, witnessName, everyMs]);
  return { fork, alerts, view, witnessing };
}

let adopted: ReturnType<typeof adoptPolicy> | null = null;

/** The page's witness policy notice ({@link pagePolicy}), read once the page runs in a browser. */
export function usePolicyNotice(): string | null {
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => setNotice(pagePolicy().notice), []);
  return notice;
}

/**
 * The witness policy of this page (page §10.13): the one in the address's fragment, kept in the
 * browser's storage, or the one kept before; with a sentence when the fragment changed it. Read
 * once per page load.
 */
export function pagePolicy(): { policy: WitnessPolicy | null; notice: string | null } {
  if (adopted === null) {
    adopted = adoptPolicy(location.hash, localStorage.getItem(WITNESS_POLICY_KEY));
    if (adopted.store !== null) localStorage.setItem(WITNESS_POLICY_KEY, adopted.store);
  }
  return adopted;
}
