// The hall bench: `deno task bench hall -- --phones N` (default 64; bench/run.ts). Starts the server (main.ts,
// its own process, a Deno KV file, rounds sealed every 15 s by default) and the relay (relay.ts,
// as `deno task relay` runs it), both on loopback, then N phones at the HTTP level in this
// process, each doing what the relayed voting page does with the page's own client logic
// (bench/hall/phone.ts): join, poll the round's state, read its group, vote in its send window,
// retry, read its proof, "sealed with" and checkpoints, every call but the registration through
// the relay. Signing happens before the opening, in workers, over the groups the rule predicts:
// a bench shortcut (two cores cannot sign for 1,000 phones in seconds), timed apart.
//
// Prints registrations a second; relayed requests per phone at the opening and in each phone's
// busiest minute; opening → last 202 and → all sealed; vote latency; 202s, 503s, 504s; double
// sends; server and relay CPU per relayed read (over a phase of reads only) and per vote; the
// phones' own CPU; the median "sealed with"; the audit's time and verdict. Stops by itself.
import { createApiClient } from "../../lib/client/api_client.ts";
import { makeVoters, signedVote } from "../../tests/helpers/ledger_fixtures.ts";
import { startServer } from "../../tests/helpers/server_process.ts";
import { percentile } from "../http_driver.ts";
import { type PhoneLog, runPhone } from "./phone.ts";
import { startRelay } from "../../tests/relay/relay_process.ts";
import { cpuSeconds } from "./processes.ts";
import { presign } from "./presign.ts";

const ADMIN_TOKEN = "hall-bench-presenter-0123456789";
const CHOICES = ["Yes", "No", "Abstain"];
const REGISTER_IN_FLIGHT = 32;
/** The phase of reads only over which CPU per relayed read is measured, after a settling time. */
const READ_PHASE = { settleMs: 13_000, measureMs: 30_000 };

function argument(name: string, fallback: number): number {
  const at = Deno.args.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(Deno.args[at + 1]);
  if (!Number.isInteger(value) || value < 8 || value > 1000) {
    console.error(`${name} takes an integer from 8 to 1,000, not "${Deno.args[at + 1] ?? ""}"`);
    Deno.exit(2);
  }
  return value;
}

const phones = argument("--phones", 64);
const intervalMs = 15_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const say = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const fmt = (x: number, digits = 1) => x.toFixed(digits);

const dir = await Deno.makeTempDir({ prefix: "ringvote-hall-" });
const server = await startServer({
  env: {
    KV_PATH: `${dir}/hall.kv`,
    BLOCK_INTERVAL_MS: String(intervalMs),
    ADMIN_TOKEN,
    ...(Deno.env.get("VERIFY_RATE") ? { VERIFY_RATE: Deno.env.get("VERIFY_RATE")! } : {}),
  },
  timeoutMs: 120_000,
});
const origin = server.url.replace(/\/$/, "");
const relayProcess = await startRelay(origin);
// The relay's address as a pin names it: no trailing slash.
const relay = { ...relayProcess, url: relayProcess.url.replace(/\/+$/, "") };
const serverPid = server.process.pid;
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
const lines: string[] = [];
const out = (line: string) => lines.push(line);

