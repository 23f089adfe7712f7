// Composition root: configuration, Deno KV, the store, the attack lab's practice ledger (its own
// KV prefix, protocol §4.7), the rounds (protocol §4.9), the sealer schedules, the pushes of the
// election's checkpoints to its witnesses (protocol §4.10), the verifier (a pool of worker threads,
// or this thread where there is no Worker) and the HTTP server.
import { dirname } from "node:path";
import { createApp } from "./server/app.ts";
import { isKvFile, readConfig } from "./server/config.ts";
import { createLabLedger, type LabLedger } from "./server/store/lab.ts";
import { sealNextBlock } from "./server/sealer.ts";
import { createStore, type Store } from "./server/store/mod.ts";
import { createRounds, type Rounds } from "./server/store/rounds.ts";
import { createRoundSealer, type RoundSealer } from "./server/round_sealer.ts";
import { createGatewayKeys, type GatewayKeys } from "./server/store/ohttp_key.ts";
import { createVerifier } from "./server/verifier/mod.ts";
import { createWitnessPusher, WITNESS_REFRESH_MS } from "./server/witness_push.ts";
import { createWorkWatch, WORK_POLL_MS, type WorkWatch } from "./server/work_watch.ts";
import { ELECTION, LAB } from "./server/store/work.ts";

const config = readConfig((name) => Deno.env.get(name));

/** Round 1's sealing interval: `BLOCK_INTERVAL_MS`, or the cron's minute. */
const electionIntervalMs = config.blockIntervalMs ?? 60_000;

/**
 * The election's store, the lab's practice ledger and the rounds, over one database, with what
 * tells their sealers of work.
 */
async function openLedgers(): Promise<
  {
    store: Store;
    lab: LabLedger;
    rounds: Rounds;
    roundSealer: RoundSealer;
    watch: WorkWatch;
    ohttp: GatewayKeys;
  }
> {
  if (isKvFile(config.kvPath)) await Deno.mkdir(dirname(config.kvPath), { recursive: true });
  const kv = config.kvPath === null ? await Deno.openKv() : await Deno.openKv(config.kvPath);
  const store = await createStore(kv);
  const lab = await createLabLedger(kv, {
    maxKeys: config.labMaxKeys,
    maxVotes: config.labMaxVotes,
  });
  const rounds = await createRounds(kv, {
    election: store,
    electionIntervalMs,
    adminToken: config.adminToken,
  });
  const watch = createWorkWatch(kv);
  const ohttp = await createGatewayKeys(kv);
  return {
    store,
    lab,
    rounds,
    watch,
    roundSealer: createRoundSealer({ kv, rounds, watch }),
    ohttp,
  };
}

/**
 * Seals both ledgers where there is work (server/work_watch.ts): no KV read for a ledger with none.
 * A failure of the practice ledger is logged and never stops the election.
 */
async function sealTick(): Promise<void> {
  const { store, lab, watch } = await ledgersReady;
  const now = Date.now();
  // A tick a minute apart reads the stamp first: a vote another process took before it is sealed
  // on it (one read a minute). Faster ticks leave it to the poll every WORK_POLL_MS.
  if (config.blockIntervalMs === null || config.blockIntervalMs >= WORK_POLL_MS) {
    await watch.poll(now, true).catch((error) =>
      console.error("Reading the work stamp failed:", error)
    );
  }
  if (watch.take(ELECTION)) {
    try {
      const sealed = await sealNextBlock(store, now);
      for (const block of sealed) console.log(`Sealed block ${block.height}: ${block.size} votes`);
    } catch (error) {
      watch.retry(ELECTION);
      throw error;
    }
  }
  // Detached: a witness that is slow or down never holds up sealing.
  void witnessPusher.then((pusher) => pusher?.push());
  if (!watch.take(LAB)) return;
  try {
    await sealNextBlock(await lab.current(), now);
  } catch (error) {
    watch.retry(LAB);
    console.error("Sealing the practice ledger failed, retrying next tick:", error);
  }
}

/**
 * Reads the work stamp when due, then seals the rounds after the first (protocol §4.9): what is
 * due since the last run.
 */
async function sealRounds(previous: number, now: number): Promise<void> {
  const { roundSealer, watch } = await ledgersReady;
  try {
    await watch.poll(now);
  } catch (error) {
    // What this process noted is sealed all the same; the stamp is read again at the next poll.
    console.error("Reading the work stamp failed:", error);
  }
  for (const { round, blocks } of await roundSealer.run(previous, now)) {
    for (const block of blocks) {
      console.log(`Sealed block ${block.height} of round ${round}: ${block.size} votes`);
    }
  }
}

/**
 * How often the rounds' sealer looks at the clock and at this process's notes of work (no KV read
 * unless there is work): the rounds' ticks are whole seconds at the finest.
 */
const ROUND_TICK_MS = 250;

const ledgersReady = openLedgers();

for (const note of config.witnessPolicy?.notes ?? []) console.log(`WITNESS_POLICY ${note}`);
/** The election's pushes to the witnesses of WITNESS_POLICY; null when it names none. */
const witnessPusher = ledgersReady.then(({ store }) =>
  config.witnessPolicy?.witnesses.length
    ? createWitnessPusher({
      store,
      witnesses: config.witnessPolicy.witnesses,
      origin: config.logOrigin,
    })
    : null
);
// The steady pace: with nothing sealed, every witness cosigns again, refreshing its timestamp.
if (config.witnessPolicy?.witnesses.length) {
  setInterval(
    () => void witnessPusher.then((pusher) => pusher?.push({ refresh: true })),
    WITNESS_REFRESH_MS,
  );
}

// Registered at the top level, before any await, as edge runtimes require.
if (config.blockIntervalMs === null) {
  Deno.cron("seal next block", "* * * * *", { backoffSchedule: [1_000, 5_000, 15_000] }, sealTick);
} else {
  // Ticks aligned to the clock, so that every process and page agrees when the next one is due.
  const interval = config.blockIntervalMs;
  const untilTick = () => interval - Date.now() % interval;
  const loop = async () => {
    try {
      await sealTick();
    } catch (error) {
      console.error("Sealing failed, retrying next tick:", error);
    }
    setTimeout(loop, untilTick());
  };
  setTimeout(loop, untilTick());
}
{
  let previous = Date.now();
  const loop = async () => {
    const now = Date.now();
    try {
      await sealRounds(previous, now);
    } catch (error) {
      console.error("Sealing the rounds failed, retrying next tick:", error);
    }
    previous = now;
    setTimeout(loop, ROUND_TICK_MS);
  };
  setTimeout(loop, ROUND_TICK_MS);
}

// One verification worker per core where the runtime has workers (ingest verifies on every core,
// the request thread commits); on an edge runtime without them, this thread between requests.
const verifier = await createVerifier();
// Workers compile their verification code before the first request (a few tenths of a second);
// a pool whose workers keep failing before they are ready stops the start with its reason.
await verifier.ready;
const ledgers = await ledgersReady;
const app = createApp({ ...ledgers, config, verifier });
Deno.serve({
  port: config.port,
  hostname: config.hostname,
  onListen: ({ hostname, port }) => {
    const host = hostname === "0.0.0.0" || hostname === "::" ? "localhost" : hostname;
    const address = config.publicUrl ?? `http://${host}:${port}/`;
    console.log(`Ringvote listening on http://${host}:${port}/`);
    // In the fragment, which browsers never send: the token stays out of server and proxy logs.
    console.log(`Presenter sign-in: ${address}#admin=${ledgers.rounds.adminToken}`);
  },
}, app.fetch);
