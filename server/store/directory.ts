/**
 * The key directory of a ledger (protocol §4.2, §5.2): registrations committed in batches with
 * contiguous ids, key records bound to their key by a MAC and held in memory within a budget, and
 * the directory reads.
 * @module
 */
import { hexToBytes } from "../../lib/protocol/bytes.ts";
import type { KeyPrecomputation } from "../../lib/protocol/key_precomputation.ts";
import type { LruCache } from "../../lib/protocol/member_cache.ts";
import type * as wire from "../../lib/protocol/schemas.ts";
import { duplicateKey, quote, refusal } from "../errors.ts";
import { isBoundRecord, keyRecordMac } from "./key_record_mac.ts";
import {
  backoff,
  GET_MANY_LIMIT,
  listEntries,
  MAX_ATTEMPTS,
  readRetrying,
  tryCommit,
} from "./kv_calls.ts";
import {
  absent,
  type CapacityBound,
  type CardAdmission,
  type CardUseRecord,
  type KeyCountRecord,
  type KeyIdRecord,
  type KvLedger,
  lastPart,
  type StoredKey,
} from "./layout.ts";
import type { LedgerGate } from "./votes.ts";

/**
 * A registered key's record as the store answers it: its id, and its precomputation only when the
 * stored MAC binds it to this key (protocol §5.2); without one, votes check the key from its bytes.
 */
export type CheckedKeyRecord = { id: number; pre?: KeyPrecomputation };

/** A registration waiting for its commit; `mac` binds `pre` to `key` (protocol §5.2). */
type Registration = {
  key: string;
  /** A carded round's admission, bound in the commit that registers the key. */
  card?: CardAdmission;
  pre?: KeyPrecomputation;
  mac?: Uint8Array;
  resolve(record: wire.KeyRecord): void;
  reject(error: Error): void;
};

/**
 * Most keys one registration commit takes: each adds a uniqueness check, and the id counter takes
 * one more, within the 10 checks a commit may make (protocol §5 limits); a gated ledger's commit
 * checks its gate too, and takes one key fewer.
 */
const REGISTRATION_BATCH = 9;
/**
 * Most carded keys one commit takes: each adds a check of its card's entry too (and a read), so
 * the counter, the gate and four keys with their cards fill the 10 checks and the 10-key getMany.
 */
const CARDED_BATCH = 4;

/**
 * Registrations of one process, committed in batches: concurrent registrations would otherwise
 * all race for the id counter, and all but one retry. Each commit takes up to
 * REGISTRATION_BATCH waiting keys, still checked against other processes like a single one.
 * `secret` is the key records' MAC secret; `capacity`, if given, bounds the directory; `gate`
 * answers the ledger's gate (./votes.ts) when it has one, checked in every commit.
 */
export function createRegistrar(
  ledger: KvLedger,
  { secret, capacity, gate = () => null }: {
    secret: Uint8Array;
    capacity?: CapacityBound;
    gate?: () => LedgerGate | null;
  },
) {
  const waiting: Registration[] = [];
  let running = false;

  async function drain(): Promise<void> {
    running = true;
    try {
      while (waiting.length > 0) {
        const batch: Registration[] = [];
        const keys = new Set<string>();
        const cards = new Set<string>();
        const gated = gate();
        const carded = waiting[0].card !== undefined;
        const most = carded ? CARDED_BATCH : gated ? REGISTRATION_BATCH - 1 : REGISTRATION_BATCH;
        // A key or card sent twice at once goes into a later batch, where it meets its first copy.
        for (let i = 0; i < waiting.length && batch.length < most; i++) {
          const card = waiting[i].card?.key;
          if (keys.has(waiting[i].key) || (card !== undefined && cards.has(card))) continue;
          if ((card !== undefined) !== carded) continue;
          keys.add(waiting[i].key);
          if (card !== undefined) cards.add(card);
          batch.push(...waiting.splice(i--, 1));
        }
        try {
          await commitRegistrations(ledger, { batch, capacity, gate: gated });
        } catch (error) {
          for (const registration of batch) registration.reject(error as Error);
        }
      }
    } finally {
      running = false;
    }
  }

  return {
    register(
      key: string,
      pre?: KeyPrecomputation,
      card?: CardAdmission,
    ): Promise<wire.KeyRecord> {
      const mac = pre && keyRecordMac(pre, { key: hexToBytes(key, 32, "key"), secret });
      const answer = new Promise<wire.KeyRecord>((resolve, reject) => {
        waiting.push({ key, pre, mac, card, resolve, reject });
      });
      if (!running) drain();
      return answer;
    },
  };
}

/**
 * Commits `batch` with contiguous ids after the counter: one commit checking the counter and that
 * every key is new. A key found registered already is refused with 409 and left out; so is a key
 * beyond the ledger's `capacity`, which the counter's check makes exact. A commit that fails or
 * throws is read back, like every other write (protocol §5.3): what landed is answered, the rest
 * retried. A gated ledger's commit checks the gate's entry as read with the counter, and every
 * key is refused when its value does not admit them.
 */
