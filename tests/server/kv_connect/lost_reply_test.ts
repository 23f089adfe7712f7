// A write that landed but whose reply was lost (tests/helpers/kv_connect_server.ts drops it): the
// Deno client sends it again and its checks fail against itself, so `commit()` answers ok:false
// for a write that is in the database. Every write path reads back (protocol §5.3): the
// registration is answered 201 with its id, the vote 202 once, the round started once, the
// sealer's commits finish the block.
import assert from "node:assert/strict";
import { createApp } from "../../../server/app.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore } from "../../../server/store/mod.ts";
import { createRounds } from "../../../server/store/rounds.ts";
import { startKvConnectServer } from "../../helpers/kv_connect_server.ts";
import {
  call,
  makeVoters,
  proofVerifies,
  ringFor,
  signedVote,
} from "../../helpers/ledger_fixtures.ts";
import { testVerifier } from "../../helpers/test_verifier.ts";

async function setup() {
  const server = await startKvConnectServer();
  const kv = await server.openKv();
  const store = await createStore(kv);
  const app = createApp({ store, verifier: testVerifier });
  const close = async () => {
    kv.close();
    await server.close();
  };
  return { server, kv, store, app, close };
}

Deno.test("a registration whose reply was lost is answered 201 with its id, not 409", async () => {
  const { server, app, close } = await setup();
  try {
    const [a, b, c] = makeVoters(3);
    assert.equal((await call(app, "POST", "/api/pki/key", { key: a.key })).status, 201);
    const writesBefore = server.counts().writes;
    const dropped = server.dropWriteReplies(1);
    const res = await call(app, "POST", "/api/pki/key", { key: b.key });
    await dropped;
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body, { id: 2, key: b.key, total: 2 });
    assert.equal(server.counts().writes - writesBefore, 2, "the commit and its resend, no more");
    assert.deepEqual((await call(app, "GET", "/api/pki/key/id/2")).body, {
      id: 2,
      key: b.key,
      total: 2,
    });
    const again = await call(app, "POST", "/api/pki/key", { key: b.key });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.id, 2);
    assert.equal((await call(app, "POST", "/api/pki/key", { key: c.key })).body.id, 3, "no gap");
  } finally {
    await close();
  }
});

Deno.test("nine registrations in one commit whose reply was lost: each answered 201, ids 1 to 9", async () => {
  const { server, store, close } = await setup();
  try {
    const keys = makeVoters(9).map((v) => v.key);
    server.delayMs = 20; // so that the nine wait together for one commit
    const dropped = server.dropWriteReplies(1);
    const answers = await Promise.all(keys.map((key) => store.registerKey(key)));
    await dropped;
    assert.deepEqual(answers.map((a) => a.id).toSorted((x, y) => x - y), [
      1,
      2,
      3,
      4,
      5,
      6,
      7,
      8,
      9,
    ]);
    assert.equal((await store.keyPage(0, 100)).total, 9);
  } finally {
    await close();
  }
});

Deno.test("a vote whose reply was lost is answered 202 once, stored once and sealed", async () => {
  const { server, store, app, close } = await setup();
  try {
    const voters = makeVoters(4);
    for (const v of voters) await call(app, "POST", "/api/pki/key", { key: v.key });
    const vote = signedVote(voters[0], ringFor(voters[0], voters, 4), "Yes");
    const dropped = server.dropWriteReplies(1);
    const res = await call(app, "POST", "/api/vote", vote);
    await dropped;
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const replay = await call(app, "POST", "/api/vote", vote);
    assert.equal(replay.status, 409);
    // The sealer's commits lose their replies too: close, proofs, block.
    server.dropWriteReplies(3);
    const [block] = await sealNextBlock(store, Date.now());
    assert.equal(block.size, 1);
    const proof = await call(
      app,
      "GET",
      `/api/block/id/${res.body.blockId}/vote/${res.body.voteId}`,
    );
    assert.equal(proof.status, 200);
    assert.ok(proofVerifies(proof.body));
  } finally {
    await close();
  }
});

Deno.test("a round start whose replies were lost starts one round, not two", async () => {
  const { server, kv, store, close } = await setup();
  try {
    const rounds = await createRounds(kv, {
      election: store,
      electionIntervalMs: 1000,
      adminToken: "presenter-token-0123456789",
      currentTtlMs: 0,
    });
    // The round's genesis, its key, and the commit that starts it.
    const dropped = server.dropWriteReplies(3);
    const id = await rounds.start({ question: "Colour?", choices: ["Red", "Blue"] });
    await dropped;
    assert.equal(id, 2);
    const { current, rounds: listed } = await rounds.list();
    assert.equal(current, 2);
    assert.deepEqual(listed.map((r) => r.id), [1, 2]);
  } finally {
    await close();
  }
});
