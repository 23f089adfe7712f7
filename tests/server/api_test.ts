// Every call, status and error code of protocol §4 through app.request over in-memory Deno KV:
// status first, then content type, then body.
import assert from "node:assert/strict";
import { genesisBlock } from "../../lib/protocol/chain.ts";
import {
  BlockList,
  BlockVotes,
  ErrorBody,
  KeyRecord,
  VoteProof,
} from "../../lib/protocol/schemas.ts";
import { createApp } from "../../server/app.ts";
import { testVerifier } from "../helpers/test_verifier.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { createStore } from "../../server/store/mod.ts";
import {
  type Answer,
  call,
  hostilePoints,
  makeVoters,
  proofVerifies,
  ringFor,
  signedVote,
} from "../helpers/ledger_fixtures.ts";

const GENESIS_AT = 1_700_000_000_000;
const JSON_TYPE = "application/json";

async function setup() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv, { now: () => GENESIS_AT });
  const app = createApp({ store, verifier: testVerifier });
  return { kv, store, app };
}

function assertOk(res: Answer, status: number) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.match(res.type ?? "", /^application\/json/);
}

function assertError(res: Answer, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.match(res.type ?? "", /^application\/json/);
  assert.ok(ErrorBody.safeParse(res.body).success, JSON.stringify(res.body));
  assert.equal(res.body.error.code, code);
  assert.ok(res.body.error.message.length > 0);
  assert.ok(!res.body.error.message.endsWith("."), "messages carry no trailing period");
}

/** `record` without its head signature, after checking it is there (tests/server/head_test.ts checks its value). */
// deno-lint-ignore no-explicit-any
function unsigned(record: any) {
  assert.match(record.head_signature ?? "", /^[0-9a-f]{128}$/);
  const { head_signature: _, ...rest } = record;
  return rest;
}

async function dump(kv: Deno.Kv) {
  const out = [];
  for await (const e of kv.list({ prefix: [] })) out.push([e.key, e.value, e.versionstamp]);
  return out;
}

Deno.test("GET /api/block/status on a new ledger shows the genesis block", async () => {
  const { kv, app } = await setup();
  try {
    const res = await call(app, "GET", "/api/block/status");
    assertOk(res, 200);
    const genesis = genesisBlock(GENESIS_AT);
    assert.deepEqual(unsigned(res.body), {
      height: 0,
      hash: genesis.hash,
      timestamp: GENESIS_AT,
      openBlock: 1,
    });
  } finally {
    kv.close();
  }
});

Deno.test("the genesis block is created once: a second start keeps it", async () => {
  const { kv } = await setup();
  try {
    const again = await createStore(kv, { now: () => GENESIS_AT + 5 });
    assert.deepEqual(await again.block(0), genesisBlock(GENESIS_AT));
  } finally {
    kv.close();
  }
});

Deno.test("GET /api/block/hash/id/{height}", async (t) => {
  const { kv, app } = await setup();
  try {
    await t.step("200 with height and hash for a sealed block", async () => {
      const res = await call(app, "GET", "/api/block/hash/id/0");
      assertOk(res, 200);
      assert.deepEqual(res.body, { height: 0, hash: genesisBlock(GENESIS_AT).hash });
    });
    await t.step("404 unknown_block past the head", async () => {
      assertError(await call(app, "GET", "/api/block/hash/id/1"), 404, "unknown_block");
    });
    await t.step("400 invalid_request for a height that is not an integer", async () => {
      for (const bad of ["abc", "-1", "1.5", "01", "99999999999999999999"]) {
        assertError(await call(app, "GET", `/api/block/hash/id/${bad}`), 400, "invalid_request");
      }
    });
  } finally {
    kv.close();
  }
});

