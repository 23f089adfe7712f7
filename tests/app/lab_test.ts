// The attack lab's actions against the real app over in-memory KV: it registers its own voters
// apart from the voting page's, casts its honest votes and waits for their block, then every
// attack is refused with the ledger unchanged and every lie is caught by the check it names.
import assert from "node:assert/strict";
import { createApiClient } from "../../lib/app/api_client.ts";
import { ATTACKS } from "../../lib/app/attacks.ts";
import type { SeenHeads } from "../../lib/app/heads.ts";
import {
  LAB_VOTERS_KEY,
  type LabIO,
  prepareLab,
  runAttack,
  runLie,
  sameLedger,
} from "../../lib/app/lab.ts";
import { LIES } from "../../lib/app/lies.ts";
import { checkForkEvidence } from "../../lib/protocol/head.ts";
import { VOTERS_KEY } from "../../lib/app/voters.ts";
import { createApp } from "../../server/app.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { createStore } from "../../server/store.ts";
import { MapStorage } from "../helpers/map_storage.ts";

Deno.test("the lab prepares itself, every attack is refused and every lie is caught", async (t) => {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const app = createApp({ store });
  const storage = new MapStorage();
  const io: LabIO = {
    storage,
    api: createApiClient({ fetch: app.request }),
    lensApi: (lie) => createApiClient({ fetch: app.request, lens: lie }),
    log: () => {},
  };
  const progress: string[] = [];
  const lab = await prepareLab(io, {
    count: 6,
    ringSize: 4,
    progress: (line) => progress.push(line),
    // The server's sealer, run by the test where the page would wait for the next tick.
    sleep: async () => void await sealNextBlock(store, Date.now()),
  });

  await t.step(
    "the lab's voters are its own, registered, and two honest votes are sealed",
    async () => {
      assert.equal(storage.getItem(VOTERS_KEY), null);
      assert.equal(storage.getItem(LAB_VOTERS_KEY)?.split(",").length, 6);
      assert.equal((await io.api.keys(0, 1)).total, 6);
      assert.equal((await io.api.tally()).total, 2);
      assert.ok(lab.input.boardVote);
      assert.ok(progress.some((line) => line.includes("casts an honest vote")));
    },
  );
  await t.step("preparing again reuses the keys and the votes", async () => {
    await prepareLab(io, { count: 6, ringSize: 4, progress: () => {} });
    assert.equal((await io.api.keys(0, 1)).total, 6);
    assert.equal((await io.api.tally()).total, 2);
  });
  for (const attack of ATTACKS) {
    await t.step(`attack ${attack.id}: refused, ledger unchanged`, async () => {
      const run = await runAttack(io.api, { attack, input: lab.input });
      assert.equal(run.outcome, "refused");
      assert.equal(run.status, attack.status);
      assert.equal(run.code, attack.code);
      assert.ok(sameLedger(run.before, run.after));
    });
  }
  let seen: SeenHeads = { key: null, heads: [] };
  for (const lie of LIES) {
    await t.step(`lie ${lie.id}: caught as ${lie.caughtBy}`, async () => {
      const run = await runLie(io, { lie: lie.id, viewer: lab.viewer, seen });
      seen = run.seen;
      assert.equal(run.detected, true);
      assert.ok(run.failed.includes(lie.caughtBy), run.details.join("\n"));
      assert.equal(run.evidence !== null, lie.caughtBy === "fork" || run.failed.includes("fork"));
      if (run.evidence) {
        // Proven under the lens key, which the lens answers; never under the server key.
        assert.equal(checkForkEvidence(run.evidence).ok, true);
        assert.equal(run.evidence.key, (await io.lensApi("honest").serverKey()).key);
        assert.notEqual(run.evidence.key, (await io.api.serverKey()).key);
      }
    });
  }
  kv.close();
});
