/**
 * The attack lab's actions against the real app over in-memory KV: its own voters and honest votes
 * on the practice ledger, every attack refused with the ledger unchanged, every lie caught by the
 * check it names, and the election's ledger byte for byte as it was.
 * @module
 */
import assert from "node:assert/strict";
import { ApiCallError, createApiClient } from "../../../lib/client/api_client.ts";
import { ATTACKS } from "../../../lib/client/lab/attacks.ts";
import type { SeenHeads } from "../../../lib/client/log/heads.ts";
import {
  LAB_VOTERS_KEY,
  labClients,
  LabFullError,
  type LabIO,
  prepareLab,
  runAttack,
  runLie,
  sameLedger,
  startFreshLedger,
} from "../../../lib/client/lab/lab.ts";
import { LIES } from "../../../lib/client/lab/lies.ts";
import { checkForkEvidence } from "../../../lib/protocol/head.ts";
import { VOTERS_KEY } from "../../../lib/client/voter/voters.ts";
import { createApp } from "../../../server/app.ts";
import { createLabLedger, LAB_PREFIX, type LabLedger } from "../../../server/store/lab.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore } from "../../../server/store/mod.ts";
import { call, makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";
import { MapStorage } from "../../helpers/map_storage.ts";
import { WORK_STAMP_KEY } from "../../../server/store/work.ts";

/** The app over a fresh in-memory KV with the election's store and the lab's practice ledger. */
async function appWithLab(limits = { maxKeys: 500, maxVotes: 500 }) {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const lab = await createLabLedger(kv, limits);
  const app = createApp({ store, lab });
  const io: LabIO = { storage: new MapStorage(), ...labClients(app.request), log: () => {} };
  return { kv, store, lab, app, io };
}

/** The lab's preparation, with the practice ledger's sealer run where the page would wait. */
function prepare(io: LabIO, lab: LabLedger, progress: (line: string) => void = () => {}) {
  return prepareLab(io, {
    count: 6,
    ringSize: 4,
    progress,
    sleep: async () => void await sealNextBlock(await lab.current(), Date.now()),
  });
}

Deno.test("the lab prepares itself, every attack is refused and every lie is caught", async (t) => {
  const { kv, lab, app, io } = await appWithLab();
  const storage = io.storage as MapStorage;
  const progress: string[] = [];
  const ready = await prepare(io, lab, (line) => progress.push(line));

  await t.step(
    "the lab's voters are its own, registered, and two honest votes are sealed",
    async () => {
      assert.equal(storage.getItem(VOTERS_KEY), null);
      assert.equal(storage.getItem(LAB_VOTERS_KEY)?.split(",").length, 6);
      assert.equal((await io.api.keys(0, 1)).total, 6);
      assert.equal((await io.api.tally()).total, 2);
      assert.ok(ready.input.boardVote);
      assert.ok(progress.some((line) => line.includes("casts an honest vote")));
    },
  );
  await t.step("all of it on the practice ledger: the election's is empty", async () => {
    const election = createApiClient({ fetch: app.request });
    assert.equal((await election.keys(0, 1)).total, 0);
    assert.deepEqual(await election.tally(), { total: 0, results: [] });
    assert.equal((await election.blockStatus()).height, 0);
  });
  await t.step("preparing again reuses the keys and the votes", async () => {
    await prepareLab(io, { count: 6, ringSize: 4, progress: () => {} });
    assert.equal((await io.api.keys(0, 1)).total, 6);
    assert.equal((await io.api.tally()).total, 2);
  });
  for (const attack of ATTACKS) {
    await t.step(`attack ${attack.id}: refused, ledger unchanged`, async () => {
      const run = await runAttack(io.api, { attack, input: ready.input });
      assert.equal(run.outcome, "refused");
      assert.equal(run.status, attack.status);
      assert.equal(run.code, attack.code);
      assert.ok(sameLedger(run.before, run.after));
    });
  }
  let seen: SeenHeads = { key: null, heads: [] };
  for (const lie of LIES) {
    await t.step(`lie ${lie.id}: caught as ${lie.caughtBy}`, async () => {
      const run = await runLie(io, { lie: lie.id, viewer: ready.viewer, seen });
      seen = run.seen;
      assert.equal(run.detected, true);
      assert.ok(run.failed.includes(lie.caughtBy), run.details.join("\n"));
      assert.equal(run.evidence !== null, lie.caughtBy === "fork" || run.failed.includes("fork"));
      if (run.evidence) {
        // Proven under the lab lens's key, never under the practice ledger's or the election's.
        assert.equal(checkForkEvidence(run.evidence).ok, true);
        assert.equal(run.evidence.key, (await io.lensApi("honest").serverKey()).key);
        assert.notEqual(run.evidence.key, (await io.api.serverKey()).key);
        assert.notEqual(run.evidence.key, (await call(app, "GET", "/api/server-key")).body.key);
      }
    });
  }
  kv.close();
});

/** Every KV entry outside the lab's prefix, with its versionstamp. */
async function electionKv(kv: Deno.Kv) {
  const out: [Deno.KvKey, unknown, string][] = [];
  for await (const e of kv.list({ prefix: [] })) {
    // The work stamp is the database's, moved by a vote of any ledger (protocol §5.3 "Work").
    if (e.key[0] === WORK_STAMP_KEY[0] && e.key.length === 1) continue;
    if (e.key[0] !== LAB_PREFIX) out.push([e.key, e.value, e.versionstamp]);
  }
  return out;
}

/** What the election shows: the tally, the key directory's first page and the blocks, as text. */
async function electionAnswers(app: { request: (path: string) => Response | Promise<Response> }) {
  const paths = ["/api/tally", "/api/pki/key/offset/0/limit/1", "/api/blocks", "/api/server-key"];
  return await Promise.all(paths.map(async (path) => await (await app.request(path)).text()));
}

Deno.test("the whole lab flow leaves the election's ledger byte for byte as it was", async (t) => {
  const { kv, store, lab, app, io } = await appWithLab();
  // An election under way: keys, one sealed vote, one vote waiting in the open block.
  const voters = makeVoters(5);
  for (const v of voters) assert.equal((await call(app, "POST", "/api/pki/key", v)).status, 201);
  const first = signedVote(voters[0], ringFor(voters[0], voters, 3), "Choice A");
  assert.equal((await call(app, "POST", "/api/vote", first)).status, 202);
  await sealNextBlock(store, Date.now());
  const second = signedVote(voters[1], ringFor(voters[1], voters, 3), "Choice B");
  assert.equal((await call(app, "POST", "/api/vote", second)).status, 202);
  const answers = await electionAnswers(app);
  const entries = await electionKv(kv);

  const ready = await prepare(io, lab);
  for (const attack of ATTACKS) await runAttack(io.api, { attack, input: ready.input });
  let seen: SeenHeads = { key: null, heads: [] };
  for (const lie of LIES) {
    seen = (await runLie(io, { lie: lie.id, viewer: ready.viewer, seen })).seen;
  }
  await startFreshLedger(io);
  await prepare(io, lab);

  await t.step("tally, key total, blocks and server key answer the same bytes", async () => {
    assert.deepEqual(await electionAnswers(app), answers);
    assert.doesNotMatch(answers[0], /Lab:/);
  });
  await t.step("every KV entry outside the lab's prefix is unchanged", async () => {
    assert.deepEqual(await electionKv(kv), entries);
  });
  await t.step("the lab's votes are on its own ledger", async () => {
    const tally = await io.api.tally();
    assert.deepEqual(tally.results.map((r) => r.payload).sort(), [
      "Lab: honest vote",
      "Lab: second honest vote",
    ]);
  });
  kv.close();
});

Deno.test("a full practice ledger stops the lab with LabFullError; a fresh one lets it run", async () => {
  const { kv, lab, io } = await appWithLab({ maxKeys: 8, maxVotes: 500 });
  await prepare(io, lab);
  // Another browser's lab needs six more keys: two fit, the third is refused.
  const other: LabIO = { ...io, storage: new MapStorage() };
  await assert.rejects(() => prepare(other, lab), (error: Error) => {
    assert.ok(error instanceof LabFullError, String(error));
    assert.match(error.message, /practice ledger is full: it holds at most 8 keys/);
    assert.match(error.message, /POST \/api\/lab\/reset/);
    return true;
  });
  await startFreshLedger(other);
  const ready = await prepare(other, lab);
  assert.equal((await other.api.keys(0, 1)).total, 6);
  assert.equal((await other.api.tally()).total, 2);
  assert.ok(ready.input.boardVote);
  kv.close();
});

Deno.test("a fresh practice ledger asked for again moments later is refused with the server's reason", async () => {
  const { kv, lab, io } = await appWithLab();
  await prepare(io, lab);
  await startFreshLedger(io);
  await prepare(io, lab);
  // Another browser asks for a fresh ledger a moment after this one did: what the page shows is
  // the refusal's message, and its 'Try again' prepares the ledger started moments ago.
  const other: LabIO = { ...io, storage: new MapStorage() };
  await assert.rejects(() => startFreshLedger(other), (error: Error) => {
    assert.ok(error instanceof ApiCallError, String(error));
    assert.equal(error.status, 429);
    assert.equal(error.code, "reset_too_soon");
    assert.ok(error.retryAfterSeconds! >= 1 && error.retryAfterSeconds! <= 10);
    assert.match(
      error.message,
      /^POST \/api\/lab\/reset answered 429: The practice ledger was started afresh moments ago.*: try again in \d+ s$/,
    );
    return true;
  });
  await prepare(other, lab);
  assert.equal((await other.api.keys(0, 1)).total, 12);
  kv.close();
});
