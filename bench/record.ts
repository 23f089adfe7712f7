// The election record (protocol §4.8) measured: its size per vote, and the time to audit a ledger
// live, to audit it while saving its record, and to audit the record offline, all in one run on
// the same ledger. Really signed votes (rings of 8, blocks of 100) are written to a temporary KV
// file and served by the real server; then, in rounds, alternating, each of
//
//   deno task audit URL                 live
//   deno task audit URL --save FILE     live, teeing the record to FILE
//   deno task audit FILE                offline, with --allow-read only
//
// is run as the task runs it (wall time, process start included; peak resident memory from
// /usr/bin/time when it is there, with the CPU time it used, less sensitive than the wall time to
// whatever else the machine runs; and that CPU time plus the server's while the audit ran, the
// whole work of one audit). The ratios are medians of each round's ratio to the live audit.
// The signature checks dominate those times, so the reading is also timed alone, in this process:
// the same audit with a stand-in checker (each vote's leaf and tag, no ring signature), through the
// API client and from the file. Prints the medians, the ratios and the record's size.
//
//   deno run -A bench/record.ts [votes] [rounds]      defaults: 10000 votes, 3 rounds
//   BENCH_LEDGER=FILE deno run -A bench/record.ts …     the ledger kept in FILE for the next run
import { createApiClient } from "../lib/client/api_client.ts";
import { auditLedger, type AuditReport } from "../lib/client/audit/audit.ts";
import { auditRecord } from "../lib/client/audit/election_record_source.ts";
import { findingText } from "../lib/client/audit/report_text.ts";
import { unverifiedVote, type VoteChecker } from "../lib/client/audit/vote_checks.ts";
import { readRecordFile } from "../record_file.ts";
import { createStore } from "../server/store/mod.ts";
import { buildLedger } from "../tests/helpers/ledger_builder.ts";
import { startServer } from "../tests/helpers/server_process.ts";

const VOTES = Number(Deno.args[0] ?? 10_000);
const ROUNDS = Number(Deno.args[1] ?? 3);
const AUDIT = new URL("../audit.ts", import.meta.url).pathname;
const TIME = "/usr/bin/time";
const hasTime = (() => {
  try {
    return Deno.statSync(TIME).isFile;
  } catch {
    return false;
  }
})();

/** One run of audit.ts with `permissions` and `args`, which must pass: wall ms, peak RSS, CPU s. */
async function run(permissions: string[], args: string[]) {
  const deno = [Deno.execPath(), "run", ...permissions, AUDIT, ...args];
  const [cmd, ...rest] = hasTime ? [TIME, "-f", "maxrss %M cpu %U %S", ...deno] : deno;
  const started = performance.now();
  const out = await new Deno.Command(cmd, { args: rest, stdout: "piped", stderr: "piped" })
    .output();
  const ms = performance.now() - started;
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) throw new Error(`audit ${args.join(" ")} failed:\n${text}`);
  const verified = Number(/votes verified\s+(\d+)/.exec(text)?.[1]);
  if (verified !== VOTES) throw new Error(`audit ${args.join(" ")} verified ${verified} votes`);
  const usage = /maxrss (\d+) cpu ([\d.]+) ([\d.]+)/.exec(new TextDecoder().decode(out.stderr));
  return {
    ms,
    rssMb: usage === null ? null : Number(usage[1]) / 1024,
    cpuS: usage === null ? null : Number(usage[2]) + Number(usage[3]),
  };
}

/** CPU seconds process `pid` has used so far (Linux /proc; null elsewhere); 100 ticks a second. */
function cpuOf(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime
  } catch {
    return null;
  }
}

/** Each vote's leaf, without its ring signature: the audit's reading, timed alone. */
const standIn: VoteChecker = (votes) => Promise.resolve(votes.map(unverifiedVote));

