// The database goes down under an app over KV Connect (protocol §5.5): a request waiting on it is
// answered 503 `kv_unavailable` with `Retry-After` while it is still down, once it has been silent
// that long the next is refused at once, the block status answers what the process last read and
// says so, and the sealer waits, then finishes when the database is back. A vote answered 503 may
// still land: sent again, it is refused 409 and its tag names it.
import assert from "node:assert/strict";
import { createApp, KV_RETRY_AFTER_SECONDS } from "../../../server/app.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore } from "../../../server/store/mod.ts";
import { startKvConnectServer } from "../../helpers/kv_connect_server.ts";
import { call, makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";
import { testVerifier } from "../../helpers/test_verifier.ts";

/** `call`, with how long its answer took, in ms. */
async function timedCall(...args: Parameters<typeof call>) {
  const started = performance.now();
  const answer = await call(...args);
  return { ...answer, ms: performance.now() - started };
}

async function waitFor(check: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Timed out waiting for ${what}`);
}

Deno.test("a database that goes down: 503 kv_unavailable before it is back, status from memory, the sealer waits", async () => {
  const server = await startKvConnectServer();
  const kv = await server.openKv();
  try {
    const store = await createStore(kv);
    const app = createApp({ store, verifier: testVerifier });
    const voters = makeVoters(4);
    for (const v of voters) await call(app, "POST", "/api/pki/key", { key: v.key });
    const [early, during, refused] = voters.slice(0, 3).map((v, i) =>
      signedVote(v, ringFor(v, voters, 4), `choice ${i}`)
    );
    assert.equal((await call(app, "POST", "/api/vote", early)).status, 202);
    const known = await call(app, "GET", "/api/block/status");
    assert.equal(known.body.stale, undefined, "a status read from the database is not stale");

    await server.down("refuse");
    let sealed = false;
    const sealing = sealNextBlock(store, Date.now()).finally(() => sealed = true);
    const first = timedCall(app, "POST", "/api/vote", during);
    const status = await timedCall(app, "GET", "/api/block/status");
    assert.equal(status.status, 200);
    assert.equal(status.body.stale, true, "the status says it is what the process last read");
    assert.equal(typeof status.body.knownAt, "number");
    assert.equal(status.body.height, known.body.height);
    assert.equal(status.body.openBlock, known.body.openBlock);

    const waited = await first;
    assert.equal(waited.status, 503, JSON.stringify(waited.body));
    assert.equal(waited.body.error.code, "kv_unavailable");
    const again = await timedCall(app, "POST", "/api/vote", refused);
    assert.equal(again.status, 503);
    assert.equal(again.body.error.code, "kv_unavailable");
    assert.ok(
      again.ms < waited.ms / 4,
      `once the database has been silent past the bound the refusal is at once: ${again.ms} ms, ` +
        `the first waited ${waited.ms} ms`,
    );
    assert.equal(sealed, false, "the sealer waits for the database");
    assert.equal(server.isDown, true, "every answer came while the database was down");
    assert.ok(status.ms < waited.ms / 2, "the status did not wait for the bound");
    const res = await app.request("/api/pki/key/id/1");
    assert.equal(res.headers.get("retry-after"), String(KV_RETRY_AFTER_SECONDS));
    await res.body?.cancel();

    await server.up();
    const blocks = await sealing;
    // The block holds the vote of before, and the vote answered 503 if it landed before the close.
    assert.equal(blocks.length, 1, "the sealer resumed and sealed the open block");
    assert.ok(blocks[0].size >= 1);
    // The vote answered 503 went on unseen and landed: sent again, it is refused, and its tag
    // names it. The one refused at once never reached the database.
    await waitFor(
      async () => (await call(app, "GET", `/api/tag/${during.tag}`)).status === 200,
      "the vote answered 503 to land",
    );
    const resent = await call(app, "POST", "/api/vote", during);
    assert.equal(resent.status, 409);
    assert.equal(resent.body.error.code, "duplicate_tag");
    assert.equal((await call(app, "GET", `/api/tag/${refused.tag}`)).status, 404);
    assert.equal((await call(app, "POST", "/api/vote", refused)).status, 202);
    const fresh = await call(app, "GET", "/api/block/status");
    assert.equal(fresh.body.stale, undefined);
    assert.ok(fresh.body.height > known.body.height);
  } finally {
    kv.close();
    await server.close();
  }
});

Deno.test("a process too busy to read the database's answers is not told the database is down", async () => {
  const server = await startKvConnectServer();
  const kv = await server.openKv();
  try {
    const store = await createStore(kv);
    const app = createApp({ store, verifier: testVerifier, kvDeadlineMs: 100 });
    const [voter] = makeVoters(1);
    assert.equal((await call(app, "POST", "/api/pki/key", { key: voter.key })).status, 201);
    for (let round = 0; round < 3; round++) {
      server.delayMs = 200;
      const answer = call(app, "GET", "/api/pki/key/id/1");
      await new Promise((resolve) => setTimeout(resolve, 30)); // its read is in flight
      // The thread verifies (say) for 1.5 s: the database answers meanwhile, unread, and the
      // deadline's timer is due long before the thread is free to see either.
      const busyUntil = Date.now() + 1500;
      while (Date.now() < busyUntil) { /* busy */ }
      const res = await answer;
      assert.equal(res.status, 200, `round ${round}: ${JSON.stringify(res.body)}`);
      server.delayMs = 0;
    }
  } finally {
    kv.close();
    await server.close();
  }
});
