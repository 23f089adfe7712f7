// The edge profile (protocol §6): main.ts started with no `Worker` global and a 512 MB heap, as on
// Deno Deploy, registers keys, verifies votes on its own thread and seals them into a block whose
// proofs verify.
import assert from "node:assert/strict";
import { makeVoters, proofVerifies, ringFor, signedVote } from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";

const EDGE_MAIN = new URL("../helpers/edge_main.ts", import.meta.url);

Deno.test("without Worker and with a 512 MB heap, main.ts starts, verifies in-process and seals", async () => {
  const server = await startServer({
    entry: EDGE_MAIN,
    v8Flags: ["--max-old-space-size=512"],
    env: { BLOCK_INTERVAL_MS: "300" },
  });
  const api = async (path: string, body?: unknown) => {
    const res = await fetch(
      new URL(path, server.url),
      body === undefined ? {} : {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      },
    );
    return { status: res.status, body: await res.json() };
  };
  try {
    const voters = makeVoters(12);
    for (const v of voters) assert.equal((await api("/api/pki/key", { key: v.key })).status, 201);
    const votes = voters.slice(0, 6).map((v, i) =>
      signedVote(v, ringFor(v, voters, 8, i), `c${i}`)
    );
    const accepted = await Promise.all(votes.map((vote) => api("/api/vote", vote)));
    for (const a of accepted) assert.equal(a.status, 202, JSON.stringify(a.body));
    const unused = signedVote(voters[7], ringFor(voters[7], voters, 8), "signed");
    const forged = await api("/api/vote", { ...unused, payload: "forged" });
    assert.equal(forged.status, 400);
    for (const { body } of accepted) {
      let proof;
      do {
        await new Promise((resolve) => setTimeout(resolve, 100));
        proof = await api(`/api/block/id/${body.blockId}/vote/${body.voteId}`);
      } while (proof.status === 404 && proof.body.error.code === "block_not_sealed");
      assert.equal(proof.status, 200, JSON.stringify(proof.body));
      assert.ok(proofVerifies(proof.body));
    }
    assert.doesNotMatch(server.output(), /Worker|Error/);
  } finally {
    await server.stop();
  }
});