try {
  const loadAvg = Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
  say(`hall of ${phones} phones; server ${origin} (pid ${serverPid}), relay ${relay.url}`);
  const started = await fetch(`${origin}/api/rounds`, {
    method: "POST",
    headers: bearer,
    body: JSON.stringify({ question: "Hall?", choices: CHOICES }),
  });
  const { id: round } = await started.json();
  await (await fetch(`${origin}/api/rounds/${round}/relay`, {
    method: "POST",
    headers: bearer,
    body: JSON.stringify({ relayed: true }),
  })).body?.cancel();

  // Join: every phone registers its key directly, as the page does.
  const voters = makeVoters(phones);
  const ids = new Array<number>(phones);
  const direct = createApiClient({ fetch, baseUrl: origin, ledger: { round } });
  const regStart = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: REGISTER_IN_FLIGHT }, async () => {
    while (next < phones) {
      const i = next++;
      ids[i] = (await direct.registerKey({ key: voters[i].key })).id;
    }
  }));
  const regSeconds = (performance.now() - regStart) / 1000;
  say(`registered ${phones} keys in ${fmt(regSeconds)} s`);

  // The bench shortcut: every ballot signed before the opening, in workers, over its predicted group.
  const choiceOf = (i: number) => CHOICES[i % CHOICES.length];
  const signStart = performance.now();
  const presigned = await presign(voters, ids, choiceOf);
  const signSeconds = (performance.now() - signStart) / 1000;
  say(`signed ${phones} ballots in ${fmt(signSeconds)} s (bench shortcut, before the opening)`);

  // The server and the relay idle, nothing asked of them: their own CPU a second, subtracted below.
  // Two windows, the quieter one kept: a busier idle would flatter the figures per read.
  const idleWindow = async () => {
    const at0 = Date.now();
    const [server0, relay0] = [cpuSeconds(serverPid), cpuSeconds(relay.pid)];
    await sleep(10_000);
    const seconds = (Date.now() - at0) / 1000;
    return {
      server: (cpuSeconds(serverPid) - server0) / seconds,
      relay: (cpuSeconds(relay.pid) - relay0) / seconds,
    };
  };
  const idles = [await idleWindow(), await idleWindow()];
  const idleServer = Math.min(...idles.map((idle) => idle.server));
  const idleRelay = Math.min(...idles.map((idle) => idle.relay));

  // The phones: from now on every call is relayed.
  const phonesCpu0 = cpuSeconds("self");
  const roomStart = Date.now();
  const runs = voters.map((voter, i) =>
    runPhone({
      index: i,
      keyId: ids[i],
      key: voter.key,
      round,
      choices: CHOICES,
      origin,
      relay: relay.url,
      ohttp: relay.sha256,
      presigned: presigned[i],
      sign: (keys) =>
        signedVote(voter, keys.map((key) => ({ seed: voter.seed, key })), choiceOf(i)),
    }, Math.random() * 10_000)
  );
  const logs: PhoneLog[] = [];
  const settled = Promise.all(runs).then((all) => logs.push(...all));

  // A phase of reads only: the waiting phones poll the state, nothing else happens.
  await sleep(READ_PHASE.settleMs);
  // The phones' logs are read after they end; count requests from the relay's side meanwhile.
  const stats0 = await relayStats();
  const read0 = { at: Date.now(), server: cpuSeconds(serverPid), relay: cpuSeconds(relay.pid) };
  await sleep(READ_PHASE.measureMs);
  const read1 = { at: Date.now(), server: cpuSeconds(serverPid), relay: cpuSeconds(relay.pid) };
  const stats1 = await relayStats();
  const readRequests = stats1.requests - stats0.requests;

  // The opening.
  const openedRes = await fetch(`${origin}/api/rounds/${round}/voting`, {
    method: "POST",
    headers: bearer,
  });
  await openedRes.body?.cancel();
  let openedAt = 0;
  let windowMs = 0;
  while (openedAt === 0) {
    const state = await (await fetch(`${origin}/api/rounds/${round}/state`)).json();
    if (state.openedAt) [openedAt, windowMs] = [state.openedAt, state.sendWindowMs];
    else await sleep(250);
  }
  const vote0 = {
    server: cpuSeconds(serverPid),
    relay: cpuSeconds(relay.pid),
    stats: await relayStats(),
  };
  say(`voting opened; waiting for the phones`);

  // Every phone proven (or given up), or the deadline; then the next round closes this one.
  const deadline = openedAt + 5_000 + 120_000 + 90_000;
  while (Date.now() < deadline) {
    const status = await (await fetch(`${origin}/api/rounds/${round}/block/open`)).json();
    const tally = await (await fetch(`${origin}/api/rounds/${round}/tally`)).json();
    if (tally.total >= phones && status.votes === 0) break;
    await sleep(2_000);
  }
  const allSealedSeen = Date.now();
  const vote1 = {
    server: cpuSeconds(serverPid),
    relay: cpuSeconds(relay.pid),
    stats: await relayStats(),
  };
  // Let the phones read their proofs, then close the round.
  await sleep(intervalMs + 10_000);
  const closing = await fetch(`${origin}/api/rounds`, {
    method: "POST",
    headers: bearer,
    body: JSON.stringify({ question: "Next?", choices: CHOICES }),
  });
  await closing.body?.cancel();
  say("round closed; waiting for the phones' last checks");
  await Promise.race([settled, sleep(60_000)]);
  const phonesCpu = cpuSeconds("self") - phonesCpu0;
  const roomMinutes = (Date.now() - roomStart) / 60_000;

  // The audit of the round, as anyone runs it.
  const auditStart = performance.now();
  const audit = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-read",
      "--allow-write",
      new URL("../../audit.ts", import.meta.url).pathname,
      server.url,
      "--round",
      String(round),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const auditSeconds = (performance.now() - auditStart) / 1000;
  const auditText = new TextDecoder().decode(audit.stdout).trim().split("\n");

  // Figures.
  const done = logs.length;
  const sends = logs.flatMap((l) => l.sends);
  const latencies = sends.filter((s) => s.outcome === "accepted").map((s) => s.ms).sort((a, b) =>
    a - b
  );
  const count = (kind: string) => sends.filter((s) => s.outcome === kind).length;
  const lastAccepted = Math.max(...logs.map((l) => l.acceptedAt ?? 0));
  const lastSealed = Math.max(...logs.map((l) => l.sealedAt ?? 0));
  const busiest = logs.map((l) => busiestMinute(l.requests)).sort((a, b) => a - b);
  const atOpening = logs.map((l) => l.atOpening).sort((a, b) => a - b);
  const perMinute = logs.map((l) => l.requests.length / roomMinutes).sort((a, b) => a - b);
  const sealedWith = logs.flatMap((l) => l.sealedWith === null ? [] : [l.sealedWith]).sort((a, b) =>
    a - b
  );
  const doubles = logs.filter((l) => l.accepted > 1).length;
  const reads504 = logs.reduce((n, l) => n + l.relay504.reads, 0);
  const votes504 = logs.reduce((n, l) => n + l.relay504.votes, 0);
  const accepted = logs.filter((l) => l.accepted >= 1).length;
  const proven = logs.filter((l) => l.final === "proven").length;
  const windows = [...new Set(logs.map((l) => l.windowMs))];
  const redrawn = logs.filter((l) => l.sendReason === "redrawn").length;
  const readSeconds = (read1.at - read0.at) / 1000;
  const readMs = (read1.server - read0.server) * 1000 / Math.max(1, readRequests);
  const relayReadMs = (read1.relay - read0.relay) * 1000 / Math.max(1, readRequests);
  const readMsNet = (read1.server - read0.server - idleServer * readSeconds) * 1000 /
    Math.max(1, readRequests);
  const relayReadMsNet = (read1.relay - read0.relay - idleRelay * readSeconds) * 1000 /
    Math.max(1, readRequests);
  const voteRequests = vote1.stats.requests - vote0.stats.requests;
  const tally = await (await fetch(`${origin}/api/rounds/${round}/tally`)).json();

  out(
    `hall bench: ${phones} phones, rounds sealed every ${
      intervalMs / 1000
    } s, load average at start ${loadAvg} (2 cores shared)`,
  );
  out(
    `  registrations: ${fmt(phones / regSeconds)} a second (${phones} in ${
      fmt(regSeconds)
    } s, ${REGISTER_IN_FLIGHT} in flight, direct)`,
  );
  out(`  signing before the opening (bench shortcut, 2 workers): ${fmt(signSeconds)} s`);
  out(
    `  send window W: ${
      windows.map((w) => w === null ? "—" : `${w / 1000} s`).join(", ")
    } (server ${windowMs / 1000} s); ${
      logs.filter((l) => l.windowDiffers).length
    } phones differed; ${redrawn} redrawn late`,
  );
  out(
    `  relayed requests per phone at the opening, before signing: max ${atOpening.at(-1)}, median ${
      percentile(atOpening, 50)
    }`,
  );
  out(
    `  relayed requests per phone, busiest 60 s: max ${busiest.at(-1)}, median ${
      percentile(busiest, 50)
    }; average ${fmt(percentile(perMinute, 50))} a minute (max ${fmt(perMinute.at(-1)!)}) over ${
      fmt(roomMinutes)
    } min`,
  );
  out(
    `  opening → last 202: ${fmt((lastAccepted - openedAt) / 1000)} s; opening → all sealed: ${
      fmt((lastSealed - openedAt) / 1000)
    } s (tally ${tally.total} of ${phones}, seen at +${fmt((allSealedSeen - openedAt) / 1000)} s)`,
  );
  out(
    `  vote latency (202s): p50 ${fmt(percentile(latencies, 50) / 1000, 2)} s, p95 ${
      fmt(percentile(latencies, 95) / 1000, 2)
    } s, p99 ${fmt(percentile(latencies, 99) / 1000, 2)} s`,
  );
  out(
    `  sends: ${sends.length}; 202 ${count("accepted")}, 503 busy ${
      count("busy")
    }, relay 504/lost ${count("relay-timeout")}, duplicate ${count("duplicate")}, refused ${
      count("refused")
    }; phones with a 202 ${accepted} of ${done}`,
  );
  out(
    `  double sends (two 202s for one phone): ${doubles}; relay 504s on reads ${reads504}, on votes ${votes504}; read errors ${
      logs.reduce((n, l) => n + l.readErrors, 0)
    }; re-signed ${logs.filter((l) => l.resigned).length}`,
  );
  out(
    `  ballots proven by their phone: ${proven} of ${done}; finals: ${
      JSON.stringify(Object.fromEntries([
        ...new Set(logs.map((l) => l.final)),
      ].map((k) => [
        k,
        logs.filter((l) => l.final === k).length,
      ])))
    }`,
  );
  out(
    `  server CPU per relayed read: ${fmt(readMsNet, 2)} ms above idle (${fmt(readMs, 2)} ms ` +
      `with idle; ${readRequests} state reads in ${fmt(readSeconds)} s of reads only; idle ` +
      `${fmt(idleServer * 1000)} ms/s); relay: ${fmt(relayReadMsNet, 2)} ms above idle ` +
      `(${fmt(relayReadMs, 2)} ms with idle)`,
  );
  out(
    `  server CPU per vote: ${
      fmt((vote1.server - vote0.server) * 1000 / Math.max(1, accepted), 1)
    } ms (opening → all sealed, reads included: ${voteRequests} relayed requests); relay ${
      fmt((vote1.relay - vote0.relay) * 1000 / Math.max(1, voteRequests), 2)
    } ms per request`,
  );
  out(
    `  phones' own CPU (this process, HPKE and JSON, signing excluded): ${fmt(phonesCpu)} s, ${
      fmt(phonesCpu * 1000 / Math.max(1, logs.reduce((n, l) => n + l.requests.length, 0)), 2)
    } ms per relayed request`,
  );
  out(
    `  "sealed with" (ballots of one's group in one's block): median ${
      sealedWith.length ? percentile(sealedWith, 50) : "—"
    }, min ${sealedWith[0] ?? "—"}`,
  );
  out(`  audit: ${fmt(auditSeconds)} s, exit ${audit.code}: ${auditText.at(-1) ?? ""}`);
  console.log(lines.join("\n"));
} finally {
  await relay.stop();
  await server.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}

/** The relay's counters (`GET /stats`). */
async function relayStats(): Promise<{ requests: number }> {
  return await (await fetch(`${relay.url}/stats`)).json();
}

/** The most of `times` (ms) within any 60 s. */
function busiestMinute(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= 60_000) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}
