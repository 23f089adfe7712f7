// One size, one root (protocol §4.10), across processes and crashes: two server processes on one
// KV file seal every 200 ms while votes arrive, one is SIGKILLed and started again, and the
// checkpoints read from both all the while open under the one key and LOG_ORIGIN, never give two
// roots for one size, each extends the one before (proofs served by either process), and every
// root is the RFC 9162 root over the served block hashes.
import assert from "node:assert/strict";
import { logLeafHash } from "../../lib/protocol/block_log.ts";
import { base64ToBytes, bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import { type Checkpoint, openCheckpoint } from "../../lib/protocol/checkpoint.ts";
import { rootOfSize } from "../../lib/protocol/merkle.ts";
import { verifyConsistency } from "../../lib/protocol/merkle_verify.ts";
import { ED25519_TYPE, verifierKey } from "../../lib/protocol/note.ts";
import type { BlockRecord } from "../../lib/protocol/schemas.ts";
import { call, makeVoters, ringFor, signedVote } from "../helpers/ledger_fixtures.ts";
import { type ServerProcess, startServer } from "../helpers/server_process.ts";

const VOTES = 80;
const ORIGIN = "test.example/ringvote-log";

async function text(url: string, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(new URL(path, url));
  return { status: res.status, body: await res.text() };
}

Deno.test({
  name: "two processes sealing on one KV file, one SIGKILLed: never two roots for one size",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "ringvote-log-" });
    const env = { KV_PATH: `${dir}/ledger.kv`, BLOCK_INTERVAL_MS: "200", LOG_ORIGIN: ORIGIN };
    const servers: ServerProcess[] = [await startServer({ env }), await startServer({ env })];
    const retired: ServerProcess[] = [];
    const notes: string[] = [];
    try {
      const voters = makeVoters(VOTES);
      for (const [i, v] of voters.entries()) {
        const answer = await call(servers[i % 2].url, "POST", "/api/pki/key", { key: v.key });
        assert.equal(answer.status, 201, JSON.stringify(answer.body));
      }
      const votes = voters.map((v, i) =>
        signedVote(v, ringFor(v, voters, 2, i), `option ${i % 3}`)
      );

      let done = false;
      // Readers of both processes' checkpoints; a process being killed may not answer.
      const reader = async (s: number) => {
        while (!done) {
          try {
            const answer = await text(servers[s].url, "/api/log/checkpoint");
            if (answer.status === 200) notes.push(answer.body);
            else assert.fail(`checkpoint answered ${answer.status}: ${answer.body}`);
          } catch (error) {
            if (error instanceof assert.AssertionError) throw error;
            // The process died under this request.
          }
          await new Promise((r) => setTimeout(r, 30));
        }
      };
      const voting = (async () => {
        for (const [i, vote] of votes.entries()) {
          if (i === VOTES / 2) {
            servers[1].process.kill("SIGKILL");
            await servers[1].process.status;
            retired.push(servers[1]);
            servers[1] = await startServer({ env });
          }
          const answer = await call(servers[i % 2].url, "POST", "/api/vote", vote);
          assert.equal(answer.status, 202, JSON.stringify(answer.body));
          await new Promise((r) => setTimeout(r, 40));
        }
        // Let the last votes be sealed and read.
        await new Promise((r) => setTimeout(r, 1_000));
        done = true;
      })();
      await Promise.all([voting, reader(0), reader(1)]);

      const { key } = (await call(servers[0].url, "GET", "/api/server-key")).body;
      assert.equal((await call(servers[1].url, "GET", "/api/server-key")).body.key, key);
      const vkey = verifierKey(ORIGIN, ED25519_TYPE, hexToBytes(key));
      const bySize = new Map<number, Checkpoint>();
      for (const note of notes) {
        const checkpoint = openCheckpoint(note, vkey);
        assert.ok(checkpoint, `every checkpoint is signed by the one key under ${ORIGIN}`);
        const seen = bySize.get(checkpoint.size);
        if (seen) {
          assert.equal(bytesToHex(checkpoint.root), bytesToHex(seen.root), `size ${seen.size}`);
        }
        bySize.set(checkpoint.size, checkpoint);
      }
      const sizes = [...bySize.keys()].sort((a, b) => a - b);
      assert.ok(notes.length > 20 && sizes.length > 5, `${notes.length} notes, sizes ${sizes}`);

      const blocks: BlockRecord[] = [];
      const head = (await call(servers[0].url, "GET", "/api/block/status")).body.height;
      while (blocks.length <= head) {
        const page = await call(servers[0].url, "GET", `/api/blocks?from=${blocks.length}`);
        blocks.push(...page.body.blocks);
      }
      const leaves = blocks.map((b) => logLeafHash(b.hash));
      for (const [i, size] of sizes.entries()) {
        const { root } = bySize.get(size)!;
        assert.equal(bytesToHex(root), bytesToHex(rootOfSize(leaves, size)), `root of ${size}`);
        if (i === 0) continue;
        const old = bySize.get(sizes[i - 1])!;
        const proof = await text(servers[i % 2].url, `/api/log/consistency/${old.size}/${size}`);
        assert.equal(proof.status, 200);
        const hashes = proof.body === ""
          ? []
          : proof.body.trimEnd().split("\n").map((l) => base64ToBytes(l));
        const consistent = verifyConsistency({
          oldSize: old.size,
          newSize: size,
          oldRoot: old.root,
          newRoot: root,
          proof: hashes,
        });
        assert.equal(consistent, true, `${old.size} -> ${size}`);
      }
    } finally {
      for (const s of servers) await s.stop();
      for (const s of retired) await s.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
