// Votes accepted per second through HTTP: one server process on a Deno KV file, ring size 8,
// 16 requests in flight, every vote fully verified and durably committed before its 202.
// Each iteration posts 100 fresh votes; votes/s = 100 / time per iteration.
// Run: deno bench -A bench/ingest_bench.ts
import { makeVoters, ringFor, signedVote } from "../tests/helpers/ledger_fixtures.ts";
import { startServer } from "../tests/helpers/server_process.ts";

const BATCH = 100;
const IN_FLIGHT = 16;
const RING_SIZE = 8;

const dir = await Deno.makeTempDir({ prefix: "ringvote-ingest-bench-" });
const server = await startServer({
  env: { KV_PATH: `${dir}/ledger.kv`, BLOCK_INTERVAL_MS: "1000" },
});
const voters = makeVoters(600);
for (let i = 0; i < voters.length; i += 50) {
  await Promise.all(
    voters.slice(i, i + 50).map((v) =>
      fetch(new URL("/api/pki/key", server.url), {
        method: "POST",
        body: JSON.stringify({ key: v.key, name: "Voter" }),
      }).then((res) => res.body?.cancel())
    ),
  );
}
let next = 0;
const rates: number[] = [];
globalThis.addEventListener("unload", () => {
  console.log(`votes/s per iteration: ${rates.map((r) => r.toFixed(1)).join(", ")}`);
});

async function postAll(bodies: string[]): Promise<void> {
  let at = 0;
  const worker = async () => {
    while (at < bodies.length) {
      const body = bodies[at++];
      const res = await fetch(new URL("/api/vote", server.url), { method: "POST", body });
      await res.body?.cancel();
      if (res.status !== 202) throw new Error(`Vote refused with ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

Deno.bench({
  name: `POST /api/vote: ${BATCH} ring-${RING_SIZE} votes, ${IN_FLIGHT} in flight`,
  n: 3,
  warmup: 1,
  async fn(b) {
    if (next + BATCH > voters.length) throw new Error("Not enough voters for another iteration");
    const signers = voters.slice(next, next + BATCH);
    next += BATCH;
    const bodies = signers.map((v, i) =>
      JSON.stringify(signedVote(v, ringFor(v, voters, RING_SIZE, next + i), `option ${i % 4}`))
    );
    b.start();
    const started = performance.now();
    await postAll(bodies);
    rates.push(BATCH / ((performance.now() - started) / 1000));
    b.end();
  },
});

globalThis.addEventListener("unload", () => {
  server.process.kill("SIGTERM");
  Deno.removeSync(dir, { recursive: true });
});
