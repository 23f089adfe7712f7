/**
 * The block records a page was shown, waiting for its fork watch (protocol §4.5): every record the
 * page's API client receives is fed here, by ledger, and wakes that ledger's watch.
 * @module
 */
import { pageFetch } from "./page_fetch.ts";
import { type ApiClient, createApiClient, type LedgerName } from "../../lib/client/api_client.ts";
import type { ShownHead } from "../../lib/client/log/heads.ts";

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

/** The records fed to ledger `key`'s watch and not yet taken by a check. */
export function fedOf(key: string): Map<string, ShownHead> {
  let fed = fedByLedger.get(key);
  if (!fed) fedByLedger.set(key, fed = new Map());
  return fed;
}

/** Hands block records the page was shown, of ledger `key`, to that ledger's fork watch. */
export function feedHeads(records: readonly ShownHead[], key = "election"): void {
  refeed(key, records);
  if (records.length > 0) wakes.get(key)?.();
}

/** Hands `records` back to ledger `key`'s watch for its next check, without waking it. */
export function refeed(key: string, records: readonly ShownHead[]): void {
  const fed = fedOf(key);
  for (const r of records) fed.set(`${r.height}:${r.hash}`, r);
}

/**
 * The page's API client of `ledger` (the election's by default, or a round's): same origin, every
 * block record it receives fed to that ledger's fork watch.
 */
export function pageApiClient(ledger: LedgerName = "election"): ApiClient {
  const key = ledgerKey(ledger);
  return createApiClient({
    fetch: pageFetch,
    ledger,
    onBlocks: (records) => feedHeads(records, key),
  });
}

/** Lets `wake` be called when a record of ledger `key` is fed; answers the function that stops. */
export function onFed(key: string, wake: () => void): () => void {
  wakes.set(key, wake);
  return () => {
    if (wakes.get(key) === wake) wakes.delete(key);
  };
}

/** Wakes ledger `key`'s watch for one check soon, as a fed record would. */
export function wakeWatch(key: string): void {
  wakes.get(key)?.();
}
