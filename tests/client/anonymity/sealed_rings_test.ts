/**
 * The anonymity lens over the real API (lib/client/anonymity/sealed_rings.ts, anonymity_lens.ts),
 * read through the API client as the pages read it: every page of a block's votes read, sealed
 * blocks read once, a closed set of real ballots leaving one possible signer.
 * @module
 */
import assert from "node:assert/strict";
import { runLens } from "../../../lib/client/anonymity/anonymity_lens.ts";
import { createApiClient } from "../../../lib/client/api_client.ts";
import {
  allBallots,
  lensSource,
  readSealedRings,
} from "../../../lib/client/anonymity/sealed_rings.ts";
import { MAX_PAGE_LIMIT } from "../../../lib/protocol/schemas.ts";
import { createApp } from "../../../server/app.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore } from "../../../server/store/mod.ts";
import { makeVoters, signedVote, type TestVoter } from "../../helpers/ledger_fixtures.ts";

Deno.test("the lens reads every sealed ballot's ring once and analyses the record", async (t) => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    const api = createApiClient({ fetch: createApp({ store }).request });
    const voters = makeVoters(MAX_PAGE_LIMIT + 3);
    for (const v of voters) await api.registerKey({ key: v.key });
    const cast = async (signer: TestVoter, ring: TestVoter[]) =>
      (await api.submitVote(signedVote(signer, ring, "yes"))).voteId;

    // Block 1: more votes than one page holds, each over its signer and the next voter.
    const first: { id: string; ring: string[] }[] = [];
    for (let i = 0; i <= MAX_PAGE_LIMIT; i++) {
      const ring = [voters[i], voters[i + 1]];
      first.push({ id: await cast(voters[i], ring), ring: ring.map((v) => v.key) });
    }
    await sealNextBlock(store, 1_700_000_000_000);
    const source = lensSource(api);
    const reads: number[] = [];
    const counted = (h: number) => {
      reads.push(h);
      return source.readBlock(h);
    };

    await t.step("a block's ballots, every page of them, in leaf order", async () => {
      const ballots = await source.readBlock(1);
      assert.equal(ballots.length, MAX_PAGE_LIMIT + 1);
      assert.deepEqual(
        new Map(ballots.map((b) => [b.id, b.ring])),
        new Map(first.map((b) => [b.id, b.ring])),
      );
      const keys = voters.map((v) => v.key);
      assert.deepEqual(await source.readKeys(0), keys);
      assert.deepEqual(await source.readKeys(MAX_PAGE_LIMIT), keys.slice(MAX_PAGE_LIMIT));
    });

    let rings = await readSealedRings(counted, { height: 1 });
    // Block 2: the last voter over itself and voter 101, the top of block 1's chain.
    const last = voters.length - 1;
    const closing = await cast(voters[last], [voters[last], voters[MAX_PAGE_LIMIT + 1]]);
    await sealNextBlock(store, 1_700_000_060_000);

    await t.step("a new height reads only the new block", async () => {
      const progress: string[] = [];
      rings = await readSealedRings(counted, {
        height: 2,
        known: rings,
        onProgress: (done, total) => progress.push(`${done}/${total}`),
      });
      assert.deepEqual(reads, [1, 2]);
      assert.deepEqual(progress, ["0/1", "1/1"]);
      assert.equal(allBallots(rings).length, MAX_PAGE_LIMIT + 2);
    });

    await t.step("the analysis of the record read through the API", () => {
      const result = runLens({
        seq: 7,
        ballots: allBallots(rings),
        reveals: [],
        directory: voters.map((v) => v.key),
      });
      assert.equal(result.seq, 7);
      assert.ok(result.base.consistent);
      if (!result.base.consistent) return;
      // Ballots 0..100 over {i, i+1} and the last over {102, 101}: 102 ballots over 103 keys,
      // each free to shift by one, so every ballot keeps both members.
      assert.ok(result.base.ballots.every((b) => b.effectiveAnonymity === 2));
      const revealed = runLens({
        seq: 8,
        ballots: allBallots(rings),
        reveals: [{ key: voters[1].key, ballot: first[0].id }],
        directory: voters.map((v) => v.key),
      });
      assert.ok(revealed.revealed?.consistent);
      if (!revealed.revealed?.consistent) return;
      // Key 1 cast ballot 0: ballot 1 can only be key 2's, ballot 2 key 3's, and so on up the
      // chain to the closing ballot, left only its signer.
      assert.ok(revealed.revealed.ballots.every((b) => b.effectiveAnonymity === 1));
      const closed = revealed.revealed.ballots.find((b) => b.id === closing)!;
      assert.deepEqual(closed.possibleSigners, [voters[last].key]);
      assert.equal(revealed.changes.length, MAX_PAGE_LIMIT + 2);
      assert.equal(revealed.decoy?.slots, 2 * (MAX_PAGE_LIMIT + 2));
      // Rings of two say nothing about ring selection (protocol §8.2): nothing is tested.
      assert.equal(revealed.decoy?.rings, 0);
      assert.equal(revealed.decoy?.pValue, 1);
      const noDecoy = runLens({ seq: 9, ballots: allBallots(rings), reveals: [], directory: null });
      assert.equal(noDecoy.decoy, null);
    });
  } finally {
    kv.close();
  }
});
