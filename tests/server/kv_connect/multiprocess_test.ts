// Two main.ts processes on one remote database, as several instances behind a load balancer run on
// hosted Deno KV: `KV_PATH` a KV Connect URL with `DENO_KV_ACCESS_TOKEN`, each round trip held a few
// milliseconds, both sealing. Keys registered at both get ids 1..n with no gap, each tag is accepted
// once across both, every accepted vote is sealed exactly once and proven by either process.
import assert from "node:assert/strict";
import { checkLink } from "../../../lib/protocol/chain.ts";
import type { BlockRecord } from "../../../lib/protocol/schemas.ts";
import { startKvConnectServer } from "../../helpers/kv_connect_server.ts";
import {
  call,
  makeVoters,
  proofVerifies,
  ringFor,
  signedVote,
} from "../../helpers/ledger_fixtures.ts";
import { startServer } from "../../helpers/server_process.ts";

const VOTERS = 48;

async function waitForHeight(url: string, height: number) {
  for (let i = 0; i < 1200; i++) {
    if ((await call(url, "GET", "/api/block/status")).body.height >= height) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Height ${height} not reached at ${url}`);
}

Deno.test("two main.ts processes on one KV Connect database: every accepted vote sealed once", async () => {
  const kvServer = await startKvConnectServer();
  kvServer.delayMs = 2;
  const env = { ...kvServer.env(), BLOCK_INTERVAL_MS: "150" };
  const processes = [await startServer({ env }), await startServer({ env })];
  const urls = processes.map((p) => p.url);
  try {
    const voters = makeVoters(VOTERS);
    const tripsBefore = kvServer.roundTrips;
    const registered = await Promise.all(
      voters.map((v, i) => call(urls[i % 2], "POST", "/api/pki/key", { key: v.key })),
    );
    for (const r of registered) assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(
      registered.map((r) => r.body.id).sort((x, y) => x - y),
      Array.from({ length: VOTERS }, (_, i) => i + 1),
    );

    // Forty voters vote once; eight send the same vote to both processes at once.
    const votes = voters.map((v, i) => signedVote(v, ringFor(v, voters, 8, i), `option ${i % 3}`));
    const single = votes.slice(0, 40).map((vote, i) => ({ vote, url: urls[i % 2] }));
    const doubled = votes.slice(40).flatMap((vote) => urls.map((url) => ({ vote, url })));
    const answers = await Promise.all(
      [...single, ...doubled].map(async ({ vote, url }) => ({
        vote,
        url,
        answer: await call(url, "POST", "/api/vote", vote),
      })),
    );
    const accepted = answers.filter((x) => x.answer.status === 202);
    assert.equal(accepted.length, VOTERS, "each tag accepted exactly once across both processes");
    for (const x of answers.filter((x) => x.answer.status !== 202)) {
      assert.equal(x.answer.status, 409, JSON.stringify(x.answer.body));
      assert.equal(x.answer.body.error.code, "duplicate_tag");
    }

    const top = Math.max(...accepted.map((x) => x.answer.body.blockId));
    await Promise.all(urls.map((url) => waitForHeight(url, top)));
    for (const [i, { vote, answer }] of accepted.entries()) {
      const { voteId, blockId } = answer.body;
      const proof = await call(urls[i % 2], "GET", `/api/block/id/${blockId}/vote/${voteId}`);
      assert.equal(proof.status, 200, JSON.stringify(proof.body));
      assert.equal(proof.body.vote.signature, vote.signature);
      assert.ok(proofVerifies(proof.body));
    }

    const { body } = await call(urls[0], "GET", "/api/blocks?from=0&limit=100");
    const blocks: BlockRecord[] = body.blocks;
    assert.deepEqual(
      blocks.map((b) => b.height),
      Array.from({ length: body.height + 1 }, (_, i) => i),
    );
    for (let i = 1; i < blocks.length; i++) assert.ok(checkLink(blocks[i], blocks[i - 1]));
    const sealed = blocks.reduce((sum, b) => sum + b.size, 0);
    assert.equal(sealed, VOTERS, "no vote lost or doubled");
    assert.equal((await call(urls[1], "GET", "/api/tally")).body.total, VOTERS);
    console.log(
      `Two processes, one KV Connect database: ${VOTERS} keys registered (ids 1..${VOTERS}), ` +
        `${answers.length} vote requests, ${accepted.length} answered 202, ` +
        `${answers.length - accepted.length} 409, ${sealed} sealed in ${
          blocks.length - 1
        } blocks; ` +
        `${kvServer.roundTrips - tripsBefore} round trips in all, sealers included`,
    );
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    await kvServer.close();
  }
});
