/**
 * The bulletin board's state (islands/board/state.ts) shown a chain height it cannot serve — the
 * real application over in-memory KV, its status rewritten in process to 0, 1, 2^31, 2^32 and
 * 2^53 − 1: the first read ends, with the recount left open and a bounded number of requests, and
 * only blocks really served counted; the anonymity section reads its rings block by block. Nothing
 * is walked from 1 to the height claimed.
 * @module
 */
import assert from "node:assert/strict";
import { createApiClient } from "../../../lib/client/api_client.ts";
import { createBulletinState } from "../../../islands/board/state.ts";
import { readSealedRings } from "../../../lib/client/anonymity/sealed_rings.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { inMemoryApp } from "../../helpers/in_memory_app.ts";
import { makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";
import { tamperingTransport } from "../../helpers/tampering_proxy.ts";

/** Most requests the first read may make over a chain of two blocks, whatever height it claims. */
const MAX_REQUESTS = 60;

Deno.test("the board's first read ends whatever height the server claims", async (t) => {
  const { kv, store, app, api } = await inMemoryApp();
  try {
    const voters = makeVoters(3);
    for (const v of voters) await api.registerKey({ key: v.key });
    for (const [i, payload] of ["yes", "no"].entries()) {
      await api.submitVote(signedVote(voters[i], ringFor(voters[i], voters, 3), payload));
      await sealNextBlock(store, 1_700_000_000_000 + i * 60_000);
    }
    for (const height of [0, 1, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER]) {
      await t.step(`a status of height ${height}`, async () => {
        let requests = 0;
        const lying = tamperingTransport(app.request, (path, body) => {
          if (path === "/api/block/status") body.height = height;
        });
        const counting: typeof lying = (url, init) => {
          requests++;
          return lying(url, init);
        };
        const bulletin = createBulletinState(createApiClient({ fetch: counting }), {
          pollMs: 60_000,
        });
        let stop = () => {};
        await new Promise<void>((resolve) => (stop = bulletin.follow(resolve)));
        stop();
        assert.equal(bulletin.ready.value, true);
        assert.equal(bulletin.height.value, height);
        assert.ok(requests <= MAX_REQUESTS, `${requests} requests`);
        // The tally is recounted only when every claimed block was counted.
        if (height === 2) assert.notEqual(bulletin.recounted.value, null);
        if (height > 2) assert.equal(bulletin.recounted.value, null);
        // Only blocks served are counted (none above 2 exist), the others never walked.
        const counted = [...bulletin.counted.value.keys()].sort((a, b) => a - b);
        if (height <= 2) assert.deepEqual(counted, [1, 2].filter((h) => h <= height));
        else assert.ok(counted.every((h) => h === 1 || h === 2), counted.join(", "));
      });
    }
  } finally {
    kv.close();
  }
});

Deno.test("the anonymity section's rings are read block by block, never listed by the height", async () => {
  const read: number[] = [];
  const readBlock = (h: number) => {
    read.push(h);
    if (h > 2) return Promise.reject(new Error(`block ${h} is not served`));
    return Promise.resolve([]);
  };
  await assert.rejects(
    readSealedRings(readBlock, { height: Number.MAX_SAFE_INTEGER, known: new Map([[1, []]]) }),
    /block 3 is not served/,
  );
  assert.deepEqual(read, [2, 3]);
});
