// Sustained vote ingest over HTTP against the real server (main.ts in its own process, the pool
// of verification workers, a Deno KV file, the sealer running every second): ring-8 votes, 16
// requests in flight, each vote verified and durably committed before its 202 (protocol §5).
// Reports accepted votes/s and p50/p99 latency, next to the straightforward verifier's
// single-thread rate (bench/baseline_lsag.ts) measured in this same run on the same signatures.
//
// Two phases, each with its own voters: "steady" after registration and a warm-up, and "after a
// restart" on the same KV file with cold code. Either way each vote brings its members' combs,
// stored at registration, from KV: nothing about a key is recomputed after a restart.
//
//   deno run -A bench/load.ts [votes per phase=800]
//
// Rings follow protocol §2: the signer plus members drawn uniformly from every registered key.
import { createApiClient } from "../lib/client/api_client.ts";
import { decodeSignature } from "../lib/protocol/signature_wire.ts";
import type { VoteSubmission } from "../lib/protocol/schemas.ts";
import { makeVoters, signedVote } from "../tests/helpers/ledger_fixtures.ts";
import { startServer } from "../tests/helpers/server_process.ts";
import { baselineRate as fastestBaselineRate } from "./baseline_lsag.ts";
import { percentile, postAll, sampledRing } from "./http_driver.ts";

const VOTES = Number(Deno.args[0] ?? 800);
const WARMUP = 100;
const IN_FLIGHT = 16;
const RING_SIZE = 8;
const BASELINE_SAMPLE = 20;

/** Posts every vote with `inFlight` clients; returns each request's latency in ms. */
function drive(url: string, bodies: VoteSubmission[], inFlight: number): Promise<number[]> {
  return postAll(url, bodies, { path: "/api/vote", inFlight, status: 202 });
}

const total = WARMUP + 2 * VOTES;
console.error(`Signing ${total} ring-${RING_SIZE} votes…`);
const voters = makeVoters(total);
const votes = voters.map((v, i) =>
  signedVote(v, sampledRing(v, voters, RING_SIZE), `option ${i % 4}`)
);

// The straightforward verifier, one thread, on the same kind of signatures: best of 3 passes.
const baselineRate = fastestBaselineRate(
  votes.slice(0, BASELINE_SAMPLE).map((v) => ({
    signature: decodeSignature(v.signature),
    payload: v.payload,
  })),
);

type Phase = { name: string; rate: number; p50: number; p99: number };
async function timed(name: string, url: string, bodies: VoteSubmission[]): Promise<Phase> {
  console.error(`${name}: ${bodies.length} votes…`);
  const started = performance.now();
  const latencies = await drive(url, bodies, IN_FLIGHT);
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const [p50, p99] = [percentile(latencies, 50), percentile(latencies, 99)];
  return { name, rate: bodies.length / seconds, p50, p99 };
}

const dir = await Deno.makeTempDir({ prefix: "ringvote-load-" });
const env = { KV_PATH: `${dir}/ledger.kv`, BLOCK_INTERVAL_MS: "1000" };
let server = await startServer({ env });
const phases: Phase[] = [];
try {
  console.error(`Registering ${voters.length} keys…`);
  const api = createApiClient({ fetch, baseUrl: server.url });
  for (let i = 0; i < voters.length; i += 50) {
    await Promise.all(
      voters.slice(i, i + 50).map((v) => api.registerKey({ key: v.key, name: "Voter" })),
    );
  }
  // Warm-up: connections open, workers compiled.
  await drive(server.url, votes.slice(0, WARMUP), IN_FLIGHT);
  phases.push(await timed("steady", server.url, votes.slice(WARMUP, WARMUP + VOTES)));
  await server.stop();
  server = await startServer({ env });
  phases.push(await timed("after a restart", server.url, votes.slice(WARMUP + VOTES)));
} finally {
  await server.stop();
  await Deno.remove(dir, { recursive: true });
}

const cores = navigator.hardwareConcurrency;
console.log(
  `\nHTTP ingest, ring ${RING_SIZE}, ${IN_FLIGHT} in flight, ${VOTES} votes per phase, ${cores} cores`,
);
console.log(`baseline verify/s (one thread, in-process): ${baselineRate.toFixed(1)}\n`);
console.log("| phase | accepted votes/s | ÷ baseline | p50 | p99 |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const { name, rate, p50, p99 } of phases) {
  const ratio = (rate / baselineRate).toFixed(2);
  console.log(
    `| ${name} | ${rate.toFixed(1)} | ${ratio}× | ${p50.toFixed(1)} ms | ${p99.toFixed(1)} ms |`,
  );
}
