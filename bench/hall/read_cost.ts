// Server CPU per relayed state read at several rates, for the hall bench's read phase:
// `deno run -A bench/hall/read_cost.ts [rates a second, comma-separated] [relayed|direct]`.
// 64 phones' relayed clients take turns; the server's CPU a second and per read, 20 s per rate.
import { createApiClient } from "../../lib/client/api_client.ts";
import { createRelayedTransport } from "../../lib/client/relay/relayed_transport.ts";
import { sealingEncapsulator } from "../../lib/client/relay/sealing.ts";
import { makeVoters } from "../../tests/helpers/ledger_fixtures.ts";
import { startServer } from "../../tests/helpers/server_process.ts";
import { startRelay } from "../../tests/relay/relay_process.ts";
import { cpuSeconds } from "./processes.ts";

const ADMIN_TOKEN = "hall-bench-presenter-0123456789";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dir = await Deno.makeTempDir();
const server = await startServer({
  env: { KV_PATH: `${dir}/r.kv`, BLOCK_INTERVAL_MS: "15000", ADMIN_TOKEN },
  timeoutMs: 60_000,
});
const origin = server.url.replace(/\/$/, "");
const relayProcess = await startRelay(origin);
const relay = { ...relayProcess, url: relayProcess.url.replace(/\/+$/, "") };
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
try {
  const { id: round } = await (await fetch(`${origin}/api/rounds`, {
    method: "POST",
    headers: bearer,
    body: JSON.stringify({ question: "Q?", choices: ["A", "B"] }),
  })).json();
  await (await fetch(`${origin}/api/rounds/${round}/relay`, {
    method: "POST",
    headers: bearer,
    body: JSON.stringify({ relayed: true }),
  })).body?.cancel();
  const direct = createApiClient({ fetch, baseUrl: origin, ledger: { round } });
  for (const v of makeVoters(64)) await direct.registerKey({ key: v.key });
  const clients = Array.from({ length: 64 }, () => {
    const { transport } = createRelayedTransport({
      pin: { relay: relay.url, ohttp: relay.sha256 },
      origin,
      fetch,
      encapsulator: sealingEncapsulator({
        ohttp: relay.sha256,
        origin,
        choicesOf: () => Promise.resolve(["A", "B"]),
      }),
    });
    return createApiClient({ fetch: transport, baseUrl: origin, ledger: { round } });
  });
  // `direct` as the second argument: the same reads sent straight to the server, no gateway.
  const readers = Deno.args[1] === "direct" ? clients.map(() => direct) : clients;
  for (const c of readers) await c.roundState();
  const pid = server.process.pid;
  for (const rate of (Deno.args[0] ?? "0,6,25,100").split(",").map(Number)) {
    const seconds = 20;
    const c0 = cpuSeconds(pid);
    const t0 = Date.now();
    let n = 0;
    const pending: Promise<unknown>[] = [];
    while (Date.now() - t0 < seconds * 1000) {
      if (rate > 0) {
        pending.push(readers[n % readers.length].roundState());
        n++;
        await sleep(1000 / rate);
      } else await sleep(1000);
    }
    await Promise.all(pending);
    const cpu = cpuSeconds(pid) - c0;
    const s = (Date.now() - t0) / 1000;
    console.log(
      `rate ${rate}/s: ${n} reads, server ${(cpu * 1000 / s).toFixed(1)} ms/s` +
        (n ? `, ${(cpu * 1000 / n).toFixed(2)} ms per read` : ""),
    );
  }
} finally {
  await relay.stop();
  await server.stop();
}
