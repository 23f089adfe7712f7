// The attack lab's lying-server lens (GET /api/lab/lens/{lie}/…, over the practice ledger) on the
// real app and in-memory KV: it never writes, honest requests answer byte for byte what they
// answered before, each lie is told, its key is derived from the practice ledger's seed, and a
// voter's own checks (lib/client/lab/lens_checks.ts) catch every one, naming the check that failed.
// It serves the log of each view — checkpoint and proofs over that view's blocks, signed by the
// lens key under an origin of its own — so a page that remembered the honest view's checkpoint and
// is shown the forked one holds checkpoint fork evidence, proven under the lens key only.
import assert from "node:assert/strict";
import { createApiClient } from "../../../lib/client/api_client.ts";
import { auditLedger } from "../../../lib/client/audit/audit.ts";
import { checkVoteView } from "../../../lib/client/lab/lens_checks.ts";
import { HONEST_VIEW, LIES } from "../../../lib/client/lab/lies.ts";
import type { SeenHeads } from "../../../lib/client/log/heads.ts";
import { checkBlocks } from "../../../lib/client/board/record_checks.ts";
import { checkForkEvidence, serverPublicKey, verifyHead } from "../../../lib/protocol/head.ts";
import { checkShownChain } from "../../../lib/client/log/chain_check.ts";
import { parseLogMemory, SEEN_LOG_KEY } from "../../../lib/client/log/log_memory.ts";
import { checkEvidence, settleEvidence } from "../../../lib/client/audit/evidence.ts";
import { logLeafHash } from "../../../lib/protocol/block_log.ts";
import { bytesToBase64, hexToBytes } from "../../../lib/protocol/bytes.ts";
import { openCheckpoint } from "../../../lib/protocol/checkpoint.ts";
import { checkLogForkEvidence } from "../../../lib/protocol/log_evidence.ts";
import { rootOfSize } from "../../../lib/protocol/merkle.ts";
import { verifyConsistency, verifyInclusion } from "../../../lib/protocol/merkle_verify.ts";
import {
  decodeBase64Strict,
  ED25519_TYPE,
  parseNote,
  verifierKey,
} from "../../../lib/protocol/note.ts";
import { LENS_ORIGIN_SUFFIX } from "../../../server/api/lying_lens.ts";
import { MapStorage } from "../../helpers/map_storage.ts";
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
  return { kv, app, stored, store, vote };
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
  await t.step("the lens's log takes no cosignature and shows no witnesses", async () => {
    const post = await call(app, "POST", "/api/lab/lens/honest/log/cosignature", {});
    assert.equal(post.status, 404);
    const witnesses = await call(app, "GET", "/api/lab/lens/honest/log/witnesses");
    assert.equal(witnesses.status, 404);
    assert.equal(witnesses.body.error.code, "not_found");
  });
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
    // The split view is caught only by a witness (tests/client/lab/split_view_test.ts); a browser
    // that remembers the honest view sees it as the fork it is.
    const caughtBy = lie.caughtBy === "witness cosignature" ? "fork" : lie.caughtBy;
    await t.step(`${lie.id} is caught as ${caughtBy}`, async () => {
      const lens = createApiClient({ fetch: app.request, ledger: "lab", lens: lie.id });
      const verdict = await checkVoteView(lens, { stored, key, seen: first.seen });
      assert.equal(verdict.detected, true);
      assert.ok(verdict.failed.includes(caughtBy), `${verdict.failed} / ${verdict.details}`);
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
        witnessed.failures.every((f) => f.kind.startsWith("remembered-")),
        witnessed.failures.map((f) => f.kind).join(", "),
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

/** The base64 hashes of a proof answer, decoded. */
function proofHashes(text: string): Uint8Array[] {
  return text === "" ? [] : text.slice(0, -1).split("\n").map((line) => decodeBase64Strict(line));
}

Deno.test("the lens serves the log of each view, signed by the lens key under its own origin", async (t) => {
  const { kv, app, store } = await ledger();
  const serverKey = (await call(app, "GET", "/api/lab/server-key")).body.key as string;
  const lensKey = serverPublicKey(lensSeed(store.serverSeed()));
  const real = await (await app.request("/api/lab/log/checkpoint")).text();
  const realOrigin = real.split("\n", 1)[0];
  const origin = realOrigin + LENS_ORIGIN_SUFFIX;
  const kvBefore = await dumpKv(kv);
  const roots = new Map<string, string>();

  for (const view of [HONEST_VIEW, ...LIES.map((lie) => lie.id)]) {
    await t.step(`${view}: checkpoint and proofs over the view's own blocks`, async () => {
      const at = (path: string) => `/api/lab/lens/${view}/log/${path}`;
      const res = await app.request(at("checkpoint"));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
      assert.equal(res.headers.get("cache-control"), "no-cache");
      const note = await res.text();
      const lensVkey = verifierKey(origin, ED25519_TYPE, hexToBytes(lensKey, 32));
      const checkpoint = openCheckpoint(note, lensVkey);
      assert.ok(checkpoint, "signed by the lens key under the lens's origin");
      assert.equal(parseNote(note).signatures.length, 1, "no cosignature");
      for (const name of [origin, realOrigin]) {
        const server = verifierKey(name, ED25519_TYPE, hexToBytes(serverKey, 32));
        assert.equal(openCheckpoint(note, server), false, "never by the server key");
      }
      // The blocks this view shows, and the tree they make.
      const { body } = await call(app, "GET", `/api/lab/lens/${view}/blocks`);
      const leaves = body.blocks.map((b: { hash: string }) => logLeafHash(b.hash));
      assert.equal(checkpoint.size, body.height + 1);
      assert.equal(leaves.length, checkpoint.size);
      assert.deepEqual(checkpoint.root, rootOfSize(leaves, checkpoint.size));
      roots.set(view, bytesToBase64(checkpoint.root));
      for (let h = 0; h < checkpoint.size; h++) {
        const proof = await app.request(at(`inclusion/${h}/${checkpoint.size}`));
        assert.equal(proof.headers.get("content-type"), "text/plain; charset=utf-8");
        assert.ok(verifyInclusion({
          index: h,
          size: checkpoint.size,
          leafHash: leaves[h],
          proof: proofHashes(await proof.text()),
          root: checkpoint.root,
        }));
      }
      for (let old = 0; old <= checkpoint.size; old++) {
        const proof = await app.request(at(`consistency/${old}/${checkpoint.size}`));
        assert.equal(proof.status, 200);
        assert.ok(verifyConsistency({
          oldSize: old,
          newSize: checkpoint.size,
          oldRoot: rootOfSize(leaves, old),
          newRoot: checkpoint.root,
          proof: proofHashes(await proof.text()),
        }));
      }
    });
  }
  await t.step("the honest views' root is the ledger's; the forked views' is another", () => {
    const ledgerRoot = real.split("\n")[2];
    for (const [view, root] of roots) {
      const forked = view === "fork-chain" || view === "split-view";
      assert.equal(root === ledgerRoot, !forked, view);
    }
    assert.equal(roots.get("fork-chain"), roots.get("split-view"), "one forked history");
  });
  await t.step("refusals as the ledger's log answers them", async () => {
    const cases: [string, number, string][] = [
      ["consistency/x/3", 400, "invalid_request"],
      ["consistency/-1/3", 400, "invalid_request"],
      ["consistency/3/2", 400, "invalid_request"],
      ["consistency/1/4", 404, "unknown_tree"],
      ["inclusion/1/x", 400, "invalid_request"],
      ["inclusion/3/3", 400, "invalid_request"],
      ["inclusion/0/4", 404, "unknown_tree"],
      ["tiles/0/000", 404, "not_found"],
    ];
    for (const [path, status, code] of cases) {
      const lens = await call(app, "GET", `/api/lab/lens/fork-chain/log/${path}`);
      assert.equal(lens.status, status, path);
      assert.match(lens.type ?? "", /^application\/json/);
      assert.equal(lens.body.error.code, code, path);
      const ledger = await call(app, "GET", `/api/lab/log/${path}`);
      assert.equal(ledger.status, status, `the ledger's own log: ${path}`);
    }
  });
  await t.step("nothing was written", async () => {
    assert.deepEqual(await dumpKv(kv), kvBefore);
  });
  kv.close();
});

Deno.test("a page that saw the honest view and is shown the forked one holds checkpoint fork evidence", async (t) => {
  for (const grown of [false, true]) {
    const form = grown ? "failed-proof" : "same-size";
    await t.step(`${form}: proven under the lens key, never the server key`, async () => {
      const { kv, app, store, vote } = await ledger();
      const storage = new MapStorage();
      const honest = createApiClient({ fetch: app.request, ledger: "lab", lens: HONEST_VIEW });
      const first = await checkShownChain(honest, { storage });
      assert.equal(first.fork, null);
      assert.deepEqual(first.alerts, []);
      const memory = parseLogMemory(storage.getItem(SEEN_LOG_KEY));
      assert.equal(memory.size, 3);
      if (grown) {
        await vote(3, "D");
        await sealNextBlock(store, Date.now() + 2);
      }
      const forked = createApiClient({ fetch: app.request, ledger: "lab", lens: "fork-chain" });
      const second = await checkShownChain(forked, { storage });
      assert.ok(second.fork && "checkpoints" in second.fork, "checkpoint fork evidence");
      assert.deepEqual(parseLogMemory(storage.getItem(SEEN_LOG_KEY)), memory, "memory kept");
      const evidence = JSON.parse(JSON.stringify(second.fork));
      const check = checkLogForkEvidence(evidence);
      assert.ok(check.ok, JSON.stringify(check));
      assert.equal(check.form, form);
      assert.deepEqual(check.sizes, grown ? [3, 4] : [3, 3]);
      const lensKey = serverPublicKey(lensSeed(store.serverSeed()));
      const labKey = (await call(app, "GET", "/api/lab/server-key")).body.key;
      assert.equal(checkEvidence(evidence, lensKey).kind, "fork");
      assert.deepEqual(
        [lensKey, labKey].map((key) => {
          const verdict = checkEvidence(evidence, key);
          return verdict.kind === "fork" && verdict.keyMatches;
        }),
        [true, false],
      );
      // A proof carries no signature: two sizes are settled by the lens's own answer, which fails.
      const settled = await settleEvidence(
        checkEvidence(evidence, lensKey),
        evidence,
        forked,
      );
      assert.equal(settled.kind, "fork");
      kv.close();
    });
  }
});
