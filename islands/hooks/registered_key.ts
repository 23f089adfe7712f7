/**
 * Whether this browser already holds a registered key of a round (protocol §7.4): a key made and
 * registered before the page held its relay pin still joins the page to the relay.
 * @module
 */
import { type PageStorage, roundStorage } from "../../lib/client/rounds/round_storage.ts";
import { parseVoterList, storageKey, VOTERS_KEY } from "../../lib/client/voter/voters.ts";

/**
 * True when a voter of round `round` in `storage` holds a registered key (its key id): its
 * registration has reached the server, pin or no pin, so every call of the round goes through
 * the relay.
 */
export function holdsRegisteredKey(storage: Pick<PageStorage, "getItem">, round: number): boolean {
  // `getItem` is called on `storage` itself: a spread of the browser's Storage copies no method.
  const kept = roundStorage({
    getItem: (key) => storage.getItem(key),
    setItem() {},
    removeItem() {},
  }, round);
  return parseVoterList(kept.getItem(VOTERS_KEY)).some((namespace) =>
    kept.getItem(storageKey(namespace, "keyId")) !== null
  );
}
