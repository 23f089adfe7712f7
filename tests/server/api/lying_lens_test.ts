// The attack lab's lying-server lens (GET /api/lab/lens/{lie}/…, over the practice ledger) on the
// real app and in-memory KV: it never writes, honest requests answer byte for byte what they
// answered before, each lie is told, its key is derived from the practice ledger's seed, and a
// voter's own checks (lib/client/lab/lens_checks.ts) catch every one, naming the check that failed.
import assert from "node:assert/strict";
import { createApiClient } from "../../../lib/client/api_client.ts";
import { auditLedger } from "../../../lib/client/audit/audit.ts";
import { checkVoteView } from "../../../lib/client/lab/lens_checks.ts";
import { HONEST_VIEW, LIES } from "../../../lib/client/lab/lies.ts";
import { type SeenHeads } from "../../../lib/client/heads.ts";
import { checkBlocks } from "../../../lib/client/board/record_checks.ts";
import { checkForkEvidence, serverPublicKey, verifyHead } from "../../../lib/protocol/head.ts";
import { createApp } from "../../../server/app.ts";
import { lensSeed } from "../../../server/head_signer.ts";
import { createLabLedger } from "../../../server/store/lab.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore } from "../../../server/store/mod.ts";
import { call, dumpKv, makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";

/**
 * Two sealed blocks of the practice ledger: block 1 holds the lab voter's vote and another,
 * block 2 one more vote. `store` is the practice ledger's.
 */
async function ledger() {
  const kv = await Deno.openKv(":memory:");
  const lab = await createLabLedger(kv, { maxKeys: 50, maxVotes: 50 });
  const app = createApp({ store: await createStore(kv), lab });
  const store = await lab.current();
  const voters = makeVoters(5);
  for (const v of voters) await store.registerKey(v.key);
  const mine = signedVote(voters[0], ringFor(voters[0], voters, 3), "Choice A");
  const accepted = await call(app, "POST", "/api/lab/vote", mine);
  const vote = (i: number, payload: string) =>
    call(
      app,
      "POST",
      "/api/lab/vote",
      signedVote(voters[i], ringFor(voters[i], voters, 3), payload),
    );
  await vote(1, "B");
  await sealNextBlock(store, Date.now());
  await vote(2, "C");
  await sealNextBlock(store, Date.now() + 1);
  const stored = {
    voteId: accepted.body.voteId as string,
    blockId: String(accepted.body.blockId),
    voteContent: mine.payload,
    voteSignature: mine.signature,
  };
  return { kv, app, stored, store };
}

const HONEST_PATHS = (voteId: string) => [
  "/api/lab/block/status",
  "/api/lab/blocks",
  "/api/lab/block/hash/id/1",
  `/api/lab/block/id/1/vote/${voteId}`,
  "/api/lab/block/id/1/votes",
  "/api/lab/tally",
  "/api/lab/server-key",
];

/** `path` of the practice ledger as the lens telling `view` mirrors it. */
const throughLens = (path: string, view: string) =>
  path.replace("/api/lab/", `/api/lab/lens/${view}/`);

Deno.test("the lens tells each lie only where asked, never writes, and leaves honest reads alone", async (t) => {
  const { kv, app, stored } = await ledger();
  const honestText = async () =>
    await Promise.all(
      HONEST_PATHS(stored.voteId).map(async (p) => await (await app.request(p)).text()),
    );
  const before = await honestText();
  const kvBefore = await dumpKv(kv);

  for (const view of [HONEST_VIEW, ...LIES.map((lie) => lie.id)]) {
    await t.step(`${view}: every mirrored read answers`, async () => {
      for (const path of HONEST_PATHS(stored.voteId)) {
        const lens = throughLens(path, view);
        const res = await app.request(lens);
        const dropped = view === "drop-vote" && path.includes("/vote/");
        assert.equal(res.status, dropped ? 404 : 200, lens);
        assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
        await res.body?.cancel();
      }
    });
  }
  await t.step("writes and unknown lies are refused under the lens", async () => {
    const post = await call(app, "POST", "/api/lab/lens/drop-vote/vote", { payload: "x" });
    assert.equal(post.status, 404);
    const unknown = await call(app, "GET", "/api/lab/lens/tell-the-truth/block/status");
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, "unknown_lie");
  });
  await t.step(
    "the lens never passes on the log's checkpoints, signed by the ledger's key",
    async () => {
      for (
        const path of ["/api/lens/honest/log/checkpoint", "/api/lab/lens/fork-chain/log/checkpoint"]
      ) {
        const res = await call(app, "GET", path);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, "not_found");
      }
      assert.equal((await app.request("/api/log/checkpoint")).status, 200);
    },
  );
  await t.step("the lab's lens reads the practice ledger only", async () => {
    const lab = await call(app, "GET", "/api/lab/lens/honest/tally");
    assert.equal(lab.body.total, 3);
    const election = await call(app, "GET", "/api/lens/honest/tally");
    assert.deepEqual(election.body, { total: 0, results: [] });
    const across = await call(app, "GET", "/api/lens/honest/lab/tally");
    assert.equal(across.status, 404);
    assert.equal(across.body.error.code, "not_found");
  });
  await t.step("KV unchanged, honest answers byte for byte the same", async () => {
    assert.deepEqual(await dumpKv(kv), kvBefore);
    assert.deepEqual(await honestText(), before);
  });
  kv.close();
});

