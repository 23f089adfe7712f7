// Multi-process soak (protocol §5): two server processes on one KV file, both sealing every 200 ms,
// votes from concurrent clients to both, one process killed with SIGKILL in the middle and
// started again. Every acknowledged (202) vote is then in its promised block with a proof that
// verifies, and the independent auditor passes the whole ledger (contiguous heights, links,
// unique tags). Then 50 submissions of one tag across both processes: exactly one accepted.
// The servers' logs never hold a public key, tag, vote id or private key.
// `deno task test` runs 300 votes; `deno task soak` runs 2,000 (SOAK_VOTES).
import assert from "node:assert/strict";
import { createApiClient } from "../../lib/client/api_client.ts";
import { auditLedger } from "../../lib/client/audit/audit.ts";
import { bytesToBase64 } from "../../lib/protocol/bytes.ts";
import type { VoteSubmission } from "../../lib/protocol/schemas.ts";
import {
  call,
  makeVoters,
  proofVerifies,
  ringFor,
  signedVote,
} from "../helpers/ledger_fixtures.ts";
import { type ServerProcess, startServer } from "../helpers/server_process.ts";

const VOTES = Number(Deno.env.get("SOAK_VOTES") ?? 300);
const CLIENTS = 16;

async function waitForHeight(url: string, height: number, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while ((await call(url, "GET", "/api/block/status")).body.height < height) {
    if (Date.now() > deadline) throw new Error(`Height ${height} not reached at ${url}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

Deno.test({
  name: `${VOTES} votes to two processes on one KV file, one SIGKILLed and restarted: none lost`,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "ringvote-soak-" });
    const env = { KV_PATH: `${dir}/ledger.kv`, BLOCK_INTERVAL_MS: "200" };
    const servers: ServerProcess[] = [await startServer({ env }), await startServer({ env })];
    const retired: ServerProcess[] = [];
    try {
      const voters = makeVoters(VOTES + 1);
      for (let i = 0; i < voters.length; i += CLIENTS) {
        const batch = voters.slice(i, i + CLIENTS);
        const answers = await Promise.all(
          batch.map((v, j) => call(servers[j % 2].url, "POST", "/api/pki/key", { key: v.key })),
        );
        for (const a of answers) assert.equal(a.status, 201, JSON.stringify(a.body));
      }
      const votes = voters.slice(0, VOTES).map((v, i) =>
        signedVote(v, ringFor(v, voters, 2, i), `option ${i % 5}`)
      );

      const acknowledged: { vote: VoteSubmission; voteId: string; blockId: number }[] = [];
      const retriedLanded: VoteSubmission[] = [];
      let failedAttempts = 0;
      let next = 0;
      let kills = 0;
      const killAt = Math.floor(VOTES / 2);
      const killing = (async () => {
        while (next < killAt) await new Promise((r) => setTimeout(r, 10));
        servers[1].process.kill("SIGKILL");
        await servers[1].process.status;
        kills++;
        retired.push(servers[1]);
        servers[1] = await startServer({ env });
      })();
      const client = async (c: number) => {
        while (next < votes.length) {
          const vote = votes[next++];
          let answer;
          try {
            answer = await call(servers[c % 2].url, "POST", "/api/vote", vote);
          } catch {
            // The process died under this request: the vote may or may not have landed.
            failedAttempts++;
            answer = await call(servers[0].url, "POST", "/api/vote", vote);
            if (answer.status === 409) {
              retriedLanded.push(vote);
              continue;
            }
          }
          assert.equal(answer.status, 202, JSON.stringify(answer.body));
          acknowledged.push({ vote, ...answer.body });
        }
      };
      await Promise.all([...Array.from({ length: CLIENTS }, (_, c) => client(c)), killing]);

      const top = Math.max(...acknowledged.map((a) => a.blockId));
      for (const s of servers) await waitForHeight(s.url, top);
      let found = 0;
      for (const [i, a] of acknowledged.entries()) {
        const proof = await call(
          servers[i % 2].url,
          "GET",
          `/api/block/id/${a.blockId}/vote/${a.voteId}`,
        );
        assert.equal(proof.status, 200, JSON.stringify(proof.body));
        assert.deepEqual(proof.body.vote, {
          payload: a.vote.payload,
          signature: a.vote.signature,
          publicKeys: a.vote.publicKeys,
        });
        assert.ok(proofVerifies(proof.body), `proof of ${a.voteId}`);
        assert.equal(proof.body.block.height, a.blockId);
        found++;
      }
      // A vote whose first answer was lost with the process holds its tag in a sealed block.
      for (const vote of retriedLanded) {
        const tag = await call(servers[0].url, "GET", `/api/tag/${vote.tag}`);
        assert.equal(tag.status, 200);
        await waitForHeight(servers[0].url, tag.body.blockId);
      }

      // 50 submissions of one tag (new rings, new payloads) across both processes at once.
      const last = voters[VOTES];
      const sameTag = Array.from(
        { length: 50 },
        (_, i) => signedVote(last, ringFor(last, voters, 2, i), `attempt ${i}`),
      );
      const raced = await Promise.all(
        sameTag.map((v, i) => call(servers[i % 2].url, "POST", "/api/vote", v)),
      );
      assert.equal(raced.filter((r) => r.status === 202).length, 1, "one tag, one vote");
      for (const r of raced.filter((r) => r.status !== 202)) {
        assert.equal(r.body.error.code, "duplicate_tag");
      }
      const winner = raced.find((r) => r.status === 202)!.body;
      await waitForHeight(servers[0].url, winner.blockId);

      const report = await auditLedger(createApiClient({ fetch, baseUrl: servers[0].url }));
      assert.deepEqual(report.failures, []);
      assert.equal(report.votes, acknowledged.length + retriedLanded.length + 1);

      const logs = [...servers, ...retired].map((s) => s.output()).join("\n");
      const secrets = [
        ...votes.flatMap((v) => [v.tag, ...v.publicKeys]),
        ...acknowledged.map((a) => a.voteId),
        ...voters.map((v) => bytesToBase64(v.seed)),
      ];
      assert.ok(!secrets.some((s) => logs.includes(s)), "logs hold no key, tag, vote id or seed");
      assert.equal(kills, 1);
      console.log(
        `soak: ${VOTES} votes, ${acknowledged.length} acknowledged, ${found} found with valid ` +
          `proofs, ${retriedLanded.length} landed with the answer lost, ${failedAttempts} ` +
          `requests cut by the kill, ${kills} SIGKILL survived, ${report.height} blocks audited`,
      );
    } finally {
      for (const s of [...servers, ...retired]) await s.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
