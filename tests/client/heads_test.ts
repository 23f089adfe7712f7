/**
 * The signed heads a page remembers (lib/client/log/heads.ts): valid heads kept by height, a second
 * signed hash at one height as fork evidence, a new key, unsigned heads and rollbacks as alerts.
 * @module
 */
import assert from "node:assert/strict";
import { createApiClient } from "../../lib/client/api_client.ts";
import { checkShownChain } from "../../lib/client/log/chain_check.ts";
import { evidenceFile, headAlerts } from "../../lib/client/log/head_alerts.ts";
import {
  headsBelow,
  MAX_SEEN_HEADS,
  observeHeads,
  parseSeenHeads,
  SEEN_HEADS_KEY,
  type SeenHeads,
  serializeSeenHeads,
} from "../../lib/client/log/heads.ts";
import { SEEN_LOG_KEY } from "../../lib/client/log/log_memory.ts";
import { checkForkEvidence, serverPublicKey, signHead } from "../../lib/protocol/head.ts";
import { createApp } from "../../server/app.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { createStore } from "../../server/store/mod.ts";
import { call, makeVoters, signedVote } from "../helpers/ledger_fixtures.ts";
import { MapStorage } from "../helpers/map_storage.ts";

const seed = new Uint8Array(32).fill(7);
const otherSeed = new Uint8Array(32).fill(9);
const key = serverPublicKey(seed);
const empty: SeenHeads = { key: null, heads: [] };

function head(height: number, hash: string, by = seed) {
  return { height, hash, head_signature: signHead(by, { height, hash }) };
}

Deno.test("observeHeads remembers validly signed heads, by height", () => {
  const a = head(1, "aa".repeat(32));
  const b = head(2, "bb".repeat(32));
  const { seen, fork, unsigned, keyChanged } = observeHeads(empty, { key, shown: [b, a, a] });
  assert.deepEqual(seen, { key, heads: [a, b] });
  assert.equal(fork, null);
  assert.deepEqual(unsigned, []);
  assert.equal(keyChanged, false);
});

Deno.test("observeHeads turns a second signed hash at a seen height into checkable evidence", () => {
  const honest = head(3, "aa".repeat(32));
  const lie = head(3, "cc".repeat(32));
  const { seen } = observeHeads(empty, { key, shown: [honest] });
  const after = observeHeads(seen, { key, shown: [lie] });
  assert.ok(after.fork);
  assert.deepEqual(checkForkEvidence(after.fork), { ok: true, height: 3 });
  assert.deepEqual(after.seen.heads, [honest], "the remembered head stays the first one seen");
  assert.deepEqual(after.fork.heads.map((h) => h.hash), [honest.hash, lie.hash]);
});

Deno.test("observeHeads never remembers a head without a valid signature, nor calls it a fork", () => {
  const { seen } = observeHeads(empty, { key, shown: [head(3, "aa".repeat(32))] });
  const unsignedHead = { height: 3, hash: "cc".repeat(32) };
  const otherKey = head(3, "dd".repeat(32), otherSeed);
  const malformed = { height: 3, hash: "ee".repeat(32), head_signature: "00" };
  const after = observeHeads(seen, { key, shown: [unsignedHead, otherKey, malformed] });
  assert.equal(after.fork, null);
  assert.deepEqual(after.unsigned, [unsignedHead, otherKey, malformed]);
  assert.deepEqual(after.seen, seen);
});

Deno.test("a new server key is an alert and never overwrites the old key's heads", () => {
  const { seen } = observeHeads(empty, { key, shown: [head(1, "aa".repeat(32))] });
  const newKey = serverPublicKey(otherSeed);
  const forked = head(1, "bb".repeat(32), otherSeed);
  const after = observeHeads(seen, { key: newKey, shown: [forked] });
  assert.equal(after.keyChanged, true);
  assert.equal(after.fork, null);
  assert.deepEqual(after.seen, seen, "the old key's heads stay");
  assert.deepEqual(headAlerts(after).map((a) => a.kind), ["key-changed"]);
  assert.match(headAlerts(after)[0].text, new RegExp(newKey.slice(0, 16)));
});

Deno.test("a head without a valid signature is an alert in plain words", () => {
  const { seen } = observeHeads(empty, { key, shown: [head(1, "aa".repeat(32))] });
  const after = observeHeads(seen, { key, shown: [{ height: 2, hash: "cc".repeat(32) }] });
  const alerts = headAlerts(after);
  assert.deepEqual(alerts.map((a) => a.kind), ["unsigned"]);
  assert.match(alerts[0].text, /Block 2 came without a valid signature/);
  assert.deepEqual(headAlerts(observeHeads(seen, { key, shown: [head(2, "cc".repeat(32))] })), []);
});