Deno.test("key directory: register, read one, read pages", async (t) => {
  const { kv, app } = await setup();
  const voters = makeVoters(3);
  try {
    await t.step("POST /api/pki/key answers 201 with contiguous ids from 1", async () => {
      for (const [i, voter] of voters.entries()) {
        const res = await call(app, "POST", "/api/pki/key", { key: voter.key, name: "Voter" });
        assertOk(res, 201);
        assert.ok(KeyRecord.safeParse(res.body).success);
        assert.deepEqual(res.body, { id: i + 1, key: voter.key, total: i + 1 });
      }
    });
    await t.step("name is optional", async () => {
      const [extra] = makeVoters(1);
      const res = await call(app, "POST", "/api/pki/key", { key: extra.key });
      assertOk(res, 201);
      assert.equal(res.body.id, 4);
      voters.push(extra);
    });
    await t.step("409 duplicate_key carries the existing id", async () => {
      const res = await call(app, "POST", "/api/pki/key", { key: voters[1].key, name: "Again" });
      assertError(res, 409, "duplicate_key");
      assert.equal(res.body.error.id, 2);
    });
    await t.step("400 invalid_key for every unacceptable point, nothing stored", async () => {
      const before = await dump(kv);
      for (const [desc, key] of Object.entries(hostilePoints())) {
        const res = await call(app, "POST", "/api/pki/key", { key, name: "Voter" });
        assertError(res, 400, "invalid_key");
        assert.match(res.body.error.message, /canonical|identity|small-order/, desc);
      }
      for (const key of [voters[0].key.toUpperCase(), "abcd", 42, null]) {
        assertError(await call(app, "POST", "/api/pki/key", { key }), 400, "invalid_key");
      }
      assertError(await call(app, "POST", "/api/pki/key", {}), 400, "invalid_key");
      assert.deepEqual(await dump(kv), before);
    });
    await t.step("400 invalid_request for a malformed body", async () => {
      const key = makeVoters(1)[0].key;
      assertError(await call(app, "POST", "/api/pki/key", "{not json"), 400, "invalid_request");
      assertError(await call(app, "POST", "/api/pki/key", "[]"), 400, "invalid_request");
      assertError(
        await call(app, "POST", "/api/pki/key", { key, name: 7 }),
        400,
        "invalid_request",
      );
    });
    await t.step("GET /api/pki/key/id/{id}", async () => {
      const res = await call(app, "GET", "/api/pki/key/id/2");
      assertOk(res, 200);
      assert.deepEqual(res.body, { id: 2, key: voters[1].key, total: 4 });
      assertError(await call(app, "GET", "/api/pki/key/id/5"), 404, "unknown_key");
      assertError(await call(app, "GET", "/api/pki/key/id/0"), 404, "unknown_key");
      assertError(await call(app, "GET", "/api/pki/key/id/two"), 400, "invalid_request");
    });
    await t.step("GET /api/pki/key/offset/{o}/limit/{l}", async () => {
      const first = await call(app, "GET", "/api/pki/key/offset/0/limit/1");
      assertOk(first, 200);
      assert.deepEqual(first.body, { keys: [{ id: 1, key: voters[0].key }], total: 4 });
      const rest = await call(app, "GET", "/api/pki/key/offset/1/limit/100");
      assertOk(rest, 200);
      assert.deepEqual(rest.body, {
        keys: voters.slice(1).map((v, i) => ({ id: i + 2, key: v.key })),
        total: 4,
      });
      const past = await call(app, "GET", "/api/pki/key/offset/9/limit/5");
      assert.deepEqual(past.body, { keys: [], total: 4 });
      const none = await call(app, "GET", "/api/pki/key/offset/0/limit/0");
      assert.deepEqual(none.body, { keys: [], total: 4 });
      for (const path of ["offset/0/limit/101", "offset/0/limit/1.5", "offset/-1/limit/1"]) {
        assertError(await call(app, "GET", `/api/pki/key/${path}`), 400, "invalid_request");
      }
    });
  } finally {
    kv.close();
  }
});

