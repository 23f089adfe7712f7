// Builds, once, a ledger of really signed votes for the benchmarks that take a kept ledger
// (BENCH_LEDGER=FILE, BENCH_LEDGER_DIR=DIR): one key per vote, rings of 8, blocks of 100, as
// tests/helpers/ledger_builder.ts builds them. A file that holds the ledger already is kept.
//
//   deno run -A bench/build_ledger.ts VOTES FILE      e.g. 100000 /tmp/ledgers/ledger-100000.sqlite3
import { createStore } from "../server/store/mod.ts";
import { buildLedger } from "../tests/helpers/ledger_builder.ts";

const [votesArg, path] = Deno.args;
const votes = Number(votesArg);
if (!Number.isSafeInteger(votes) || votes < 1 || !path) {
  console.error("usage: deno run -A bench/build_ledger.ts VOTES FILE");
  Deno.exit(2);
}
const kv = await Deno.openKv(path);
try {
  const store = await createStore(kv);
  const held = (await store.tally()).total;
  if (held === votes) {
    console.log(`${path} holds the ${votes} votes already`);
  } else if (held !== 0) {
    throw new Error(`${path} holds ${held} votes, not ${votes}: remove it`);
  } else {
    const started = performance.now();
    await buildLedger(store, { votes, perBlock: 100 });
    const s = ((performance.now() - started) / 1000).toFixed(0);
    console.log(`Ledger of ${votes} votes built in ${s} s: ${path}`);
  }
} finally {
  kv.close();
}