Deno.test("a chain height below the highest remembered head is a rollback", () => {
  const { seen } = observeHeads(empty, {
    key,
    shown: [head(3, "aa".repeat(32)), head(5, "bb".repeat(32))],
  });
  const back = observeHeads(seen, { key, shown: [head(4, "cc".repeat(32))], height: 4 });
  assert.deepEqual(back.rollback, { height: 4, remembered: 5 });
  assert.deepEqual(headAlerts(back).map((a) => a.kind), ["rollback"]);
  assert.match(headAlerts(back)[0].text, /saw block 5.*ends at block 4/);
  for (const height of [5, 6]) {
    const ahead = observeHeads(seen, { key, shown: [], height });
    assert.equal(ahead.rollback, null, String(height));
    assert.deepEqual(headAlerts(ahead), []);
  }
});

/** A server over in-memory KV with a key of its own and `blocks` sealed blocks of one vote. */
async function server(blocks: number) {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const app = createApp({ store });
  const voters = makeVoters(blocks + 1);
  for (const v of voters) await store.registerKey(v.key);
  for (let i = 0; i < blocks; i++) {
    await call(app, "POST", "/api/vote", signedVote(voters[i], voters.slice(0, 2), `V${i}`));
    await sealNextBlock(store, Date.now() + i);
  }
  return { kv, app };
}

Deno.test("a page's check stores nothing under a new key and reports unsigned heads", async (t) => {
  const honest = await server(2);
  const other = await server(0);
  const storage = new MapStorage();
  const api = createApiClient({ fetch: honest.app.request });
  const status = await api.blockStatus();
  const first = await checkShownChain(api, { storage, shown: [status] });
  assert.deepEqual(first.alerts, []);
  const remembered = storage.getItem(SEEN_HEADS_KEY);
  const log = storage.getItem(SEEN_LOG_KEY);
  assert.ok(remembered && log);
  assert.deepEqual(parseSeenHeads(remembered).heads.map((h) => h.height), [2]);

  await t.step("another server key: an alert, the memory unchanged", async () => {
    const observed = await checkShownChain(createApiClient({ fetch: other.app.request }), {
      storage,
    });
    assert.deepEqual(observed.alerts.map((a) => a.kind), ["key-changed"]);
    assert.equal(storage.getItem(SEEN_HEADS_KEY), remembered);
    assert.equal(storage.getItem(SEEN_LOG_KEY), log);
  });
  await t.step("heads served without signatures: an alert, nothing remembered", async () => {
    const bare = { height: status.height, hash: status.hash };
    const observed = await checkShownChain(api, { storage, shown: [bare] });
    assert.deepEqual(observed.alerts.map((a) => a.kind), ["unsigned"]);
    assert.deepEqual(parseSeenHeads(storage.getItem(SEEN_HEADS_KEY)).heads.map((h) => h.height), [
      2,
    ]);
  });
  honest.kv.close();
  other.kv.close();
});

Deno.test("the memory keeps the highest heads, round-trips storage and survives garbage", () => {
  const shown = Array.from({ length: MAX_SEEN_HEADS + 3 }, (_, i) => head(i, "ab".repeat(32)));
  const { seen } = observeHeads(empty, { key, shown });
  assert.equal(seen.heads.length, MAX_SEEN_HEADS);
  assert.equal(seen.heads[0].height, 3);
  assert.deepEqual(parseSeenHeads(serializeSeenHeads(seen)), seen);
  for (const garbage of [null, "", "{", "[]", '{"key":1,"heads":[]}', '{"key":null,"heads":[1]}']) {
    assert.deepEqual(parseSeenHeads(garbage), empty, String(garbage));
  }
  assert.deepEqual(headsBelow(seen, 5).map((h) => h.height), [5, 4, 3]);
});

Deno.test("the evidence download is the evidence, named by its height", () => {
  const { seen } = observeHeads(empty, { key, shown: [head(4, "aa".repeat(32))] });
  const { fork } = observeHeads(seen, { key, shown: [head(4, "bb".repeat(32))] });
  const file = evidenceFile(fork!);
  assert.equal(file.name, "ringvote-fork-evidence-height-4.json");
  assert.deepEqual(JSON.parse(file.text), fork);
});
