/**
 * Browser-safe. Browser storage of one round (protocol §4.9, page §14): round 1, the election, uses
 * the specified entries as page §3 names them; every other round keeps the same entries under the
 * prefix `round/{id}/`, so voters, keys, votes and remembered heads of two rounds never meet.
 * @module
 */

/** The part of the Web Storage API the pages use. */
export type PageStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

/** The prefix of round `round`'s entries: none for round 1. */
export function roundPrefix(round: number): string {
  return round === 1 ? "" : `round/${round}/`;
}

/** `storage` seen from round `round`: every entry name gets {@link roundPrefix}. */
export function roundStorage(storage: PageStorage, round: number): PageStorage {
  const prefix = roundPrefix(round);
  if (prefix === "") return storage;
  return {
    getItem: (key) => storage.getItem(prefix + key),
    setItem: (key, value) => storage.setItem(prefix + key, value),
    removeItem: (key) => storage.removeItem(prefix + key),
  };
}

/** Storage key marking a voter whose key waits for a late group. */
export function lateKey(namespace: string): string {
  return `${namespace}:late`;
}

/** True when `namespace` was last seen waiting for a late group. */
export function isMarkedLate(storage: PageStorage, namespace: string): boolean {
  return storage.getItem(lateKey(namespace)) === "waiting";
}
