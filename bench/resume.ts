// `deno task audit URL --resume FILE` against a fresh `--save`, on one ledger served by the real
// server: the record saved, 100 votes sealed since, then alternating the resumed audit (which
// verifies only those) and a fresh save of the same chain, each as the task runs it (wall time,
// process start included), and the two files compared byte for byte. Prints the times and the
// counts the resumed audit gave.
//
// Before the rounds, the record just saved is also audited offline (`deno task audit FILE`).
//
//   deno run -A bench/resume.ts [votes] [rounds]    defaults: 2000 votes, 2 rounds
//   BENCH_LEDGER=FILE deno run -A bench/resume.ts …   the ledger kept in FILE for the next run
import { sealNextBlock } from "../server/sealer.ts";
import { createStore } from "../server/store/mod.ts";
import { buildLedger } from "../tests/helpers/ledger_builder.ts";
import { makeVoters, signedVote } from "../tests/helpers/ledger_fixtures.ts";
import { startServer } from "../tests/helpers/server_process.ts";

const VOTES = Number(Deno.args[0] ?? 2000);
const ROUNDS = Number(Deno.args[1] ?? 2);
const NEW_VOTES = 100;
const AUDIT = new URL("../audit.ts", import.meta.url).pathname;

/** One run of the audit task with `args`, which must pass: wall ms and what it printed. */
async function task(...args: string[]) {
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-read", "--allow-write", AUDIT, ...args],
    stdout: "piped",
    stderr: "null",
  }).output();
  const ms = performance.now() - started;
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) throw new Error(`audit ${args.join(" ")} failed:\n${text}`);
  return { ms, text };
}

/** The ledger's KV file: BENCH_LEDGER when it exists already, else built now (and kept there). */
async function ledgerFile(): Promise<string> {
  const kept = Deno.env.get("BENCH_LEDGER");
  if (kept !== undefined && (await Deno.stat(kept).then(() => true, () => false))) return kept;
  const path = kept ?? `${await Deno.makeTempDir({ prefix: "ringvote-resume-" })}/ledger.sqlite3`;
  const kv = await Deno.openKv(path);
  await buildLedger(await createStore(kv), { votes: VOTES, perBlock: 100 });
  kv.close();
  return path;
}

/** Seals `count` more votes (rings of 8 of new keys) into the ledger at `path`, as one block. */
async function sealMore(path: string, count: number) {
  const kv = await Deno.openKv(path);
  try {
    const store = await createStore(kv);
    const voters = makeVoters(count);
    for (const v of voters) await store.registerKey(v.key);
    for (const voter of voters) {
      const ring = [...voters.filter((v) => v !== voter).slice(0, 7), voter]
        .sort((a, b) => (a.key < b.key ? -1 : 1));
      const { payload, signature, publicKeys, tag } = signedVote(voter, ring, "Choice A");
      await store.submitVote({ payload, signature, publicKeys }, tag);
    }
    await sealNextBlock(store, Date.now());
  } finally {
    kv.close();
  }
}

const dir = await Deno.makeTempDir({ prefix: "ringvote-resume-run-" });
const path = `${dir}/ledger.sqlite3`;
await Deno.copyFile(await ledgerFile(), path);
const server = await startServer({ env: { KV_PATH: path, BLOCK_INTERVAL_MS: "3600000" } });
try {
  const saved = `${dir}/saved.ndjson`;
  const save = await task(server.url, "--save", saved);
  console.log(`--save of ${VOTES} votes: ${(save.ms / 1000).toFixed(1)} s`);
  const offline = await task(saved);
  console.log(`the saved record audited offline: ${(offline.ms / 1000).toFixed(1)} s`);
  await sealMore(path, NEW_VOTES);
  const rows: string[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const copy = `${dir}/resumed-${round}.ndjson`;
    await Deno.copyFile(saved, copy);
    const resumed = await task(server.url, "--resume", copy);
    const fresh = await task(server.url, "--save", `${dir}/fresh.ndjson`);
    const [a, b] = [await Deno.readFile(copy), await Deno.readFile(`${dir}/fresh.ndjson`)];
    const identical = a.length === b.length && a.every((x, i) => x === b[i]);
    const counts = /(\d+) votes verified now, (\d+) from the record/.exec(resumed.text);
    rows.push(
      `| ${round} | ${(resumed.ms / 1000).toFixed(2)} s | ${(fresh.ms / 1000).toFixed(2)} s | ` +
        `${(resumed.ms / fresh.ms).toFixed(3)}× | ${counts?.[1]} | ${counts?.[2]} | ` +
        `${identical ? "identical" : "DIFFERENT"} |`,
    );
  }
  console.log(`\n${VOTES} votes saved, then ${NEW_VOTES} more sealed:`);
  console.log(
    "| round | --resume | fresh --save | ÷ | verified now | from the record | the two files |",
  );
  console.log("| ---: | ---: | ---: | ---: | ---: | ---: | --- |");
  for (const row of rows) console.log(row);
} finally {
  await server.stop();
  await Deno.remove(dir, { recursive: true });
}
