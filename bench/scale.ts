// How cost grows with the key directory: the real server (main.ts in its own process, a Deno KV
// file, the sealer every second), its directory grown through 2,000, 20,000 and 100,000 keys
// registered over HTTP. At each size: the registration rate, then ring-8 votes with rings drawn
// uniformly from every registered key, 16 requests in flight, sent right after registration
// (steady) and right after a restart on the same KV file. Ingest rates are ratios to the
// straightforward verifier's single-thread rate (bench/baseline_lsag.ts), measured at each size in
// this same run, the fastest of 3 passes over 20 of the votes. RSS is the server process's VmRSS (every thread), the largest seen in the phase.
//
// Two profiles: the default server (a pool of verification workers), and the edge profile (no
// `Worker` global, `--max-old-space-size=512`, as on Deno Deploy), which also seals one block of
// `sealVotes` votes. Both report the slowest `GET /api/block/status` seen throughout.
//
// First it measures the ceiling of registration on this machine: the checks and precomputation
// alone (lib/protocol/key_precomputation.ts), with no HTTP, KV or load generator, on this thread
// and on a verification pool of one worker per core.
//
//   deno run -A bench/scale.ts [sizes=2000,20000,100000] [votes per phase=400] [sealVotes=10000]
//     [profiles=workers,edge]
import { decodeSignature } from "../lib/protocol/signature_wire.ts";
import type { VoteSubmission } from "../lib/protocol/schemas.ts";
import {
  makeVoters,
  signedVote,
  type TestVoter,
  unsignedVote,
} from "../tests/helpers/ledger_fixtures.ts";
import { createStore } from "../server/store/mod.ts";
import { hexToBytes } from "../lib/protocol/bytes.ts";
import { precomputeKey } from "../lib/protocol/key_precomputation.ts";
import { createVerifyPool } from "../server/verifier/pool.ts";
import { type ServerProcess, startServer } from "../tests/helpers/server_process.ts";
import { baselineRate } from "./baseline_lsag.ts";
import { percentile, postAll, sampledRing } from "./http_driver.ts";

const SIZES = (Deno.args[0] ?? "2000,20000,100000").split(",").map(Number);
const VOTES = Number(Deno.args[1] ?? 400);
const SEAL_VOTES = Number(Deno.args[2] ?? 10_000);
const IN_FLIGHT = 16;
const RING_SIZE = 8;
const BASELINE_SAMPLE = 20;
const EDGE_MAIN = new URL("../tests/helpers/edge_main.ts", import.meta.url);

type Profile = { name: string; entry?: URL; v8Flags?: string[] };
const PROFILES: Profile[] = [
  { name: "workers" },
  { name: "edge", entry: EDGE_MAIN, v8Flags: ["--max-old-space-size=512"] },
].filter((p) => (Deno.args[3] ?? "workers,edge").split(",").includes(p.name));

/** VmRSS of process `pid` in MB (every thread of it), or 0 once it is gone. */
function rssMb(pid: number): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/**
 * Watches a server while a phase runs: its largest RSS, and the slowest answer to
 * `GET /api/block/status` polled every 100 ms.
 */
function watch(server: ServerProcess) {
  let rss = 0;
  let slowestStatus = 0;
  let running = true;
  const sampler = setInterval(() => {
    rss = Math.max(rss, rssMb(server.process.pid));
  }, 100);
  const poller = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const res = await fetch(new URL("/api/block/status", server.url));
        await res.body?.cancel();
      } catch {
        break;
      }
      slowestStatus = Math.max(slowestStatus, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return async () => {
    running = false;
    clearInterval(sampler);
    await poller;
    return { rss: Math.max(rss, rssMb(server.process.pid)), slowestStatus };
  };
}