Deno.test("a vote's life: 202, not sealed yet, sealed with a proof that verifies", async (t) => {
  const { kv, store, app } = await setup();
  const voters = makeVoters(4);
  try {
    for (const v of voters) await store.registerKey(v.key);
    // Ring in an order other than sorted, to show publicKeys come back as submitted.
    const ring = [voters[2], voters[0], voters[3], voters[1]];
    const vote = signedVote(voters[0], ring, "Yes");
    let voteId = "";
    await t.step("POST /api/vote answers 202 with voteId and blockId", async () => {
      const res = await call(app, "POST", "/api/vote", vote);
      assertOk(res, 202);
      assert.match(res.body.voteId, /^[A-Za-z0-9_-]{22}$/);
      assert.equal(res.body.blockId, 1);
      voteId = res.body.voteId;
    });
    await t.step("404 block_not_sealed before the sealer ran", async () => {
      const res = await call(app, "GET", `/api/block/id/1/vote/${voteId}`);
      assertError(res, 404, "block_not_sealed");
    });
    await t.step("GET /api/tag/{tag} finds the vote by its tag", async () => {
      const res = await call(app, "GET", `/api/tag/${vote.tag}`);
      assertOk(res, 200);
      assert.deepEqual(res.body, { voteId, blockId: 1 });
    });
    await t.step("the sealer closes block 1 at its tick time", async () => {
      const sealed = await sealNextBlock(store, GENESIS_AT + 60_000);
      assert.deepEqual(sealed.map((b) => [b.height, b.size, b.timestamp]), [
        [1, 1, GENESIS_AT + 60_000],
      ]);
      const status = await call(app, "GET", "/api/block/status");
      assert.deepEqual(unsigned(status.body), {
        height: 1,
        hash: sealed[0].hash,
        timestamp: GENESIS_AT + 60_000,
        openBlock: 2,
      });
    });
    await t.step(
      "GET /api/block/id/{b}/vote/{v} answers the vote, index, path and block",
      async () => {
        const res = await call(app, "GET", `/api/block/id/1/vote/${voteId}`);
        assertOk(res, 200);
        assert.ok(VoteProof.safeParse(res.body).success);
        assert.deepEqual(res.body.vote, {
          payload: vote.payload,
          signature: vote.signature,
          publicKeys: vote.publicKeys,
        });
        assert.equal(res.body.index, 0);
        assert.deepEqual(res.body.path, []);
        assert.equal(res.body.block.height, 1);
        assert.equal(res.body.block.prev_hash, genesisBlock(GENESIS_AT).hash);
        assert.ok(proofVerifies(res.body));
      },
    );
    await t.step("404 unknown_vote for a wrong block, an unknown or a malformed id", async () => {
      assertError(await call(app, "GET", `/api/block/id/2/vote/${voteId}`), 404, "unknown_vote");
      assertError(await call(app, "GET", `/api/block/id/0/vote/${voteId}`), 404, "unknown_vote");
      const unknown = "A".repeat(22);
      assertError(await call(app, "GET", `/api/block/id/1/vote/${unknown}`), 404, "unknown_vote");
      const long = "x".repeat(3000);
      assertError(await call(app, "GET", `/api/block/id/1/vote/${long}`), 404, "unknown_vote");
      assertError(await call(app, "GET", `/api/block/id/x/vote/${voteId}`), 400, "invalid_request");
    });
    await t.step("GET /api/block/hash/id/{h} of the new block", async () => {
      const res = await call(app, "GET", "/api/block/hash/id/1");
      assertOk(res, 200);
      assert.equal(res.body.height, 1);
      assert.equal(res.body.hash, (await store.block(1))?.hash);
    });
  } finally {
    kv.close();
  }
});

