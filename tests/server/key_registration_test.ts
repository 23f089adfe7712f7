// Registrations committed in batches (server/store.ts): many at once from one process still get
// contiguous ids from 1, one each, a key sent twice at once is registered once and refused once
// with its id, and each key's stored record carries the precomputation it was given.
import assert from "node:assert/strict";
import { hexToBytes } from "../../lib/protocol/bytes.ts";
import { precomputeKey } from "../../lib/protocol/key_precomputation.ts";
import { ApiError } from "../../server/errors.ts";
import { createStore } from "../../server/store.ts";
import { makeVoters } from "../helpers/ledger_fixtures.ts";

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
