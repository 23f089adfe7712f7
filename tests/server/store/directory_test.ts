// Registrations committed in batches (server/store/directory.ts): many at once from one process
// still get contiguous ids from 1, one each, a key sent twice at once is registered once and
// refused once with its id, and each key's stored record carries the precomputation it was given.
// Records are remembered in memory within the record budget, and a key not found is never
// remembered.
import assert from "node:assert/strict";
import { hexToBytes } from "../../../lib/protocol/bytes.ts";
import { precomputeKey } from "../../../lib/protocol/key_precomputation.ts";
import { ApiError } from "../../../server/errors.ts";
import { createStore, RECORD_BYTES } from "../../../server/store/mod.ts";
import { type KeyIdRecord, kvKeys } from "../../../server/store/layout.ts";
import { makeVoters } from "../../helpers/ledger_fixtures.ts";

Deno.test("40 registrations at once, 5 keys sent twice: contiguous ids, each duplicate refused with its id", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    const keys = makeVoters(35).map((v) => v.key);
    const sent = [...keys, ...keys.slice(0, 5)];
    const outcomes = await Promise.allSettled(sent.map((key) => store.registerKey(key)));
    const ids = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value.id] : []));
    assert.deepEqual(ids.toSorted((a, b) => a - b), Array.from({ length: 35 }, (_, i) => i + 1));
    const refused = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason] : []));
    assert.equal(refused.length, 5);
    for (const error of refused) {
      assert.ok(error instanceof ApiError && error.code === "duplicate_key");
      const key = sent[outcomes.findIndex((o) => o.status === "rejected" && o.reason === error)];
      assert.equal(error.extra.id, (await store.lookupKeys([key]))[0]?.id);
    }
    assert.equal((await store.keyPage(0, 1)).total, 35);
  } finally {
    kv.close();
  }
});

Deno.test("a registered key's record carries its precomputation; an unknown key has none", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    const [a, b] = makeVoters(2).map((v) => v.key);
    const pre = precomputeKey(hexToBytes(a));
    assert.ok(typeof pre !== "string");
    await store.registerKey(a, pre);
    const [record, unknown] = await store.lookupKeys([a, b]);
    assert.deepEqual(record, { id: 1, pre });
    assert.equal(unknown, null);
  } finally {
    kv.close();
  }
});

Deno.test("key records are kept in memory within the record budget, and a key not found is read again", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const here = await createStore(kv, { recordBudgetBytes: 3 * RECORD_BYTES + 1 });
    const elsewhere = await createStore(kv); // another process on the same database
    assert.deepEqual(here.recordStats(), { held: 0, capacity: 3 });
    const keys = makeVoters(5).map((v) => v.key);
    const pres = keys.map((key) => precomputeKey(hexToBytes(key)));

    // Not found, then registered by the other process: found on the next lookup.
    assert.deepEqual(await here.lookupKeys([keys[0]]), [null]);
    await elsewhere.registerKey(keys[0], pres[0] as Uint8Array);
    assert.deepEqual(await here.lookupKeys([keys[0]]), [{ id: 1, pre: pres[0] }]);

    for (const [i, key] of keys.entries()) {
      if (i > 0) await here.registerKey(key, pres[i] as Uint8Array);
    }
    assert.deepEqual(here.recordStats(), { held: 3, capacity: 3 }, "the budget bounds the records");
    // Every record, held or evicted and read again, is what was registered (its MAC checked).
    const records = await here.lookupKeys(keys);
    for (const [i, key] of keys.entries()) {
      const { id, pre } = (await kv.get<KeyIdRecord>(kvKeys.keyId(key))).value!;
      assert.deepEqual(records[i], { id, pre }, `key ${i + 1}`);
      assert.deepEqual(records[i], { id: i + 1, pre: pres[i] });
    }
    assert.equal(here.recordStats().held, 3);
    // A held record is answered from memory: gone from KV, it is still found here, not elsewhere.
    const stored = await kv.get(kvKeys.keyId(keys[4]));
    await kv.delete(kvKeys.keyId(keys[4]));
    assert.deepEqual((await here.lookupKeys([keys[4]]))[0], { id: 5, pre: pres[4] });
    assert.deepEqual(await (await createStore(kv)).lookupKeys([keys[4]]), [null]);
    await kv.set(kvKeys.keyId(keys[4]), stored.value);
    const none = await createStore(kv, { recordBudgetBytes: RECORD_BYTES - 1 });
    assert.deepEqual((await none.lookupKeys([keys[4]]))[0]?.id, 5);
    assert.deepEqual(none.recordStats(), { held: 0, capacity: 0 });
  } finally {
    kv.close();
  }
});

Deno.test("a record holding an earlier form of precomputation is read as the id alone", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const [key] = makeVoters(1).map((v) => v.key);
    await (await createStore(kv)).registerKey(key);
    // An earlier release kept the combs as lists of bigint coordinates, about 7 KB once read.
    const legacy = { point: Array.from({ length: 62 }, (_, i) => BigInt(i) << 250n), hp: [] };
    await kv.set(kvKeys.keyId(key), { id: 1, pre: legacy });
    const store = await createStore(kv);
    assert.deepEqual(await store.lookupKeys([key]), [{ id: 1 }]);
    assert.deepEqual(await store.lookupKeys([key]), [{ id: 1 }], "held without it, too");
  } finally {
    kv.close();
  }
});
