// The pool of verification workers: the same answers as checkRing for good and bad signatures,
// concurrent use, a clean shutdown, and only registered keys ever entering a worker's cache.
import assert from "node:assert/strict";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import { hexToBytes } from "../../lib/protocol/bytes.ts";
import { L } from "../../lib/protocol/keys.ts";
import {
  checkRing,
  decodeSignature,
  type RingSignature,
} from "../../lib/protocol/ring_signature.ts";
import { createApp } from "../../server/app.ts";
import { createStore } from "../../server/store.ts";
import { createVerifyPool } from "../../server/verify_pool.ts";
import {
  call,
  hostilePoints,
  makeVoters,
  ringFor,
  signedVote,
} from "../helpers/ledger_fixtures.ts";

const voters = makeVoters(10);
const signer = voters[0];
const ring = ringFor(signer, voters, 8);
const good = signedVote(signer, ring, "Yes");

function decoded(): RingSignature {
  return decodeSignature(good.signature);
}

function withMember(sig: RingSignature, index: number, hex: string): RingSignature {
  const ringCopy = sig.ring.slice();
  ringCopy[index] = hexToBytes(hex);
  return { ...sig, ring: ringCopy };
}

/** Good and bad signatures, each with the message it is checked against. */
function corpus(): { desc: string; sig: RingSignature; message: string }[] {
  const hostile = hostilePoints();
  const sig = decoded();
  const bumped = sig.r.slice();
  bumped[3] = numberToBytesLE((bytesToNumberLE(bumped[3]) + 1n) % L, 32);
  const wide = sig.r.slice();
  wide[0] = numberToBytesLE(bytesToNumberLE(wide[0]) + L, 32);
  return [
    { desc: "a good signature", sig, message: "Yes" },
    { desc: "another message", sig, message: "No" },
    { desc: "a changed response", sig: { ...sig, r: bumped }, message: "Yes" },
    { desc: "a non-canonical response", sig: { ...sig, r: wide }, message: "Yes" },
    { desc: "a repeated member", sig: withMember(sig, 1, good.publicKeys[0]), message: "Yes" },
    ...Object.entries(hostile).map(([name, hex]) => ({
      desc: `a ${name} member`,
      sig: withMember(sig, 2, hex),
      message: "Yes",
    })),
    {
      desc: "a small-order tag",
      sig: { ...sig, tag: hexToBytes(hostile.smallOrder) },
      message: "Yes",
    },
  ];
}

Deno.test("the pool answers exactly as checkRing, alone and under concurrent use", async (t) => {
  const pool = createVerifyPool({ workers: 2 });
  try {
    const cases = corpus();
    await t.step("one at a time", async () => {
      for (const { desc, sig, message } of cases) {
        assert.deepEqual(await pool.verify(sig, message), checkRing(sig, message), desc);
      }
    });
    await t.step("48 verifications in flight at once", async () => {
      const many = Array.from({ length: 48 }, (_, i) => cases[i % cases.length]);
      const answers = await Promise.all(many.map(({ sig, message }) => pool.verify(sig, message)));
      answers.forEach((answer, i) => {
        assert.deepEqual(answer, checkRing(many[i].sig, many[i].message), many[i].desc);
      });
    });
    await t.step("a malformed field throws the same error type as checkRing", async () => {
      const sig = { ...decoded(), c0: new Uint8Array(31) };
      assert.throws(() => checkRing(sig, "Yes"), RangeError);
      await assert.rejects(pool.verify(sig, "Yes"), RangeError);
    });
    await t.step("without a staging area nothing is cached", async () => {
      const stats = await pool.cacheStats();
      assert.equal(stats.length, 2);
      assert.ok(stats.every((s) => s.size === 0));
    });
  } finally {
    pool.close();
  }
  await assert.rejects(pool.verify(decoded(), "Yes"), /closed/);
});

Deno.test("through the API, worker caches only ever hold registered keys", async () => {
  const kv = await Deno.openKv(":memory:");
  const pool = createVerifyPool({ workers: 2 });
  try {
    const store = await createStore(kv);
    const app = createApp({ store, verifyVote: pool.verify });
    const registered = makeVoters(4);
    for (const v of registered) await store.registerKey(v.key);
    const [stranger] = makeVoters(1);

    const refused = await call(
      app,
      "POST",
      "/api/vote",
      signedVote(registered[0], [registered[0], registered[1], stranger], "Yes"),
    );
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, "unregistered_key");
    const forged = signedVote(registered[1], registered.slice(0, 3), "Yes");
    const badSig = await call(app, "POST", "/api/vote", { ...forged, payload: "No" });
    assert.equal(badSig.status, 400);
    assert.equal(badSig.body.error.code, "invalid_signature");
    assert.deepEqual((await pool.cacheStats()).flatMap((s) => s.keys), []);

    const members = registered.slice(0, 3);
    const votes = members.map((v, i) => signedVote(v, members, `option ${i}`));
    const answers = await Promise.all(votes.map((vote) => call(app, "POST", "/api/vote", vote)));
    assert.deepEqual(answers.map((a) => a.status), [202, 202, 202]);
    const stats = await pool.cacheStats();
    const cached = new Set(stats.flatMap((s) => s.keys));
    assert.deepEqual([...cached].sort(), members.map((v) => v.key).sort());
    assert.ok(stats.every((s) => s.keys.length === 0 || s.keys.length === 3));
    assert.ok(!cached.has(stranger.key));
  } finally {
    pool.close();
    kv.close();
  }
});

Deno.test("a key registered through the API is checked and tabled by every worker before it votes", async () => {
  const kv = await Deno.openKv(":memory:");
  const pool = createVerifyPool({ workers: 2 });
  try {
    const store = await createStore(kv);
    const app = createApp({ store, verifyVote: pool.verify, onKeyRegistered: pool.admit });
    const [voter] = makeVoters(1);
    const created = await call(app, "POST", "/api/pki/key", { key: voter.key, name: "Ada" });
    assert.equal(created.status, 201);
    const refused = await call(app, "POST", "/api/pki/key", { key: hostilePoints().smallOrder });
    assert.equal(refused.status, 400);

    const stats = await admitted(pool);
    assert.deepEqual(stats.map((s) => s.keys), [[voter.key], [voter.key]]);
    assert.deepEqual(stats.map((s) => s.tabled), [1, 1]);
    // A key that somehow reached a worker without passing registration is checked again there.
    pool.admit(hostilePoints().smallOrder);
    pool.admit("not hex");
    assert.deepEqual((await admitted(pool)).map((s) => s.keys), [[voter.key], [voter.key]]);
  } finally {
    pool.close();
    kv.close();
  }
});

Deno.test("a burst of registrations does not hold up verification", async () => {
  const pool = createVerifyPool({ workers: 1 });
  const burst = makeVoters(400);
  try {
    // About 2 ms of checks and tables per key: the burst is near a second of work for the worker,
    // far more than one verification, so the answer must come while keys still wait.
    for (const v of burst) pool.admit(v.key);
    const answer = await pool.verify(decoded(), "Yes");
    assert.deepEqual(answer, { ok: true });
    const [stats] = await pool.cacheStats();
    assert.ok(stats.admitting > 0, "the verification was answered while keys were still waiting");
    assert.equal((await admitted(pool))[0].tabled, burst.length);
  } finally {
    pool.close();
  }
});

/** The pool's cache stats once every worker has admitted the keys it was given. */
async function admitted(pool: ReturnType<typeof createVerifyPool>) {
  for (;;) {
    const stats = await pool.cacheStats();
    if (stats.every((s) => s.admitting === 0)) return stats;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
