// The attack lab's practice ledger (server/store/lab.ts, protocol §4.7) through HTTP over
// in-memory KV: the same API under /api/lab on keys of its own prefix, bounded in keys and votes
// (409 `lab_full`, exact under concurrent requests, the election's ledger unaffected), a reset
// that starts a fresh ledger with a new key and deletes the old one in bounded commits, every
// process following it; resets at once making one fresh ledger whose reset alone deletes, resets
// spaced by 10 s (429 `reset_too_soon`), an empty ledger left as it is; and the lab store's memory
// within its small budget.
import assert from "node:assert/strict";
import type { Hono } from "hono";
import { createApp } from "../../../server/app.ts";
import {
  createLabLedger,
  deleteGenerationsBefore,
  LAB_GENERATION_KEY,
  LAB_PREFIX,
  LAB_RECORD_BUDGET,
  LAB_RESET_INTERVAL_MS,
  type LabLedger,
  type LabOptions,
  labPrefix,
} from "../../../server/store/lab.ts";
import { WORK_STAMP_KEY } from "../../../server/store/work.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore, RECORD_BYTES } from "../../../server/store/mod.ts";
import { call, dumpKv, makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";
import { testVerifier } from "../../helpers/test_verifier.ts";
import type { Verifier } from "../../../server/verifier/types.ts";

/** The app over in-memory KV (the lab's seen through `wrap`) with a practice ledger of `options`. */
async function setup(options: LabOptions, wrap: (kv: Deno.Kv) => Deno.Kv = (kv) => kv) {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const lab = await createLabLedger(wrap(kv), options);
  const app = createApp({ store, lab, verifier: testVerifier });
  return { kv, store, lab, app };
}

/** Registers four keys on the practice ledger and seals a vote of one of them. */
async function fillLab(app: Hono, lab: LabLedger): Promise<void> {
  const voters = makeVoters(4);
  for (const v of voters) {
    assert.equal((await call(app, "POST", "/api/lab/pki/key", v)).status, 201);
  }
  const vote = signedVote(voters[0], ringFor(voters[0], voters, 3), "Lab: a");
  assert.equal((await call(app, "POST", "/api/lab/vote", vote)).status, 202);
  await sealNextBlock(await lab.current(), Date.now());
}

/**
 * `kv` with every commit's deletions counted: `deletions` holds, per commit that landed, how many
 * keys it deleted (commits that delete nothing are left out). A key deleted twice counts twice.
 */
function countingDeletes(kv: Deno.Kv): { kv: Deno.Kv; deletions: number[] } {
  const deletions: number[] = [];
  const counting = new Proxy(kv, {
    get(target, name) {
      if (name !== "atomic") {
        const value = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return () => {
        const op = target.atomic();
        const commit = op.commit.bind(op);
        const del = op.delete.bind(op);
        let deleting = 0;
        op.delete = (key) => {
          deleting++;
          return del(key);
        };
        op.commit = async () => {
          // A deletion lands a little late, as over a network: time for any other reset deleting
          // meanwhile to list the same keys.
          if (deleting > 0) await new Promise((resolve) => setTimeout(resolve, 2));
          const res = await commit();
          if (res.ok && deleting > 0) deletions.push(deleting);
          return res;
        };
        return op;
      };
    },
  });
  return { kv: counting, deletions };
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
    // The work stamp is the database's, set by a vote of any ledger (protocol §5.3 "Work").
    const outside = (await keysUnder(kv, [])).filter((key) =>
      key[0] !== LAB_PREFIX && key[0] !== WORK_STAMP_KEY[0]
    );
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
    const counting = countingDeletes(kv);
    const held = (await keysUnder(kv, labPrefix(2))).length;
    const deleted = await deleteGenerationsBefore(counting.kv, 3, 5);
    assert.equal(deleted, held);
    assert.equal(counting.deletions.length, Math.ceil(held / 5));
    for (const n of counting.deletions) assert.ok(n <= 5, `${n} deletions in one commit`);
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
  const lab = await createLabLedger(kv, { maxKeys: 50, maxVotes: 50, resetIntervalMs: 0 });
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
    // A practice ledger with nothing in it is not reset: one key makes it worth a reset.
    assert.equal((await call(app, "POST", "/api/lab/pki/key", voters[0])).status, 201);
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
    // The request takes its generation, then a reset deletes it before the request reads it
    // (a key registered first, so that there is something to reset).
    const overtaken: LabLedger = {
      ...lab,
      open: async () => {
        const opened = await lab.open();
        await (await lab.current()).registerKey(makeVoters(1)[0].key);
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

/** The sum of `counts`. */
function sum(counts: number[]): number {
  return counts.reduce((total, n) => total + n, 0);
}

Deno.test("50 resets at once start one fresh ledger, answer it to all, and delete each old key once", async (t) => {
  // Five deletions a commit: the winner's deletion takes many commits, time enough for any other
  // reset to list and delete the same keys, were it to try.
  let deletions: number[] = [];
  const { kv, lab, app } = await setup({ maxKeys: 50, maxVotes: 50, maxMutations: 5 }, (kv) => {
    const counting = countingDeletes(kv);
    deletions = counting.deletions;
    return counting.kv;
  });
  await fillLab(app, lab);
  const old = (await keysUnder(kv, labPrefix(1))).length;
  assert.ok(old > 20, `${old} keys`);

  const answers = await Promise.all(
    Array.from({ length: 50 }, () => call(app, "POST", "/api/lab/reset")),
  );
  await t.step("every reset is answered 200 with the one fresh ledger's status", async () => {
    for (const answer of answers) {
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(answer.body, answers[0].body);
    }
    assert.equal(answers[0].body.height, 0);
    assert.deepEqual((await call(app, "GET", "/api/lab/block/status")).body, answers[0].body);
    assert.equal(await lab.generation(), 2);
  });
  await t.step("the old generation is gone, each of its keys deleted once", async () => {
    assert.deepEqual(await keysUnder(kv, labPrefix(1)), []);
    assert.equal(sum(deletions), old);
    assert.deepEqual(await keysUnder(kv, labPrefix(3)), [], "no generation beyond the fresh one");
  });
  kv.close();
});

Deno.test("resets from ten processes at once: one commit wins, it alone deletes, the others answer its ledger", async () => {
  const base = await Deno.openKv(":memory:");
  const { kv, deletions } = countingDeletes(base);
  const store = await createStore(base);
  const options = { maxKeys: 50, maxVotes: 50, maxMutations: 5 };
  const processes = await Promise.all(
    Array.from({ length: 10 }, () => createLabLedger(kv, options)),
  );
  await fillLab(createApp({ store, lab: processes[0], verifier: testVerifier }), processes[0]);
  const old = (await keysUnder(base, labPrefix(1))).length;

  const answered = await Promise.all(
    processes.flatMap((lab) => Array.from({ length: 5 }, () => lab.reset())),
  );
  const fresh = await processes[0].current();
  assert.equal(await processes[0].generation(), 2);
  for (const answer of answered) assert.deepEqual(answer.serverSeed(), fresh.serverSeed());
  for (const lab of processes) {
    assert.deepEqual((await lab.current()).serverSeed(), fresh.serverSeed());
  }
  assert.equal((await fresh.keyPage(0, 1)).total, 0);
  assert.deepEqual(await keysUnder(base, labPrefix(1)), []);
  assert.equal(sum(deletions), old, "each old key deleted once, by the winner alone");
  assert.deepEqual(await keysUnder(base, labPrefix(3)), []);
  base.close();
});

Deno.test("a reset within the interval of the last is refused 429 with Retry-After, and writes nothing", async (t) => {
  let clock = 1_700_000_000_000;
  const { kv, lab, app } = await setup({ maxKeys: 50, maxVotes: 50, now: () => clock });
  await fillLab(app, lab);

  await t.step("the first generation, made at the first start, is reset at once", async () => {
    const first = await call(app, "POST", "/api/lab/reset");
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(await lab.generation(), 2);
    assert.deepEqual((await kv.get(LAB_GENERATION_KEY)).value, { generation: 2, startedAt: clock });
  });
  assert.equal((await call(app, "POST", "/api/lab/pki/key", makeVoters(1)[0])).status, 201);
  await t.step("3.5 s later: 429 reset_too_soon, Retry-After 7, nothing written", async () => {
    clock += 3_500;
    const before = await dumpKv(kv);
    const refused = await app.request("/api/lab/reset", {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("content-type"), "application/json");
    assert.equal(refused.headers.get("retry-after"), "7");
    const { error } = await refused.json();
    assert.equal(error.code, "reset_too_soon");
    assert.match(error.message, /at most once every 10 s: try again in 7 s$/);
    assert.equal(await lab.generation(), 2);
    assert.deepEqual(await dumpKv(kv), before, "no genesis, no key, no record");
    assert.equal((await call(app, "GET", "/api/lab/pki/key/offset/0/limit/1")).body.total, 1);
  });
  await t.step("a millisecond before the interval: Retry-After 1", async () => {
    clock += LAB_RESET_INTERVAL_MS - 3_500 - 1;
    await assert.rejects(lab.reset(), (error: Error & { headers?: Record<string, string> }) => {
      assert.equal(error.headers?.["Retry-After"], "1");
      return true;
    });
    assert.equal(await lab.generation(), 2);
  });
  await t.step(
    "once the interval is over, the reset is made and deletes the old ledger",
    async () => {
      clock += 1;
      const fresh = await call(app, "POST", "/api/lab/reset");
      assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
      assert.equal(fresh.body.height, 0);
      assert.equal(await lab.generation(), 3);
      assert.deepEqual(await keysUnder(kv, labPrefix(2)), []);
      assert.equal((await call(app, "GET", "/api/lab/pki/key/offset/0/limit/1")).body.total, 0);
    },
  );
  kv.close();
});

Deno.test("a reset of a practice ledger that holds nothing answers it as it is and writes nothing", async () => {
  let clock = 1_700_000_000_000;
  const { kv, lab, app } = await setup({ maxKeys: 50, maxVotes: 50, now: () => clock });
  for (const generation of [1, 2]) {
    const before = await dumpKv(kv);
    const status = (await call(app, "GET", "/api/lab/block/status")).body;
    const reset = await call(app, "POST", "/api/lab/reset");
    assert.equal(reset.status, 200, JSON.stringify(reset.body));
    assert.deepEqual(reset.body, status);
    assert.equal(await lab.generation(), generation);
    assert.deepEqual(await dumpKv(kv), before);
    // A key makes it worth a reset; the reset's own fresh ledger is empty again.
    assert.equal((await call(app, "POST", "/api/lab/pki/key", makeVoters(1)[0])).status, 201);
    clock += LAB_RESET_INTERVAL_MS;
    assert.equal((await call(app, "POST", "/api/lab/reset")).status, 200);
    assert.equal(await lab.generation(), generation + 1);
    clock += LAB_RESET_INTERVAL_MS;
  }
  kv.close();
});