async function commitRegistrations(
  { kv, keys }: KvLedger,
  { batch, capacity, gate }: {
    batch: Registration[];
    capacity?: CapacityBound;
    gate: LedgerGate | null;
  },
): Promise<void> {
  let pending = batch;
  for (let attempt = 0;; attempt++) {
    const read = await readRetrying(() =>
      kv.getMany<unknown[]>([
        ...(gate ? [gate.key] : []),
        keys.keyCount(),
        ...pending.map((r) => keys.keyId(r.key)),
        ...pending.flatMap((r) => r.card ? [keys.cardUse(r.card.key)] : []),
      ])
    );
    const gateEntry = gate ? read.shift()! : null;
    const [count, ...rest] = read as [
      Deno.KvEntryMaybe<KeyCountRecord>,
      ...Deno.KvEntryMaybe<KeyIdRecord>[],
    ];
    const existing = rest.slice(0, pending.length);
    const uses = new Map<string, CardUseRecord | null>();
    rest.slice(pending.length).forEach((entry) => {
      uses.set(lastPart<string>(entry.key), entry.value as CardUseRecord | null);
    });
    if (gate) {
      const verdict = await gate.admitKey(gateEntry!.value);
      if (verdict === "again" && attempt < MAX_ATTEMPTS) continue;
      if (verdict !== null) {
        const refused = verdict === "again"
          ? new Error("The ledger's gate kept changing")
          : verdict;
        for (const registration of pending) registration.reject(refused);
        return;
      }
    }
    pending = pending.filter((registration, i) => {
      const found = existing[i].value as KeyIdRecord | null;
      const use = registration.card ? uses.get(registration.card.key) ?? null : null;
      // The same card with the same key again: a retry, answered as the first was.
      if (found && use?.key === registration.key) registration.resolve(use);
      else if (found) registration.reject(duplicateKey(registration.key, found.id));
      else if (use) registration.reject(cardUsed(registration.card!.key));
      return !found && !use;
    });
    const first = ((count.value as KeyCountRecord | null)?.total ?? 0) + 1;
    if (capacity) {
      const room = Math.max(0, capacity.max - first + 1);
      for (const refused of pending.splice(room)) refused.reject(capacity.refuse(capacity.max));
    }
    if (pending.length === 0) return;
    const total = first + pending.length - 1;
    const op = kv.atomic().check(count).set(keys.keyCount(), { total } satisfies KeyCountRecord);
    if (gateEntry) op.check(gateEntry);
    pending.forEach(({ key, pre, mac, card }, i) => {
      if (card) {
        op.check(absent(keys.cardUse(card.key)))
          .set(keys.cardUse(card.key), { id: first + i, key, total } satisfies CardUseRecord);
      }
      op.check(absent(keys.keyId(key)))
        .set(keys.key(first + i), (card ? { key, card } : { key }) satisfies StoredKey)
        .set(
          keys.keyId(key),
          (pre ? { id: first + i, pre, mac } : { id: first + i }) satisfies KeyIdRecord,
        );
    });
    const res = await tryCommit(op);
    if (res?.ok === true) {
      pending.forEach(({ key, resolve }, i) => resolve({ id: first + i, key, total }));
      return;
    }
    // The commit threw, or answered ok:false: it may have landed all the same. Over KV Connect a
    // write whose reply was lost is sent again by the client, and its checks then fail against
    // its own landed write. A key holding the id this attempt gave it is registered as answered
    // (by this commit or an identical concurrent one); any other key, even in the same batch, is
    // read again at the top of the loop: 409 if it is registered under another id, else retried.
    const held = await readRetrying(() =>
      kv.getMany<KeyIdRecord[]>(pending.map(({ key }) => keys.keyId(key)))
    );
    pending = pending.filter(({ key, resolve }, i) => {
      const mine = held[i].value?.id === first + i;
      if (mine) resolve({ id: first + i, key, total });
      return !mine;
    });
    if (pending.length === 0) return;
    if (attempt >= MAX_ATTEMPTS) throw new Error(`Key registration kept conflicting`);
    await backoff(attempt);
  }
}

/**
 * Each key's record, from memory where it is held, else from KV. A registered key's record never
 * changes, so a record once read is as good as a fresh read; a key not found is not remembered,
 * since another process may register it at any moment. Records are shared between callers:
 * read-only.
 *
 * A precomputation read from KV is used only when its MAC binds it to this key (protocol §5.2).
 * One whose MAC fails (altered, or copied from another key or database), one written without a
 * MAC (before records carried one) and one in an earlier stored form are dropped on reading: the
 * record is the id alone and votes check the key from its bytes. So a crafted record cannot change
 * which tag verifies for a key, and a dropped one neither travels with every vote nor takes more
 * than RECORD_BYTES.
 */
