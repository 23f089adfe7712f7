/**
 * The KV calls every read and write of the store goes through: commit and read with retry on a
 * transient lock, listings, chunked `getMany`, and the count of calls waiting on the database that
 * the API's deadline reads (protocol §5.5).
 * @module
 */

/** Most keys one `getMany` may read. */
export const GET_MANY_LIMIT = 10;
/** Most entries one round trip of a listing may bring (the `batchSize` KV allows). */
export const LIST_BATCH_MAX = 1000;
/** Upper bound on optimistic retries; reaching it means something is wrong, not contention. */
export const MAX_ATTEMPTS = 10_000;

/**
 * True for the transient errors a commit throws when several processes share one SQLite file
 * (`database is locked`); the commit may or may not have landed, so callers read back.
 */
export function isTransientKvError(error: unknown): boolean {
  return error instanceof Error && /database is locked|database is busy|SQLITE_BUSY/i.test(
    error.message,
  );
}

// ---- waiting on the database ----
//
// Every KV call of the store goes through tryCommit or readRetrying, which count the calls in
// flight in this process and when the database last answered one. Over KV Connect the Deno client
// retries a call that gets no answer every ~250 ms, for ever: a database that is down shows here
// as calls in flight and no answer for as long as it is down. The API's deadline (server/app.ts)
// reads this to answer 503 `kv_unavailable` rather than wait (protocol §5.5).

const waiting = { calls: 0, since: 0 };

/** KV calls of this process in flight now. */
export function kvCallsInFlight(): number {
  return waiting.calls;
}

/**
 * For how long, in ms, calls have waited on the database with no answer to any of them: 0 when
 * none is in flight. Each answer (a call finished, or a listing's next entry) starts it afresh.
 */
export function kvSilentForMs(now = Date.now()): number {
  return waiting.calls === 0 ? 0 : now - waiting.since;
}

/** Notes an answer from the database: calls still in flight wait afresh from now. */
export function markKvAnswer(): void {
  waiting.since = Date.now();
}

/** Runs one KV call, counted in flight until it settles (an error is an answer too). */
async function tracked<T>(call: () => Promise<T>): Promise<T> {
  if (waiting.calls++ === 0) waiting.since = Date.now();
  try {
    return await call();
  } finally {
    waiting.calls--;
    markKvAnswer();
  }
}

/** Commits `op`; a transient throw is reported as `null` (outcome unknown), anything else rethrows. */
export async function tryCommit(
  op: Deno.AtomicOperation,
): Promise<Deno.KvCommitResult | Deno.KvCommitError | null> {
  try {
    return await tracked(() => op.commit());
  } catch (error) {
    if (isTransientKvError(error)) return null;
    throw error;
  }
}

/** Runs a read, retrying while the database reports a transient lock. */
export async function readRetrying<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 0;; attempt++) {
    try {
      return await tracked(read);
    } catch (error) {
      if (!isTransientKvError(error) || attempt >= MAX_ATTEMPTS) throw error;
      await backoff(attempt);
    }
  }
}

/**
 * Every entry of `selector`, in order, read inside {@link readRetrying} (so a lock mid-way lists
 * again from the start; `each` must allow that: it is called afresh with `restart` first). Each
 * entry is an answer from the database for {@link kvSilentForMs}. `options` should give a
 * `batchSize` (or a `limit`) fitted to the listing: without one the client fetches 100 entries a
 * round trip, and needs one more to learn that a range of exactly 100 has ended.
 */
export async function listEntries<T>(
  kv: Deno.Kv,
  { selector, options, restart, each }: {
    selector: Deno.KvListSelector;
    options?: Deno.KvListOptions;
    restart?: () => void;
    each: (entry: Deno.KvEntry<T>) => void;
  },
): Promise<void> {
  await readRetrying(async () => {
    restart?.();
    for await (const entry of kv.list<T>(selector, options)) {
      markKvAnswer();
      each(entry);
    }
  });
}

/** Short randomised pause before retrying a commit that lost a race. */
export function backoff(attempt: number): Promise<void> {
  const ms = Math.min(50, 1 + attempt) * Math.random();
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Reads `keys` with as many `getMany` calls as {@link GET_MANY_LIMIT} needs, retrying locks;
 * the entries come back in the order of `keys`.
 */
export async function getManyChunked<T>(
  kv: Deno.Kv,
  keys: Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<T>[]> {
  const entries: Deno.KvEntryMaybe<T>[] = [];
  for (let i = 0; i < keys.length; i += GET_MANY_LIMIT) {
    const chunk = keys.slice(i, i + GET_MANY_LIMIT);
    entries.push(...await readRetrying(() => kv.getMany<T[]>(chunk)));
  }
  return entries;
}
