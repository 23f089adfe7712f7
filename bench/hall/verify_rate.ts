// The verifier's pace at a hall's rings: `deno task bench verify-rate -- --phones N` (default
// 1,000; `--edge` for a runtime without workers). Starts the server (main.ts, its own process),
// opens a round of N keys, so rings of 62–63 keys at 1,000, and sends every ballot directly, 64 in
// flight (a 503 `busy` sent again after its Retry-After), as fast as the server takes them: votes
// a second from the first send to the last 202, and the server's CPU per vote. This is the figure
// `VERIFY_RATE` (protocol §6) stands for: the rate is a setting, fixed at start, never measured
// live. Signing happens before, in two workers, and is timed apart.
import { ApiCallError, createApiClient } from "../../lib/client/api_client.ts";
import { makeVoters } from "../../tests/helpers/ledger_fixtures.ts";
import { startServer } from "../../tests/helpers/server_process.ts";
import { DEFAULT_VERIFY_RATE } from "../../lib/protocol/hall.ts";
import { presign } from "./presign.ts";
import { cpuSeconds } from "./processes.ts";

const ADMIN_TOKEN = "hall-bench-presenter-0123456789";
const CHOICES = ["Yes", "No", "Abstain"];
const IN_FLIGHT = 64;

const at = Deno.args.indexOf("--phones");
const phones = at < 0 ? 1000 : Number(Deno.args[at + 1]);
if (!Number.isInteger(phones) || phones < 8 || phones > 1000) {
  console.error(`--phones takes an integer from 8 to 1,000, not "${Deno.args[at + 1] ?? ""}"`);
  Deno.exit(2);
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

const dir = await Deno.makeTempDir({ prefix: "ringvote-verify-rate-" });
// `--edge`: the server as an edge runtime without workers runs it, verifying on its one thread.
const edge = Deno.args.includes("--edge");
const server = await startServer({
  env: { KV_PATH: `${dir}/rate.kv`, BLOCK_INTERVAL_MS: "15000", ADMIN_TOKEN },
  timeoutMs: 120_000,
  ...(edge ? { entry: new URL("../../tests/helpers/edge_main.ts", import.meta.url) } : {}),
});
const origin = server.url.replace(/\/$/, "");
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
try {
  const loadAvg = Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
  const started = await fetch(`${origin}/api/rounds`, {
    method: "POST",
    headers: bearer,
    body: JSON.stringify({ question: "Rate?", choices: CHOICES }),
  });
  const { id: round } = await started.json();
  const api = createApiClient({ fetch, baseUrl: origin, ledger: { round } });
  const voters = makeVoters(phones);
  const ids: number[] = [];
  for (const voter of voters) ids.push((await api.registerKey({ key: voter.key })).id);
  const signStart = performance.now();
  const ballots = await presign(voters, ids, (i) => CHOICES[i % CHOICES.length]);
  say(`signed ${phones} ballots in ${((performance.now() - signStart) / 1000).toFixed(1)} s`);
  const opened = await fetch(`${origin}/api/rounds/${round}/voting`, {
    method: "POST",
    headers: bearer,
  });
  await opened.body?.cancel();
  const rings = [...new Set(ballots.map((b) => b.publicKeys.length))].sort((a, b) => a - b);

  const cpu0 = cpuSeconds(server.process.pid);
  const t0 = performance.now();
  let next = 0;
  let busy = 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < ballots.length) {
      const ballot = ballots[next++];
      for (;;) {
        try {
          await api.submitVote(ballot);
          break;
        } catch (error) {
          if (!(error instanceof ApiCallError) || error.status !== 503) throw error;
          busy++;
          await sleep((error.retryAfterSeconds ?? 1) * 1000);
        }
      }
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(server.process.pid) - cpu0;
  const rate = phones / seconds;
  console.log(
    [
      `verifier pace (${edge ? "edge: one thread, no workers" : "workers, one per core"}): ` +
      `${phones} votes over rings of ${rings.join("–")} keys, ${IN_FLIGHT} in flight, direct; ` +
      `load average at start ${loadAvg} (2 cores)`,
      `  ${rate.toFixed(1)} votes a second (${seconds.toFixed(1)} s); 503 busy ${busy}`,
      `  server CPU per vote: ${(cpu * 1000 / phones).toFixed(1)} ms`,
      `  VERIFY_RATE's default, ${DEFAULT_VERIFY_RATE}, is ${
        (DEFAULT_VERIFY_RATE / rate).toFixed(2)
      }× this pace`,
    ].join("\n"),
  );
} finally {
  await server.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