export async function lookupKeys(
  { records, secret, read }: {
    records: LruCache<CheckedKeyRecord>;
    secret: Uint8Array;
    read: KeyIdReader;
  },
  wanted: string[],
): Promise<(CheckedKeyRecord | null)[]> {
  const found = wanted.map((key) => records.get(key) ?? null);
  const unread = wanted.flatMap((_, i) => (found[i] ? [] : [i]));
  if (unread.length === 0) return found;
  const values = await read(unread.map((i) => wanted[i]));
  values.forEach((value, k) => {
    if (!value) return;
    const key = wanted[unread[k]];
    const record = checkedRecord(key, value, secret);
    found[unread[k]] = record;
    records.set(key, record);
  });
  return found;
}

/** Reads the stored record of each key, null where none, in the order asked. */
export type KeyIdReader = (keys: string[]) => Promise<(KeyIdRecord | null)[]>;

/**
 * A {@link KeyIdReader} that reads concurrent callers' keys together: keys asked for while a
 * round of reads is in flight wait for the next round, which reads them all in `getMany`s of
 * {@link GET_MANY_LIMIT}, in parallel. So sixteen registrations arriving at once cost about three
 * round trips of lookups instead of sixteen, and a lone caller still waits a single round trip.
 */
export function createKeyIdReader({ kv, keys }: KvLedger): KeyIdReader {
  const waiting = new Map<string, PromiseWithResolvers<KeyIdRecord | null>>();
  let running = false;

  async function drain(): Promise<void> {
    running = true;
    try {
      while (waiting.size > 0) {
        const round = [...waiting];
        waiting.clear();
        const chunks: (typeof round)[] = [];
        for (let i = 0; i < round.length; i += GET_MANY_LIMIT) {
          chunks.push(round.slice(i, i + GET_MANY_LIMIT));
        }
        await Promise.all(chunks.map(async (chunk) => {
          try {
            const entries = await readRetrying(() =>
              kv.getMany<KeyIdRecord[]>(chunk.map(([key]) => keys.keyId(key)))
            );
            chunk.forEach(([, answer], i) => answer.resolve(entries[i].value));
          } catch (error) {
            for (const [, answer] of chunk) answer.reject(error);
          }
        }));
      }
    } finally {
      running = false;
    }
  }

  return (wanted) => {
    const answers = wanted.map((key) => {
      let answer = waiting.get(key);
      if (!answer) {
        answer = Promise.withResolvers();
        waiting.set(key, answer);
      }
      return answer.promise;
    });
    if (!running) drain();
    return Promise.all(answers);
  };
}

/**
 * `value` with its precomputation if its MAC binds it to `key`, else its id alone. A MAC that is
 * there and fails means the record was altered or copied: that is reported, never silently used.
 */
function checkedRecord(key: string, value: KeyIdRecord, secret: Uint8Array): CheckedKeyRecord {
  let bytes: Uint8Array;
  try {
    bytes = hexToBytes(key, 32, "key");
  } catch {
    return { id: value.id };
  }
  if (isBoundRecord(value, { key: bytes, secret })) return { id: value.id, pre: value.pre };
  if (value.mac !== undefined) {
    console.warn(`The stored precomputation of key "${quote(key)}" fails its MAC: not used`);
  }
  return { id: value.id };
}

/** 409 `card_used`: the card admitted another key in this round already. */
export function cardUsed(cardKey: string): Error {
  return refusal(
    "card_used",
    `Card "${quote(cardKey)}" has already admitted another key in this round`,
  );
}

async function keyTotal({ kv, keys }: KvLedger): Promise<number> {
  const count = await readRetrying(() => kv.get<KeyCountRecord>(keys.keyCount()));
  return count.value?.total ?? 0;
}

/** The key with id `id` and the directory size; 404 `unknown_key` if there is none. */
export async function keyById({ kv, keys }: KvLedger, id: number): Promise<wire.KeyRecord> {
  const [record, count] = await readRetrying(() =>
    kv.getMany<[StoredKey, KeyCountRecord]>([keys.key(id), keys.keyCount()])
  );
  if (!record.value) throw refusal("unknown_key", `No key with id ${id}`);
  const card = record.value.card;
  return { id, key: record.value.key, total: count.value?.total ?? 0, ...(card ? { card } : {}) };
}

/** Up to `limit` keys from id `offset + 1`, and the directory size. */
export async function keyPage(
  ledger: KvLedger,
  offset: number,
  limit: number,
): Promise<wire.KeyPage> {
  const page: wire.KeyPage["keys"] = [];
  if (limit > 0) {
    await listEntries<StoredKey>(ledger.kv, {
      selector: { start: ledger.keys.key(offset + 1), end: ledger.keys.key(offset + limit + 1) },
      options: { limit, batchSize: limit },
      restart: () => page.length = 0,
      each: ({ key, value }) =>
        page.push({
          id: lastPart<number>(key),
          key: value.key,
          ...(value.card ? { card: value.card } : {}),
        }),
    });
  }
  return { keys: page, total: await keyTotal(ledger) };
}
