/**
 * The board's and the command line's one verdict on a fork-evidence file
 * (lib/client/audit/evidence.ts): either form proven, its key compared with the trusted one, and
 * anything else refused with the reason of the form its kind names.
 * @module
 */
import assert from "node:assert/strict";
import { checkEvidence, settleEvidence } from "../../../lib/client/audit/evidence.ts";
import { createApiClient } from "../../../lib/client/api_client.ts";
import { bytesToBase64 } from "../../../lib/protocol/bytes.ts";
import { createApp } from "../../../server/app.ts";
import { createStore } from "../../../server/store/mod.ts";
import { appendEmptyBlocks } from "../../helpers/ledger_builder.ts";
import { utf8 } from "../../../lib/protocol/bytes.ts";
import { signCheckpoint } from "../../../lib/protocol/checkpoint.ts";
import { sha256 } from "../../../lib/protocol/hash.ts";
import { forkEvidence, serverPublicKey, signHead } from "../../../lib/protocol/head.ts";
import { logForkEvidence } from "../../../lib/protocol/log_evidence.ts";

const seed = sha256(utf8("evidence verdict seed"));
const key = serverPublicKey(seed);
const other = serverPublicKey(sha256(utf8("another server")));

const head = (hash: string) => ({
  height: 2,
  hash,
  head_signature: signHead(seed, { height: 2, hash }),
});
const checkpoint = (size: number, root: number) =>
  signCheckpoint(
    { origin: "vote.example.org/log", size, root: new Uint8Array(32).fill(root) },
    seed,
  );

Deno.test("checkEvidence: two signed heads, trusted, untrusted or unknown key", () => {
  const evidence = forkEvidence(key, [head("aa".repeat(32)), head("bb".repeat(32))]);
  const fork = { kind: "fork", form: "heads", height: 2, key } as const;
  assert.deepEqual(checkEvidence(evidence, key.toUpperCase()), { ...fork, keyMatches: true });
  assert.deepEqual(checkEvidence(evidence, other), { ...fork, keyMatches: false });
  assert.deepEqual(checkEvidence(evidence, null), { ...fork, keyMatches: null });
});

Deno.test("checkEvidence: two checkpoints, each form, with the origin and sizes", () => {
  const sameSize = logForkEvidence(key, [checkpoint(4, 1), checkpoint(4, 2)]);
  assert.deepEqual(checkEvidence(sameSize, key), {
    kind: "fork",
    form: "same-size",
    origin: "vote.example.org/log",
    sizes: [4, 4],
    key,
    keyMatches: true,
  });
  const failed = logForkEvidence(key, [checkpoint(3, 1), checkpoint(6, 2)], []);
  assert.deepEqual(checkEvidence(failed, other), {
    kind: "fork",
    form: "failed-proof",
    origin: "vote.example.org/log",
    sizes: [3, 6],
    key,
    keyMatches: false,
  });
});

Deno.test("checkEvidence refuses what proves nothing, by the form its kind names", () => {
  const same = logForkEvidence(key, [checkpoint(4, 1), checkpoint(4, 1)]);
  assert.deepEqual(checkEvidence(same, key), {
    kind: "no-fork",
    reason: "Both checkpoints are of size 4 with the same root",
  });
  const heads = forkEvidence(key, [head("aa".repeat(32)), head("aa".repeat(32))]);
  assert.deepEqual(checkEvidence(heads, key), {
    kind: "no-fork",
    reason: "The heads name the same hash",
  });
  for (const value of [null, "fork", 7, [], { kind: "ringvote/v1/other" }]) {
    const verdict = checkEvidence(value, key);
    assert.equal(verdict.kind, "no-fork");
    assert.match((verdict as { reason: string }).reason, /^Not fork evidence: /);
  }
});

Deno.test("two checkpoints of two sizes are settled by the server's own consistency proof", async (t) => {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv, { now: () => 1_700_000_000_000 });
  const api = createApiClient({ fetch: createApp({ store }).request });
  const ask = api;
  const grow = (size: number) => appendEmptyBlocks(store, size);
  try {
    await grow(3);
    const small = await api.checkpoint();
    await grow(6);
    const large = await api.checkpoint();
    const serverKey = (await api.serverKey()).key;
    await t.step(
      "two honest checkpoints and a proof that fails: refuted by the server",
      async () => {
        const forged = logForkEvidence(serverKey, [small, large], [
          bytesToBase64(new Uint8Array(32)),
        ]);
        const checked = checkEvidence(forged, serverKey);
        assert.equal(checked.kind === "fork" && checked.form, "failed-proof");
        const settled = await settleEvidence(checked, forged, ask);
        assert.deepEqual(settled, {
          kind: "no-fork",
          reason: "the server's own consistency proof from 3 to 6 joins the checkpoints",
        });
        assert.equal((await settleEvidence(checked, forged, null)).kind, "unsettled");
        // Another ledger (or a proxy) refusing the proof settles nothing: its log is not theirs.
        const elsewhere = {
          checkpoint: () =>
            Promise.resolve(signCheckpoint(
              { origin: "other.example/log", size: 9, root: new Uint8Array(32) },
              store.serverSeed(),
            )),
          consistencyProof: () => Promise.reject(new Error("never asked")),
        };
        assert.equal((await settleEvidence(checked, forged, elsewhere)).kind, "unsettled");
      },
    );
    await t.step(
      "a checkpoint of another history: the server's proof fails too, proven",
      async () => {
        const origin = small.split("\n", 1)[0];
        const other = signCheckpoint(
          { origin, size: 6, root: new Uint8Array(32).fill(9) },
          store.serverSeed(),
        );
        const evidence = logForkEvidence(serverKey, [small, other], []);
        const checked = checkEvidence(evidence, serverKey);
        const settled = await settleEvidence(checked, evidence, ask);
        assert.equal(settled.kind, "fork");
      },
    );
    await t.step(
      "a size beyond the server asked: not settled, ask the server that signed it",
      async () => {
        const origin = small.split("\n", 1)[0];
        const beyond = signCheckpoint(
          { origin, size: 60, root: new Uint8Array(32).fill(9) },
          store.serverSeed(),
        );
        const evidence = logForkEvidence(serverKey, [small, beyond], []);
        const settled = await settleEvidence(checkEvidence(evidence, serverKey), evidence, ask);
        assert.equal(settled.kind, "unsettled");
      },
    );
  } finally {
    kv.close();
  }
});
