// The attack lab's practice ledger (server/store/lab.ts, protocol §4.7) through HTTP over
// in-memory KV: the same API under /api/lab on keys of its own prefix, bounded in keys and votes
// (409 `lab_full`, exact under concurrent requests, the election's ledger unaffected), a reset
// that starts a fresh ledger with a new key and deletes the old one in bounded commits, every
// process following it, and the lab store's memory within its small budget.
import assert from "node:assert/strict";
import { createApp } from "../../../server/app.ts";
import {
  createLabLedger,
  deleteGenerationsBefore,
  LAB_PREFIX,
  LAB_RECORD_BUDGET,
  type LabLedger,
  labPrefix,
} from "../../../server/store/lab.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore, RECORD_BYTES } from "../../../server/store/mod.ts";
import { call, makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";
import { testVerifier } from "../../helpers/test_verifier.ts";
import type { Verifier } from "../../../server/verifier/types.ts";

async function setup(limits: { maxKeys: number; maxVotes: number }) {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const lab = await createLabLedger(kv, limits);
  const app = createApp({ store, lab, verifier: testVerifier });
  return { kv, store, lab, app };
}

/** Every key under `prefix`. */
async function keysUnder(kv: Deno.Kv, prefix: Deno.KvKey): Promise<Deno.KvKey[]> {
  const keys: Deno.KvKey[] = [];
  for await (const entry of kv.list({ prefix })) keys.push(entry.key);
  return keys;
}

Deno.test("the practice ledger is the same API on keys of its own prefix", async (t) => {
  const { kv, lab, app } = await setup({ maxKeys: 50, maxVotes: 50 });
  const voters = makeVoters(4);
  for (const v of voters) {
    const res = await call(app, "POST", "/api/lab/pki/key", v);
    assert.equal(res.status, 201);
    assert.match(res.type ?? "", /^application\/json/);
  }
  const vote = signedVote(voters[0], ringFor(voters[0], voters, 3), "Lab: practice");
  const accepted = await call(app, "POST", "/api/lab/vote", vote);
  assert.equal(accepted.status, 202);
  await sealNextBlock(await lab.current(), Date.now());

  await t.step("the lab answers its own keys, votes, blocks, tally and key", async () => {
    assert.equal((await call(app, "GET", "/api/lab/pki/key/offset/0/limit/1")).body.total, 4);
    assert.deepEqual((await call(app, "GET", "/api/lab/tally")).body, {
      total: 1,
      results: [{ payload: "Lab: practice", count: 1 }],
    });
    const status = (await call(app, "GET", "/api/lab/block/status")).body;
    assert.equal(status.height, 1);
    const proof = await call(app, "GET", `/api/lab/block/id/1/vote/${accepted.body.voteId}`);
    assert.equal(proof.status, 200);
    const labKey = (await call(app, "GET", "/api/lab/server-key")).body.key;
    assert.notEqual(labKey, (await call(app, "GET", "/api/server-key")).body.key);
    const lensKey = (await call(app, "GET", "/api/lab/lens/honest/server-key")).body.key;
    assert.notEqual(lensKey, labKey);
    assert.notEqual(lensKey, (await call(app, "GET", "/api/lens/honest/server-key")).body.key);
  });
  await t.step("the election's ledger holds none of it", async () => {
    assert.equal((await call(app, "GET", "/api/pki/key/offset/0/limit/1")).body.total, 0);
    assert.deepEqual((await call(app, "GET", "/api/tally")).body, { total: 0, results: [] });
    assert.equal((await call(app, "GET", "/api/block/status")).body.height, 0);
    const outside = (await keysUnder(kv, [])).filter((key) => key[0] !== LAB_PREFIX);
    assert.deepEqual(
      outside.map((key) => key[0]).sort(),
      ["block", "cfg", "cfg", "cfg"],
      "only the election's genesis, guard, head and key",
    );
    assert.ok((await keysUnder(kv, labPrefix(1))).length > 10);
  });
  await t.step("unknown lab routes are JSON 404s, and GET cannot reset", async () => {
    for (const [method, path] of [["GET", "/api/lab/nothing"], ["GET", "/api/lab/reset"]]) {
      const res = await call(app, method, path);
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, "not_found");
    }
  });
  kv.close();
});

