// Two server processes sharing one Deno KV file, both sealing on a short timer, with keys and
// votes sent to both: contiguous key ids and heights, no lost, moved or doubled vote, every
// proof verifies whichever process answers it (protocol §5).
import assert from "node:assert/strict";
import { checkLink } from "../../lib/protocol/chain.ts";
import type { BlockRecord } from "../../lib/protocol/schemas.ts";
import {
  call,
  makeVoters,
  proofVerifies,
  ringFor,
  signedVote,
} from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";

async function waitForHeight(url: string, height: number, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await call(url, "GET", "/api/block/status");
    if (status.body.height >= height) return;
    if (Date.now() > deadline) throw new Error(`Height ${height} not reached at ${url}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

Deno.test("two processes on one KV file, both sealing: every accepted vote is proven", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-mp-" });
  const env = { KV_PATH: `${dir}/ledger.kv`, BLOCK_INTERVAL_MS: "40" };
  const a = await startServer({ env });
  const b = await startServer({ env });
  const servers = [a.url, b.url];
  try {
    const voters = makeVoters(48);
    const registered = await Promise.all(
      voters.map((v, i) =>
        call(servers[i % 2], "POST", "/api/pki/key", { key: v.key, name: "Voter" })
      ),
    );
    for (const r of registered) assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(
      registered.map((r) => r.body.id).sort((x, y) => x - y),
      Array.from({ length: 48 }, (_, i) => i + 1),
    );

    // Forty voters vote once each; eight more send the same vote to both processes at once.
    const votes = voters.map((v, i) => signedVote(v, ringFor(v, voters, 8, i), `option ${i % 3}`));
    const single = votes.slice(0, 40).map((vote, i) => ({ vote, server: servers[i % 2] }));
    const doubled = votes.slice(40).flatMap((vote) => servers.map((server) => ({ vote, server })));
    const answers = await Promise.all(
      [...single, ...doubled].map(async ({ vote, server }) => ({
        vote,
        answer: await call(server, "POST", "/api/vote", vote),
      })),
    );
    const accepted = answers.filter((x) => x.answer.status === 202);
    assert.equal(accepted.length, 48, "each tag accepted exactly once across both processes");
    for (const x of answers.filter((x) => x.answer.status !== 202)) {
      assert.equal(x.answer.status, 409);
      assert.equal(x.answer.body.error.code, "duplicate_tag");
    }

    const top = Math.max(...accepted.map((x) => x.answer.body.blockId));
    await waitForHeight(a.url, top);
    await waitForHeight(b.url, top);

    for (const [i, { vote, answer }] of accepted.entries()) {
      const { voteId, blockId } = answer.body;
      const proof = await call(servers[i % 2], "GET", `/api/block/id/${blockId}/vote/${voteId}`);
      assert.equal(proof.status, 200, JSON.stringify(proof.body));
      assert.equal(proof.body.block.height, blockId);
      assert.equal(proof.body.vote.signature, vote.signature);
      assert.ok(proofVerifies(proof.body));
    }

    const { body } = await call(a.url, "GET", "/api/blocks?from=0&limit=100");
    const blocks: BlockRecord[] = body.blocks;
    assert.deepEqual(
      blocks.map((x) => x.height),
      Array.from({ length: body.height + 1 }, (_, i) => i),
    );
    for (let i = 1; i < blocks.length; i++) assert.ok(checkLink(blocks[i], blocks[i - 1]));
    assert.equal(blocks.reduce((sum, x) => sum + x.size, 0), 48, "no vote lost or doubled");
    const tally = await call(b.url, "GET", "/api/tally");
    assert.equal(tally.body.total, 48);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await Deno.remove(dir, { recursive: true });
  }
});
