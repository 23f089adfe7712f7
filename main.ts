// Composition root: configuration, Deno KV, the store, the attack lab's practice ledger (its own
// KV prefix, protocol §4.7), the sealer schedule of both, the verifier (a pool of worker threads,
// or this thread where there is no Worker) and the HTTP server.
import { dirname } from "node:path";
import { createApp } from "./server/app.ts";
import { isKvFile, readConfig } from "./server/config.ts";
import { createLabLedger, type LabLedger } from "./server/store/lab.ts";
import { sealNextBlock } from "./server/sealer.ts";
import { createStore, type Store } from "./server/store/mod.ts";
import { createVerifier } from "./server/verifier/mod.ts";

const config = readConfig((name) => Deno.env.get(name));

/** The election's store and the lab's practice ledger, over one database. */
async function openLedgers(): Promise<{ store: Store; lab: LabLedger }> {
  if (isKvFile(config.kvPath)) await Deno.mkdir(dirname(config.kvPath), { recursive: true });
  const kv = config.kvPath === null ? await Deno.openKv() : await Deno.openKv(config.kvPath);
  const store = await createStore(kv);
  const lab = await createLabLedger(kv, {
    maxKeys: config.labMaxKeys,
    maxVotes: config.labMaxVotes,
  });
  return { store, lab };
}

/** Seals both ledgers; a failure of the practice ledger is logged and never stops the election. */
async function sealTick(): Promise<void> {
  const { store, lab } = await ledgersReady;
  const now = Date.now();
  const sealed = await sealNextBlock(store, now);
  for (const block of sealed) console.log(`Sealed block ${block.height}: ${block.size} votes`);
  try {
    await sealNextBlock(await lab.current(), now);
  } catch (error) {
    console.error("Sealing the practice ledger failed, retrying next tick:", error);
  }
}

const ledgersReady = openLedgers();

// Registered at the top level, before any await, as edge runtimes require.
if (config.blockIntervalMs === null) {
  Deno.cron("seal next block", "* * * * *", { backoffSchedule: [1_000, 5_000, 15_000] }, sealTick);
} else {
  const interval = config.blockIntervalMs;
  const loop = async () => {
    try {
      await sealTick();
    } catch (error) {
      console.error("Sealing failed, retrying next tick:", error);
    }
    setTimeout(loop, interval);
  };
  setTimeout(loop, interval);
}

// One verification worker per core where the runtime has workers (ingest verifies on every core,
// the request thread commits); on an edge runtime without them, this thread between requests.
const verifier = await createVerifier();
// Workers compile their verification code before the first request (a few tenths of a second);
// a pool whose workers keep failing before they are ready stops the start with its reason.
await verifier.ready;
const app = createApp({ ...await ledgersReady, config, verifier });
Deno.serve({
  port: config.port,
  onListen: ({ hostname, port }) => {
    const host = hostname === "0.0.0.0" || hostname === "::" ? "localhost" : hostname;
    console.log(`Ringvote listening on http://${host}:${port}/`);
  },
}, app.fetch);
