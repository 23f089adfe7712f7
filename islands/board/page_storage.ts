/**
 * A round's storage in this browser (lib/client/rounds/round_storage.ts over `localStorage`), looked up
 * at each call rather than when made, so that an island can make it while the server renders.
 * @module
 */
import { type PageStorage, roundStorage } from "../../lib/client/rounds/round_storage.ts";

/** Round `round`'s entries of this browser's `localStorage`, reached only when read or written. */
export function pageRoundStorage(round: number): PageStorage {
  const storage = () => roundStorage(localStorage, round);
  return {
    getItem: (key) => storage().getItem(key),
    setItem: (key, value) => storage().setItem(key, value),
    removeItem: (key) => storage().removeItem(key),
  };
}