Deno.test("a full practice ledger refuses with 409 lab_full; the election's takes any number", async (t) => {
  const { kv, lab, app } = await setup({ maxKeys: 3, maxVotes: 2 });
  const voters = makeVoters(10);

  await t.step("concurrent registrations: exactly the bound is registered", async () => {
    const answers = await Promise.all(
      voters.map((v) => call(app, "POST", "/api/lab/pki/key", v)),
    );
    assert.equal(answers.filter((a) => a.status === 201).length, 3);
    const refused = answers.filter((a) => a.status === 409);
    assert.equal(refused.length, 7);
    for (const { body } of refused) {
      assert.equal(body.error.code, "lab_full");
      assert.match(body.error.message, /practice ledger is full: it holds at most 3 keys/);
      assert.match(body.error.message, /POST \/api\/lab\/reset/);
    }
    assert.equal((await call(app, "GET", "/api/lab/pki/key/offset/0/limit/1")).body.total, 3);
  });
  const page = (await call(app, "GET", "/api/lab/pki/key/offset/0/limit/3")).body;
  const held = new Set(page.keys.map((k: { key: string }) => k.key));
  const registered = voters.filter((v) => held.has(v.key));
  await t.step("votes beyond the bound are refused, and nothing of them is stored", async () => {
    const sent = await Promise.all(
      registered.map((v) =>
        call(app, "POST", "/api/lab/vote", signedVote(v, ringFor(v, registered, 3), "Lab: x"))
      ),
    );
    assert.deepEqual(sent.map((a) => a.status).sort(), [202, 202, 409]);
    assert.equal(sent.find((a) => a.status === 409)!.body.error.code, "lab_full");
    await sealNextBlock(await lab.current(), Date.now());
    assert.equal((await call(app, "GET", "/api/lab/tally")).body.total, 2);
  });
  await t.step("the election's ledger is not bounded by the lab's settings", async () => {
    for (const v of voters) {
      assert.equal((await call(app, "POST", "/api/pki/key", v)).status, 201);
    }
    for (const v of voters.slice(0, 4)) {
      const vote = signedVote(v, ringFor(v, voters, 3), "Choice");
      assert.equal((await call(app, "POST", "/api/vote", vote)).status, 202);
    }
  });
  kv.close();
});

Deno.test("a reset starts a fresh practice ledger and deletes the old one in bounded commits", async (t) => {
  const { kv, lab, app, store } = await setup({ maxKeys: 4, maxVotes: 4 });
  const elsewhere = await createLabLedger(kv, { maxKeys: 4, maxVotes: 4 }); // another process
  const voters = makeVoters(4);
  for (const v of voters) await call(app, "POST", "/api/lab/pki/key", v);
  await call(app, "POST", "/api/lab/vote", signedVote(voters[0], voters.slice(0, 3), "Lab: a"));
  await sealNextBlock(await lab.current(), Date.now());
  const oldKey = (await call(app, "GET", "/api/lab/server-key")).body.key;
  const oldGenesis = (await call(app, "GET", "/api/lab/blocks")).body.blocks[0].hash;
  assert.equal((await call(app, "POST", "/api/lab/pki/key", makeVoters(1)[0])).status, 409);
  const election = await keysUnder(kv, []).then((keys) => keys.filter((k) => k[0] !== LAB_PREFIX));

  const reset = await call(app, "POST", "/api/lab/reset");
  await t.step("it answers the fresh ledger's status: genesis only, a new key", async () => {
    assert.equal(reset.status, 200);
    assert.equal(reset.body.height, 0);
    assert.equal(reset.body.openBlock, 1);
    assert.notEqual(reset.body.hash, oldGenesis);
    const key = (await call(app, "GET", "/api/lab/server-key")).body.key;
    assert.notEqual(key, oldKey);
    assert.equal((await call(app, "GET", "/api/lab/pki/key/offset/0/limit/1")).body.total, 0);
    assert.deepEqual((await call(app, "GET", "/api/lab/tally")).body, { total: 0, results: [] });
  });
  await t.step("the old generation's keys are gone, the election's untouched", async () => {
    assert.deepEqual(await keysUnder(kv, labPrefix(1)), []);
    assert.ok((await keysUnder(kv, labPrefix(2))).length > 0);
    const now = await keysUnder(kv, []).then((keys) => keys.filter((k) => k[0] !== LAB_PREFIX));
    assert.deepEqual(now, election);
    assert.equal((await store.keyPage(0, 1)).total, 0);
  });
  await t.step("another process follows the reset on its next call", async () => {
    const theirs = await elsewhere.current();
    assert.equal((await theirs.keyPage(0, 1)).total, 0);
    assert.deepEqual(theirs.serverSeed(), (await lab.current()).serverSeed());
  });
  await t.step("registrations are taken again, up to the bound", async () => {
    for (const v of voters) {
      assert.equal((await call(app, "POST", "/api/lab/pki/key", v)).status, 201);
    }
    assert.equal((await call(app, "POST", "/api/lab/pki/key", makeVoters(1)[0])).status, 409);
  });
  await t.step("deleting a generation takes commits of at most the given size", async () => {
    await lab.current();
    let commits = 0;
    const counting = new Proxy(kv, {
      get(target, name) {
        if (name !== "atomic") {
          const value = Reflect.get(target, name);
          return typeof value === "function" ? value.bind(target) : value;
        }
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          let mutations = 0;
          const del = op.delete.bind(op);
          op.delete = (key) => {
            mutations++;
            return del(key);
          };
          op.commit = () => {
            commits++;
            assert.ok(mutations <= 5, `${mutations} deletions in one commit`);
            return commit();
          };
          return op;
        };
      },
    });
    const held = (await keysUnder(kv, labPrefix(2))).length;
    const deleted = await deleteGenerationsBefore(counting, 3, 5);
    assert.equal(deleted, held);
    assert.equal(commits, Math.ceil(held / 5));
    assert.deepEqual(await keysUnder(kv, labPrefix(2)), []);
  });
  kv.close();
});

