// Builds, once, a ledger of really signed votes for the benchmarks that take a kept ledger
// (BENCH_LEDGER=FILE, BENCH_LEDGER_DIR=DIR): one key per vote, rings of 8, blocks of 100, the
// payloads and rings tests/helpers/ledger_builder.ts gives them, the signing spread over a worker
// per core. A file that holds the ledger already is kept.
//
//   deno run -A bench/build_ledger.ts VOTES FILE      e.g. 100000 /tmp/ledgers/ledger-100000.sqlite3
import { sealNextBlock } from "../server/sealer.ts";
import { createStore } from "../server/store/mod.ts";
import { makeVoters, ringFor } from "../tests/helpers/ledger_fixtures.ts";
import type { VoteSubmission } from "../lib/protocol/schemas.ts";
import type { SignTask } from "./build_ledger_signer.ts";

const PER_BLOCK = 100;
const RING = 8;
const PAYLOADS = ["Choice A", "Choice B", "Choice C"];
/** Votes a worker signs per message. */
const CHUNK = 200;

const [votesArg, path] = Deno.args;
const votes = Number(votesArg);
if (!Number.isSafeInteger(votes) || votes < 1 || !path) {
  console.error("usage: deno run -A bench/build_ledger.ts VOTES FILE");
  Deno.exit(2);
}

/** Signs `tasks` on `workers`, a chunk at a time each, answering the votes in order. */
function signAll(tasks: SignTask[], workers: Worker[]): Promise<VoteSubmission[]>[] {
  const chunks: Promise<VoteSubmission[]>[] = [];
  const pending = new Map<number, (votes: VoteSubmission[]) => void>();
  for (const worker of workers) {
    worker.onmessage = ({ data }) => pending.get(data.id)!(data.votes);
  }
  for (let start = 0, id = 0; start < tasks.length; start += CHUNK, id++) {
    const chunk = tasks.slice(start, start + CHUNK);
    chunks.push(new Promise((resolve) => pending.set(id, resolve)));
    workers[id % workers.length].postMessage({ id, tasks: chunk });
  }
  return chunks;
}

const kv = await Deno.openKv(path);
const workers: Worker[] = [];
try {
  const store = await createStore(kv);
  const held = (await store.tally()).total;
  if (held === votes) {
    console.log(`${path} holds the ${votes} votes already`);
  } else if (held !== 0) {
    throw new Error(`${path} holds ${held} votes, not ${votes}: remove it`);
  } else {
    const started = performance.now();
    const voters = makeVoters(votes);
    // Registered 64 at a time: concurrent registrations share commits (ids in arrival order).
    for (let i = 0; i < voters.length; i += 64) {
      await Promise.all(voters.slice(i, i + 64).map((v) => store.registerKey(v.key)));
    }
    console.log(
      `${votes} keys registered in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
    const tasks = voters.map((signer, i) => ({
      signer,
      ring: ringFor(signer, voters, RING, i * 7),
      payload: PAYLOADS[i % PAYLOADS.length],
    }));
    for (let i = 0; i < Math.max(1, navigator.hardwareConcurrency); i++) {
      workers.push(
        new Worker(new URL("./build_ledger_signer.ts", import.meta.url), { type: "module" }),
      );
    }
    let now = 1_700_000_000_000;
    let cast = 0;
    for (const chunk of signAll(tasks, workers)) {
      for (const vote of await chunk) {
        const { payload, signature, publicKeys, tag } = vote;
        await store.submitVote({ payload, signature, publicKeys }, tag);
        cast++;
        if (cast % PER_BLOCK === 0 || cast === votes) await sealNextBlock(store, now += 60_000);
      }
      if (cast % 10_000 === 0) console.log(`${cast} votes`);
    }
    const s = ((performance.now() - started) / 1000).toFixed(0);
    console.log(`Ledger of ${votes} votes built in ${s} s: ${path}`);
  }
} finally {
  for (const worker of workers) worker.terminate();
  kv.close();
}
