/**
 * The lab's split view for a newcomer against the real app over in-memory KV: a browser that has
 * never seen the practice ledger accepts the lens's forked history alone; one whose witness policy
 * requires the projector's witness — which cosigned the honest history — waits, then raises
 * `unwitnessed`, even with the projector's line copied onto the fork; the honest history under
 * that policy is witnessed at once; the projector refuses to cosign the fork.
 * @module
 */
import assert from "node:assert/strict";
import { labClients, type LabIO, prepareLab } from "../../../lib/client/lab/lab.ts";
import { HONEST_VIEW } from "../../../lib/client/lab/lies.ts";
import { LAB_WITNESS_NAME, labWitness, viewSplit } from "../../../lib/client/lab/split_view.ts";
import { readStoredVote } from "../../../lib/client/voter/panel_actions.ts";
import { COSIGNATURE_V1_TYPE, parseVerifierKey } from "../../../lib/protocol/note.ts";
import { createApp } from "../../../server/app.ts";
import { createLabLedger, type LabLedger } from "../../../server/store/lab.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore } from "../../../server/store/mod.ts";
import { call, makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";
import { MapStorage } from "../../helpers/map_storage.ts";

/** A prepared lab over a fresh app, and the inputs of {@link viewSplit}. */
async function preparedLab() {
  const kv = await Deno.openKv(":memory:");
  const lab = await createLabLedger(kv, { maxKeys: 50, maxVotes: 50 });
  const app = createApp({ store: await createStore(kv), lab });
  const io: LabIO = { storage: new MapStorage(), ...labClients(app.request), log: () => {} };
  const ready = await prepareLab(io, {
    count: 5,
    ringSize: 3,
    progress: () => {},
    sleep: async () => void await sealNextBlock(await lab.current(), Date.now()),
  });
  const stored = readStoredVote(io.storage, ready.viewer);
  const key = (await io.lensApi(HONEST_VIEW).serverKey()).key;
  return { kv, lab, app, io, stored, key };
}

/** One more vote on the practice ledger, sealed. */
async function sealAnotherVote(app: ReturnType<typeof createApp>, lab: LabLedger) {
  const voters = makeVoters(4);
  const store = await lab.current();
  for (const v of voters) await store.registerKey(v.key);
  const vote = signedVote(voters[0], ringFor(voters[0], voters, 3), "Later");
  assert.equal((await call(app, "POST", "/api/lab/vote", vote)).status, 202);
  await sealNextBlock(store, Date.now() + 10);
}

Deno.test("a newcomer alone accepts the split view; with the projector's witness it does not", async (t) => {
  const { kv, io, stored, key } = await preparedLab();
  const witness = labWitness();
  const now = Date.now();
  const run = await viewSplit(
    { honest: io.lensApi(HONEST_VIEW), split: io.lensApi("split-view") },
    { stored, key, witness, now, boundMs: 30_000 },
  );
  await t.step("without a witness: every check holds, the page stays green", () => {
    assert.equal(run.alone.verdict, "accepted", run.alone.details.join("\n"));
    assert.equal(run.alone.witness, null);
  });
  await t.step("with the projector's witness: waiting, then unwitnessed, refused", () => {
    assert.equal(run.witnessedAtFirst, "waiting");
    assert.equal(run.witnessed.witness, "unwitnessed");
    assert.equal(run.witnessed.verdict, "refused");
    assert.ok(
      run.witnessed.details.some((d) => d.startsWith("No witness vouches")),
      run.witnessed.details.join("\n"),
    );
    assert.ok(run.witnessed.details.some((d) => /made 30 s later/.test(d)));
  });
  await t.step("the honest history under the same policy is witnessed at once", () => {
    assert.equal(run.honestUnderPolicy, "witnessed");
  });
  await t.step("the projector cosigned the honest history and refuses the fork", async () => {
    const size = Number((await io.lensApi(HONEST_VIEW).checkpoint()).split("\n")[1]);
    assert.equal(run.projector.cosignedSize, size);
    assert.deepEqual(run.projector.refusal, { kind: "fork", form: "same-size" });
    const vkey = parseVerifierKey(run.projector.vkey);
    assert.equal(vkey.type, COSIGNATURE_V1_TYPE);
    assert.equal(vkey.name, LAB_WITNESS_NAME);
  });
  kv.close();
});

Deno.test("a block sealed after the projector cosigned: its refusal is the failed proof", async () => {
  const { kv, lab, app, io, stored, key } = await preparedLab();
  const honest = io.lensApi(HONEST_VIEW);
  const split = io.lensApi("split-view");
  // The chain grows between the projector's cosignature and the split view's first read.
  let grown = false;
  const growing = {
    ...split,
    checkpoint: async () => {
      if (!grown) {
        grown = true;
        await sealAnotherVote(app, lab);
      }
      return await split.checkpoint();
    },
  };
  const run = await viewSplit({ honest, split: growing }, { stored, key });
  assert.ok(grown);
  assert.deepEqual(run.projector.refusal, { kind: "fork", form: "failed-proof" });
  assert.equal(run.alone.verdict, "accepted", run.alone.details.join("\n"));
  assert.equal(run.witnessed.verdict, "refused");
  assert.equal(run.honestUnderPolicy, "witnessed");
  kv.close();
});