async function post(url: string, path: string, body: unknown): Promise<Response> {
  return await fetch(new URL(path, url), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Registers `voters` with IN_FLIGHT requests in flight; returns keys per second. */
async function register(url: string, voters: TestVoter[]): Promise<number> {
  const started = performance.now();
  const bodies = voters.map((v) => ({ key: v.key }));
  await postAll(url, bodies, { path: "/api/pki/key", inFlight: IN_FLIGHT, status: 201 });
  return voters.length / ((performance.now() - started) / 1000);
}

/** Posts every vote with IN_FLIGHT clients; returns the rate and the p50 and p99 latencies. */
async function drive(url: string, votes: VoteSubmission[]) {
  const started = performance.now();
  const latencies = await postAll(url, votes, {
    path: "/api/vote",
    inFlight: IN_FLIGHT,
    status: 202,
  });
  const rate = votes.length / ((performance.now() - started) / 1000);
  latencies.sort((a, b) => a - b);
  return { rate, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** Signed votes by `signers`, each over a ring drawn uniformly from `directory`. */
function signVotes(signers: TestVoter[], directory: TestVoter[]): VoteSubmission[] {
  return signers.map((signer, i) =>
    signedVote(signer, sampledRing(signer, directory, RING_SIZE), `option ${i % 4}`)
  );
}

/** The straightforward verifier's single-thread rate, best of 3 passes over a sample of `votes`. */
function sampledBaselineRate(votes: VoteSubmission[]): number {
  const sample = votes.slice(0, BASELINE_SAMPLE);
  return baselineRate(
    sample.map((v) => ({ signature: decodeSignature(v.signature), payload: v.payload })),
  );
}

type Row = {
  keys: number;
  registration: number;
  steady: { ratio: number; p50: number; p99: number; rss: number };
  restart: { ratio: number; p50: number; p99: number; rss: number; firstVoteMs: number };
  slowestStatus: number;
};

const largest = Math.max(...SIZES);
console.error(`Making ${largest} key pairs…`);
const voters = makeVoters(largest);

/** Keys/s of registration's checks and precomputation alone: on this thread, and on a pool. */
async function precomputeCeiling(keys: string[]): Promise<{ thread: number; pool: number }> {
  // Precomputation keeps no state, so a short directory's keys are simply reused.
  const [warm, timed] = [600, 3000].map((n) =>
    Array.from({ length: n }, (_, i) => keys[i % keys.length])
  );
  warm.forEach((key) => precomputeKey(hexToBytes(key)));
  let started = performance.now();
  timed.forEach((key) => precomputeKey(hexToBytes(key)));
  const thread = timed.length / ((performance.now() - started) / 1000);
  const pool = createVerifyPool({ maxQueued: timed.length });
  try {
    await Promise.all(warm.map((key) => pool.precompute(key)));
    started = performance.now();
    await Promise.all(timed.map((key) => pool.precompute(key)));
    return { thread, pool: timed.length / ((performance.now() - started) / 1000) };
  } finally {
    pool.close();
  }
}
console.error("Measuring the precomputation ceiling…");
const ceiling = await precomputeCeiling(voters.map((v) => v.key));

async function runProfile(profile: Profile): Promise<{ rows: Row[]; seal?: string }> {
  const dir = await Deno.makeTempDir({ prefix: `ringvote-scale-${profile.name}-` });
  const start = (interval = "1000") =>
    startServer({
      entry: profile.entry,
      v8Flags: profile.v8Flags,
      env: { KV_PATH: `${dir}/ledger.kv`, BLOCK_INTERVAL_MS: interval },
      timeoutMs: 300_000,
    });
  let server = await start();
  const rows: Row[] = [];
  let registered = 0;
  let nextSigner = 0;
  const signers = (n: number) => voters.slice(nextSigner, nextSigner += n);
  let seal: string | undefined;
  try {
    for (const size of SIZES) {
      console.error(`${profile.name}: registering keys ${registered + 1}..${size}…`);
      let done = watch(server);
      const registration = await register(server.url, voters.slice(registered, size));
      let seen = await done();
      let slowestStatus = seen.slowestStatus;
      registered = size;
      const directory = voters.slice(0, size);

      if (nextSigner + 2 * VOTES > size) {
        throw new Error(`${size} keys cannot sign ${VOTES} more votes`);
      }
      const steadyVotes = signVotes(signers(VOTES), directory);
      const restartVotes = signVotes(signers(VOTES), directory);
      const baseline = sampledBaselineRate([...steadyVotes, ...restartVotes]);

      console.error(`${profile.name}, ${size} keys: steady phase…`);
      done = watch(server);
      const steady = await drive(server.url, steadyVotes);
      seen = await done();
      slowestStatus = Math.max(slowestStatus, seen.slowestStatus);
      const steadyRss = seen.rss;

      await server.stop();
      const restarted = performance.now();
      server = await start();
      // The first vote after the restart: the time until the server is serving votes again.
      const first = await post(server.url, "/api/vote", restartVotes[0]);
      await first.body?.cancel();
      if (first.status !== 202) throw new Error(`First vote after restart: ${first.status}`);
      const firstVoteMs = performance.now() - restarted;
      console.error(`${profile.name}, ${size} keys: after a restart…`);
      done = watch(server);
      const restart = await drive(server.url, restartVotes.slice(1));
      seen = await done();
      slowestStatus = Math.max(slowestStatus, seen.slowestStatus);
      rows.push({
        keys: size,
        registration,
        steady: { ratio: steady.rate / baseline, p50: steady.p50, p99: steady.p99, rss: steadyRss },
        restart: {
          ratio: restart.rate / baseline,
          p50: restart.p50,
          p99: restart.p99,
          rss: seen.rss,
          firstVoteMs,
        },
        slowestStatus,
      });
      console.error(JSON.stringify({ profile: profile.name, ...rows[rows.length - 1] }));
    }
    if (profile.entry && SEAL_VOTES > 0) {
      seal = await sealLarge();
      console.error(seal);
    }
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
  return { rows, seal };

  /**
   * Seals one block of SEAL_VOTES votes: they are written straight into the stopped server's KV
   * file through the store (sealing never re-verifies a vote, and ingest is measured above), then
   * the server starts and its first tick seals them all while the status is polled.
   */
  async function sealLarge(): Promise<string> {
    await server.stop();
    console.error(`${profile.name}: storing ${SEAL_VOTES} votes for one block…`);
    const kv = await Deno.openKv(`${dir}/ledger.kv`);
    const store = await createStore(kv);
    for (let i = 0; i < SEAL_VOTES; i += 100) {
      const batch = Array.from({ length: Math.min(100, SEAL_VOTES - i) }, () => unsignedVote("x"));
      await Promise.all(batch.map(({ vote, tag }) => store.submitVote(vote, tag)));
    }
    const { height: before } = await store.status();
    kv.close();
    const restarted = performance.now();
    server = await start("1000");
    const done = watch(server);
    const height = async () => {
      const res = await fetch(new URL("/api/block/status", server.url));
      return (await res.json()).height as number;
    };
    while ((await height()) === before) await new Promise((resolve) => setTimeout(resolve, 50));
    const seconds = (performance.now() - restarted) / 1000;
    const seen = await done();
    const url = new URL(`/api/blocks?from=${before + 1}&limit=1`, server.url);
    const block = await (await fetch(url)).json();
    return `sealed one block of ${block.blocks[0].size} votes ${seconds.toFixed(1)} s after the ` +
      `start (1 s timer included); slowest status answer while sealing ` +
      `${seen.slowestStatus.toFixed(0)} ms; RSS ${seen.rss.toFixed(0)} MB`;
  }
}

const results: [Profile, { rows: Row[]; seal?: string }][] = [];
for (const profile of PROFILES) results.push([profile, await runProfile(profile)]);

const ms = (x: number) => `${x.toFixed(0)} ms`;
console.log(
  `\nring ${RING_SIZE}, ${IN_FLIGHT} in flight, ${VOTES} votes per phase, ` +
    `${navigator.hardwareConcurrency} cores; ratios ÷ the baseline verifier on one thread (fastest of 3 passes)`,
);
console.log(
  `registration ceiling, checks and precomputation alone (no HTTP, KV or client): ` +
    `${ceiling.thread.toFixed(0)} keys/s on one thread, ${ceiling.pool.toFixed(0)} keys/s on a ` +
    `pool of ${navigator.hardwareConcurrency} workers`,
);
for (const [profile, { rows, seal }] of results) {
  console.log(`\n${profile.name}${profile.v8Flags ? ` (${profile.v8Flags.join(" ")})` : ""}\n`);
  console.log(
    "| keys | registration | steady | p50 / p99 | RSS | after restart | p50 / p99 | RSS " +
      "| restart → first vote | slowest status |",
  );
  console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const r of rows) {
    console.log(
      `| ${r.keys.toLocaleString("en")} | ${r.registration.toFixed(0)} keys/s | ` +
        `${r.steady.ratio.toFixed(2)}× | ${ms(r.steady.p50)} / ${ms(r.steady.p99)} | ` +
        `${r.steady.rss.toFixed(0)} MB | ${r.restart.ratio.toFixed(2)}× | ` +
        `${ms(r.restart.p50)} / ${ms(r.restart.p99)} | ${r.restart.rss.toFixed(0)} MB | ` +
        `${ms(r.restart.firstVoteMs)} | ${ms(r.slowestStatus)} |`,
    );
  }
  if (seal) console.log(`\n${seal}`);
}