Deno.test("the practice ledger's store keeps its key records within the lab's small budget", async () => {
  const kv = await Deno.openKv(":memory:");
  const lab = await createLabLedger(kv, { maxKeys: 500, maxVotes: 500 });
  const { capacity } = (await lab.current()).recordStats();
  assert.equal(capacity, Math.floor(LAB_RECORD_BUDGET / RECORD_BYTES));
  assert.ok(capacity * RECORD_BYTES <= 1024 * 1024);
  kv.close();
});

Deno.test("a request on the practice ledger that a reset overtakes is answered 409 lab_reset, never 500 or a lost 2xx", async (t) => {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const lab = await createLabLedger(kv, { maxKeys: 50, maxVotes: 50 });
  // The real verifier; when `overtake` is set, a reset runs to its end (old generation deleted)
  // while the request waits for its verdict, as a button press on another screen would.
  let overtake = false;
  const resetFirst = async () => {
    if (overtake) await lab.reset();
  };
  const verifier: Verifier = {
    ...testVerifier,
    verify: async (...args) => {
      await resetFirst();
      return await testVerifier.verify(...args);
    },
    precompute: async (key) => {
      await resetFirst();
      return await testVerifier.precompute(key);
    },
  };
  const app = createApp({ store, lab, verifier });
  const voters = makeVoters(4);
  for (const v of voters) {
    assert.equal((await call(app, "POST", "/api/lab/pki/key", v)).status, 201);
  }

  const refusedAsReset = (answer: Awaited<ReturnType<typeof call>>) => {
    assert.equal(answer.status, 409, JSON.stringify(answer.body));
    assert.equal(answer.body.error.code, "lab_reset");
    assert.match(answer.body.error.message, /started afresh while this request ran/);
  };
  await t.step("a vote whose generation is deleted while it is checked", async () => {
    overtake = true;
    const vote = signedVote(voters[0], ringFor(voters[0], voters, 3), "Lab: overtaken");
    refusedAsReset(await call(app, "POST", "/api/lab/vote", vote));
    overtake = false;
    assert.deepEqual((await call(app, "GET", "/api/lab/tally")).body, { total: 0, results: [] });
  });
  await t.step("a registration whose generation is deleted while its key is checked", async () => {
    overtake = true;
    refusedAsReset(await call(app, "POST", "/api/lab/pki/key", makeVoters(1)[0]));
    overtake = false;
    assert.equal((await call(app, "GET", "/api/lab/pki/key/offset/0/limit/1")).body.total, 0);
  });
  await t.step("sent again, both are taken by the fresh ledger", async () => {
    for (const v of voters) {
      assert.equal((await call(app, "POST", "/api/lab/pki/key", v)).status, 201);
    }
    const vote = signedVote(voters[1], ringFor(voters[1], voters, 3), "Lab: again");
    assert.equal((await call(app, "POST", "/api/lab/vote", vote)).status, 202);
  });
  await t.step("a read the reset overtakes is not answered from the deleted ledger", async () => {
    const voter = voters[2];
    await call(
      app,
      "POST",
      "/api/lab/vote",
      signedVote(voter, ringFor(voter, voters, 3), "Lab: read"),
    );
    await sealNextBlock(await lab.current(), Date.now());
    assert.equal((await call(app, "GET", "/api/lab/block/id/1/votes")).status, 200);
    // The request takes its generation, then a reset deletes it before the request reads it.
    const overtaken: LabLedger = {
      ...lab,
      open: async () => {
        const opened = await lab.open();
        await lab.reset();
        return opened;
      },
    };
    const racing = createApp({ store, lab: overtaken, verifier: testVerifier });
    for (const path of ["/api/lab/block/id/1/votes", "/api/lab/blocks", "/api/lab/tally"]) {
      refusedAsReset(await call(racing, "GET", path));
    }
    assert.equal((await call(app, "GET", "/api/lab/blocks")).body.blocks.length, 1);
  });
  kv.close();
});
