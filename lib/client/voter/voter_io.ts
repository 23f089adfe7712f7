/**
 * Browser-safe. What a voter's actions read and write (page §3, §8): the injected storage, API
 * client and console, the voter's stored entries, and a call whose failure is logged.
 * @module
 */
import type { ApiClient } from "../api_client.ts";
import { messageOf } from "../text.ts";
import type { StoredKeys, StoredVote } from "./status.ts";
import { KEY_ENTRIES, storageKey, VOTE_ENTRIES, type VoterEntry } from "./voters.ts";

/** The part of the Web Storage API the page uses. */
export type VoterStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

/** What the actions need from the outside world: storage, the API client and a console. */
export type ClientIO = {
  storage: VoterStorage;
  api: ApiClient;
  log(message: string): void;
};

/** The voter's stored key entries. */
export function readStoredKeys(storage: VoterStorage, namespace: string): StoredKeys {
  return readEntries(storage, namespace, KEY_ENTRIES);
}

/** The voter's stored vote entries. */
export function readStoredVote(storage: VoterStorage, namespace: string): StoredVote {
  return readEntries(storage, namespace, VOTE_ENTRIES);
}

function readEntries<E extends VoterEntry>(
  storage: VoterStorage,
  namespace: string,
  entries: readonly E[],
): Record<E, string | null> {
  const read = entries.map((entry) => [entry, storage.getItem(storageKey(namespace, entry))]);
  return Object.fromEntries(read) as Record<E, string | null>;
}

/** The answer of `call`, or null when it failed: the failure is logged (page §8). */
export async function orLogged<T>(io: ClientIO, call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (error) {
    io.log(messageOf(error));
    return null;
  }
}