/** Every `head_signature` anywhere in `body`, with the head it signs. */
function headsIn(body: unknown): { height: number; hash: string; head_signature: string }[] {
  if (Array.isArray(body)) return body.flatMap(headsIn);
  if (body === null || typeof body !== "object") return [];
  const record = body as Record<string, unknown>;
  const own = typeof record.head_signature === "string"
    ? [record as { height: number; hash: string; head_signature: string }]
    : [];
  return [...own, ...Object.values(record).flatMap(headsIn)];
}

Deno.test("no head served through the lens verifies under the server key, all under the lens key", async (t) => {
  const { kv, app, stored, store } = await ledger();
  const serverKey = (await call(app, "GET", "/api/lab/server-key")).body.key as string;
  const lensKey = serverPublicKey(lensSeed(store.serverSeed()));
  assert.notEqual(lensKey, serverKey);
  assert.notEqual(lensKey, (await call(app, "GET", "/api/lens/honest/server-key")).body.key);
  for (const view of [HONEST_VIEW, ...LIES.map((lie) => lie.id)]) {
    await t.step(`${view}: the lens answers its own key and signs every head with it`, async () => {
      const answered = await call(app, "GET", `/api/lab/lens/${view}/server-key`);
      assert.deepEqual(answered.body, { key: lensKey });
      let count = 0;
      for (const path of HONEST_PATHS(stored.voteId)) {
        const { body } = await call(app, "GET", throughLens(path, view));
        for (const head of headsIn(body)) {
          count++;
          assert.equal(verifyHead(serverKey, head), false, `${path} at ${head.height}`);
          assert.equal(verifyHead(lensKey, head), true, `${path} at ${head.height}`);
        }
      }
      assert.ok(count >= 4, `${count} heads seen`);
    });
  }
  kv.close();
});

Deno.test("a voter's own checks catch every lie and name the check that failed", async (t) => {
  const { kv, app, stored } = await ledger();
  const honest = createApiClient({ fetch: app.request, ledger: "lab", lens: HONEST_VIEW });
  const { key } = await honest.serverKey();
  // What this browser saw through the lens telling no lie first.
  const first = await checkVoteView(honest, { stored, key, seen: { key: null, heads: [] } });
  await t.step("the honest server passes every check", () => {
    assert.deepEqual(first.failed, []);
    assert.equal(first.detected, false);
    assert.deepEqual(first.seen.heads.map((h) => h.height), [1, 2]);
  });
  for (const lie of LIES) {
    await t.step(`${lie.id} is caught as ${lie.caughtBy}`, async () => {
      const lens = createApiClient({ fetch: app.request, ledger: "lab", lens: lie.id });
      const verdict = await checkVoteView(lens, { stored, key, seen: first.seen });
      assert.equal(verdict.detected, true);
      assert.ok(verdict.failed.includes(lie.caughtBy), `${verdict.failed} / ${verdict.details}`);
    });
  }
  await t.step("the forked chain is consistent in itself and validly signed", async () => {
    const lens = createApiClient({ fetch: app.request, ledger: "lab", lens: "fork-chain" });
    const { items } = await lens.blocks(0, 100);
    assert.ok(checkBlocks(items).every((c) => c.hashOk && c.link === "ok"));
    for (const block of items) {
      assert.ok(verifyHead(key, { ...block, head_signature: block.head_signature! }));
    }
    const honestBlocks = (await honest.blocks(0, 100)).items;
    assert.notEqual(items[1].hash, honestBlocks[1].hash);
    assert.equal(items[0].hash, honestBlocks[0].hash, "genesis is shared");
  });
  await t.step(
    "the forked chain passes the whole audit; only remembered heads fail it",
    async () => {
      const lens = createApiClient({ fetch: app.request, ledger: "lab", lens: "fork-chain" });
      const fresh = await auditLedger(lens);
      assert.deepEqual(fresh.failures, []);
      const witnessed = await auditLedger(lens, { trusted: { key, heads: first.seen.heads } });
      assert.equal(witnessed.ok, false);
      assert.ok(
        witnessed.failures.every((line) => /remembered|trusted/.test(line)),
        witnessed.failures.join("\n"),
      );
    },
  );
  await t.step("the fork's evidence checks out with the lens key alone", async () => {
    const lens = createApiClient({ fetch: app.request, ledger: "lab", lens: "fork-chain" });
    const seen: SeenHeads = first.seen;
    const verdict = await checkVoteView(lens, { stored, key, seen });
    // The forked chain also fails to lead back to the heads remembered through `honest`.
    assert.deepEqual(verdict.failed, ["fork", "history link"]);
    assert.ok(verdict.evidence);
    assert.equal(verdict.evidence.key, key);
    const practice = createApiClient({ fetch: app.request, ledger: "lab" });
    assert.notEqual(key, (await practice.serverKey()).key);
    assert.equal(checkForkEvidence(JSON.parse(JSON.stringify(verdict.evidence))).ok, true);
  });
  kv.close();
});