Deno.test("bulletin board: blocks, block votes, tally and tags", async (t) => {
  const { kv, store, app } = await setup();
  const voters = makeVoters(6);
  try {
    for (const v of voters) await store.registerKey(v.key);
    const submit = async (i: number, payload: string) => {
      const vote = signedVote(voters[i], ringFor(voters[i], voters, 3, i), payload);
      const res = await call(app, "POST", "/api/vote", vote);
      assertOk(res, 202);
      return { ...res.body, vote } as { voteId: string; blockId: number; vote: typeof vote };
    };
    const block1 = [await submit(0, "Yes"), await submit(1, "No"), await submit(2, "Yes")];
    await sealNextBlock(store, GENESIS_AT + 1000);
    const block2 = [await submit(3, "Yes"), await submit(4, "Maybe")];
    await sealNextBlock(store, GENESIS_AT + 2000);
    const unsealed = await submit(5, "No");
    assert.equal(unsealed.blockId, 3);

    await t.step("GET /api/blocks lists block records ascending", async () => {
      const res = await call(app, "GET", "/api/blocks");
      assertOk(res, 200);
      assert.ok(BlockList.safeParse(res.body).success);
      assert.equal(res.body.height, 2);
      assert.deepEqual(res.body.blocks.map((b: { height: number }) => b.height), [0, 1, 2]);
      assert.deepEqual(unsigned(res.body.blocks[1]), await store.block(1));
      const page = await call(app, "GET", "/api/blocks?from=1&limit=1");
      assert.deepEqual(page.body.blocks.map(unsigned), [await store.block(1)]);
      assert.equal(page.body.height, 2);
      const past = await call(app, "GET", "/api/blocks?from=7");
      assert.deepEqual(past.body, { blocks: [], height: 2 });
      assertError(await call(app, "GET", "/api/blocks?limit=101"), 400, "invalid_request");
      assertError(await call(app, "GET", "/api/blocks?from=x"), 400, "invalid_request");
    });
    await t.step("GET /api/block/id/{h}/votes lists votes in leaf order", async () => {
      const res = await call(app, "GET", "/api/block/id/1/votes");
      assertOk(res, 200);
      assert.ok(BlockVotes.safeParse(res.body).success);
      assert.equal(res.body.total, 3);
      const ids = block1.map((v) => v.voteId).sort();
      assert.deepEqual(res.body.votes.map((v: { voteId: string }) => v.voteId), ids);
      assert.deepEqual(res.body.votes.map((v: { index: number }) => v.index), [0, 1, 2]);
      for (const entry of res.body.votes) {
        const sent = block1.find((v) => v.voteId === entry.voteId)!.vote;
        assert.deepEqual(entry.vote, {
          payload: sent.payload,
          signature: sent.signature,
          publicKeys: sent.publicKeys,
        });
        const proof = await call(app, "GET", `/api/block/id/1/vote/${entry.voteId}`);
        assert.equal(proof.body.index, entry.index);
      }
      const page = await call(app, "GET", "/api/block/id/1/votes?offset=1&limit=1");
      assert.deepEqual(page.body, { votes: [res.body.votes[1]], total: 3 });
      const genesis = await call(app, "GET", "/api/block/id/0/votes");
      assert.deepEqual(genesis.body, { votes: [], total: 0 });
      assertError(await call(app, "GET", "/api/block/id/3/votes"), 404, "unknown_block");
      assertError(
        await call(app, "GET", "/api/block/id/1/votes?limit=101"),
        400,
        "invalid_request",
      );
      assertError(
        await call(app, "GET", "/api/block/id/1/votes?offset=-2"),
        400,
        "invalid_request",
      );
    });
    await t.step("GET /api/tally counts sealed votes only, count descending", async () => {
      const res = await call(app, "GET", "/api/tally");
      assertOk(res, 200);
      assert.deepEqual(res.body, {
        total: block1.length + block2.length,
        results: [
          { payload: "Yes", count: 3 },
          { payload: "Maybe", count: 1 },
          { payload: "No", count: 1 },
        ],
      });
      await sealNextBlock(store, GENESIS_AT + 3000);
      const after = await call(app, "GET", "/api/tally");
      assert.deepEqual(after.body.results.slice(0, 2), [
        { payload: "Yes", count: 3 },
        { payload: "No", count: 2 },
      ]);
      assert.equal(after.body.total, 6);
    });
    await t.step("GET /api/tag/{tag}", async () => {
      const res = await call(app, "GET", `/api/tag/${block2[1].vote.tag}`);
      assertOk(res, 200);
      assert.deepEqual(res.body, { voteId: block2[1].voteId, blockId: 2 });
      assertError(await call(app, "GET", `/api/tag/${"0".repeat(64)}`), 404, "unknown_tag");
      assertError(await call(app, "GET", `/api/tag/${"A".repeat(64)}`), 400, "invalid_request");
    });
  } finally {
    kv.close();
  }
});

Deno.test("bodies over 64 KiB are refused with 413 body_too_large before parsing", async (t) => {
  const { kv, app } = await setup();
  try {
    const before = await dump(kv);
    const big = JSON.stringify({ key: "a".repeat(64), name: "x".repeat(64 * 1024) });
    await t.step("with a content-length", async () => {
      const res = await call(app, "POST", "/api/pki/key", big);
      assertError(res, 413, "body_too_large");
    });
    await t.step("streamed, without a content-length", async () => {
      const bytes = new TextEncoder().encode(big);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 4096) controller.enqueue(bytes.slice(i, i + 4096));
          controller.close();
        },
      });
      const res = await app.request("/api/vote", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      assert.equal(res.status, 413);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      assert.equal((await res.json()).error.code, "body_too_large");
    });
    await t.step("not even garbage is parsed", async () => {
      const res = await call(app, "POST", "/api/vote", "{".repeat(64 * 1024 + 1));
      assertError(res, 413, "body_too_large");
    });
    assert.deepEqual(await dump(kv), before);
  } finally {
    kv.close();
  }
});

Deno.test("unknown routes and methods answer 404 JSON not_found", async () => {
  const { kv, app } = await setup();
  try {
    for (
      const [method, path] of [["GET", "/api/nothing"], ["GET", "/api/vote"], [
        "DELETE",
        "/api/pki/key",
      ]]
    ) {
      const res = await call(app, method, path);
      assertError(res, 404, "not_found");
      assert.equal(res.type?.startsWith(JSON_TYPE), true);
    }
  } finally {
    kv.close();
  }
});

Deno.test("an unexpected failure is logged and answered 500 internal_error", async () => {
  const { kv, app } = await setup();
  kv.close();
  const logged: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => logged.push(args);
  try {
    const res = await call(app, "GET", "/api/block/status");
    assert.equal(res.status, 500);
    assert.deepEqual(res.body, {
      error: { code: "internal_error", message: "Internal server error" },
    });
    assert.equal(logged.length, 1);
  } finally {
    console.error = original;
  }
});