/** Milliseconds `audit` takes, which must pass. */
async function timed(audit: () => Promise<AuditReport>) {
  const started = performance.now();
  const report = await audit();
  if (!report.ok) throw new Error(report.failures.map(findingText).join("\n"));
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const dir = await Deno.makeTempDir({ prefix: "ringvote-record-bench-" });
// BENCH_LEDGER=FILE keeps the signed ledger in FILE and uses it again on the next run (building
// 10,000 really signed votes takes minutes); it must hold VOTES votes.
const kept = Deno.env.get("BENCH_LEDGER");
// Absolute: the server process runs in another directory.
const kvPath = kept ? new URL(kept, `file://${Deno.cwd()}/`).pathname : `${dir}/ledger.sqlite3`;
const record = `${dir}/record.ndjson`;
const kv = await Deno.openKv(kvPath);
const store = await createStore(kv);
const held = (await store.tally()).total;
if (held === 0) {
  const built = performance.now();
  await buildLedger(store, { votes: VOTES, perBlock: 100, ringSize: 8 });
  console.log(
    `Ledger of ${VOTES} votes built in ${((performance.now() - built) / 1000).toFixed(0)} s`,
  );
} else if (held !== VOTES) {
  throw new Error(`${kvPath} holds ${held} votes, not ${VOTES}: remove it or ask for ${held}`);
} else console.log(`Ledger of ${VOTES} votes reused from ${kvPath}`);
kv.close();

const NET = ["--allow-net", "--allow-read", "--allow-write"];
const kinds = ["live", "save", "offline"] as const;
type Kind = (typeof kinds)[number];
/** One list of measurements per kind of run. */
const perKind = (): Record<Kind, number[]> => ({ live: [], save: [], offline: [] });
const [times, rss, cpu] = [perKind(), perKind(), perKind()];
/** The audit's CPU time plus the server's while it ran: all the work one audit takes. */
const work = perKind();
const reading = { live: [] as number[], offline: [] as number[] };
const server = await startServer({ env: { KV_PATH: kvPath, BLOCK_INTERVAL_MS: "60000" } });
try {
  for (let round = 1; round <= ROUNDS; round++) {
    // Each round starts with another of the three, so a drift of the machine's speed favours none.
    const order = [...kinds.slice(round % 3), ...kinds.slice(0, round % 3)];
    const line: string[] = [];
    for (const kind of order) {
      const serverBefore = cpuOf(server.process.pid);
      const r = kind === "live"
        ? await run(NET, [server.url])
        : kind === "save"
        ? await run(NET, [server.url, "--save", record])
        : await run(["--allow-read"], [record]);
      times[kind].push(r.ms);
      if (r.rssMb !== null) rss[kind].push(r.rssMb);
      const serverAfter = cpuOf(server.process.pid);
      if (r.cpuS !== null) cpu[kind].push(r.cpuS);
      if (r.cpuS !== null && serverBefore !== null && serverAfter !== null) {
        work[kind].push(r.cpuS + serverAfter - serverBefore);
      }
      line.push(`${kind} ${r.ms.toFixed(0)} ms`);
    }
    console.log(`  round ${round}: ${line.join(", ")}`);
  }
  for (let round = 1; round <= ROUNDS; round++) {
    const api = createApiClient({ fetch, baseUrl: server.url });
    reading.live.push(await timed(() => auditLedger(api, { checker: standIn })));
    const input = await readRecordFile(record);
    reading.offline.push(await timed(() => auditRecord(input, { checker: standIn })));
  }
} finally {
  await server.stop();
}

const text = await Deno.readTextFile(record);
const bytes = new TextEncoder().encode(text).length;
const voteLines = text.split("\n").filter((l) => l.startsWith('{"kind":"vote"'));
const voteBytes = voteLines.reduce((sum, l) => sum + new TextEncoder().encode(l).length + 1, 0);
await Deno.remove(dir, { recursive: true });

const perRound = (kind: Kind, of: Record<Kind, number[]>) =>
  median(of[kind].map((value, round) => value / of.live[round]));
console.log(
  `\nElection record of ${VOTES} votes (rings of 8, blocks of 100), medians of ${ROUNDS} rounds`,
);
console.log(
  `record: ${bytes} bytes, ${(bytes / VOTES).toFixed(0)} bytes/vote in all, ` +
    `${(voteBytes / voteLines.length).toFixed(0)} bytes per vote line`,
);
console.log(
  "| run | command | wall time | ÷ live | CPU time | ÷ live | CPU, server included | ÷ live | peak RSS |",
);
console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
const commands = {
  live: "deno task audit URL",
  save: "deno task audit URL --save FILE",
  offline: "deno task audit FILE",
};
for (const kind of kinds) {
  const wall = `${(median(times[kind]) / 1000).toFixed(2)} s | ${
    perRound(kind, times).toFixed(2)
  }×`;
  const cpuTime = cpu[kind].length > 0
    ? `${median(cpu[kind]).toFixed(2)} s | ${perRound(kind, cpu).toFixed(2)}×`
    : "— | —";
  const allWork = work[kind].length > 0
    ? `${median(work[kind]).toFixed(2)} s | ${perRound(kind, work).toFixed(2)}×`
    : "— | —";
  const memory = rss[kind].length > 0 ? `${median(rss[kind]).toFixed(0)} MB` : "—";
  console.log(
    `| ${kind} | \`${commands[kind]}\` | ${wall} | ${cpuTime} | ${allWork} | ${memory} |`,
  );
}
const [readLive, readOffline] = [median(reading.live), median(reading.offline)];
console.log(
  `\nReading alone (stand-in checker, in process): live ${(readLive / 1000).toFixed(2)} s, ` +
    `offline ${(readOffline / 1000).toFixed(2)} s, offline ÷ live ` +
    `${(readOffline / readLive).toFixed(2)}×`,
);
