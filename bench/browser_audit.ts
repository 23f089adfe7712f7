// The audit at verification speed (issue 28): the board's one-click audit in headless Chromium and
// `deno task audit`, on the same ledger served by the same server process, against the server's own
// verification of the same votes with their stored combs, all measured in one run. For each ledger
// size: really signed votes (rings of 8, blocks of 100, one key per vote) written to a KV file, then
// rounds of
//
//   server   every vote of the ledger (the first 10,000 of a larger one) verified in this process
//            as a server worker does it
//            (server/verifier/jobs.ts runJob: the members' stored combs, read from KV, through a
//            member cache of one worker's share of the server's budget), after its warm-up
//   CLI      `deno task audit URL` (wall time, process start included; CPU time of the process and
//            its workers, from this process's reaped children)
//   board    the board's audit (click to verdict in a fresh page, so the workers start cold like the
//            command line's; CPU time of every Chromium process from the click to the verdict)
//
// and prints, per vote, the CPU time of each and the ratio of each audit to the server's
// verification of the same votes, medians over the rounds. The audits' CPU counts only the auditor:
// the server answering its reads is not in it. CPU times come from /proc (Linux).
//
//   deno run -A bench/browser_audit.ts [votes…]              default: 400 10000
//   BENCH_LEDGER_DIR=DIR deno run -A bench/browser_audit.ts …  ledgers kept in DIR for the next run
//   BENCH_SKIP_CLI=1 …                                        the board alone
//   BENCH_SKIP_BOARD=1 …                                      the command line alone
//
// Needs Debian's Chromium (apt-get install -y chromium); without it, says so and exits 0.
import process from "node:process";
import type { Browser } from "playwright-core";
import { createMemberCache, DEFAULT_MEMBER_BUDGET } from "../lib/protocol/member_cache.ts";
import { hexToBytes } from "../lib/protocol/bytes.ts";
import { type KeyPrecomputation, precomputeKey } from "../lib/protocol/key_precomputation.ts";
import type { RingSignature } from "../lib/protocol/ring_signature.ts";
import { decodeSignature } from "../lib/protocol/signature_wire.ts";
import { build } from "../scripts/build.ts";
import { runJob, warmUp } from "../server/verifier/jobs.ts";
import { createStore, type Store } from "../server/store/mod.ts";
import { launchChromium, skipWithoutChromium } from "../tests/e2e/browser.ts";
import { buildLedger } from "../tests/helpers/ledger_builder.ts";
import { startServer } from "../tests/helpers/server_process.ts";
import { descendants, rendererMb } from "./processes.ts";

const SIZES = Deno.args.length > 0 ? Deno.args.map(Number) : [400, 10_000];
/** Rounds per size: the small ledger is measured three times each way, the large one once. */
const roundsFor = (votes: number) => (votes <= 1000 ? 3 : 1);
/** The server's verifier threads, whose budget of decoded members is shared (server/verifier). */
const SERVER_WORKERS = 2;
/** Clock ticks per second of /proc's CPU times. */
const TICKS = 100;

// Without Chromium the bench says so (skipWithoutChromium) and ends.
if (skipWithoutChromium()) Deno.exit(0);

/** utime + stime of `/proc/{pid}/stat`, and its children's that were waited for, in seconds. */
function cpuOf(pid: number | "self"): { own: number; children: number } | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return {
      own: (Number(f[11]) + Number(f[12])) / TICKS,
      children: (Number(f[13]) + Number(f[14])) / TICKS,
    };
  } catch {
    return null; // the process ended
  }
}

/** CPU seconds used so far by the processes of Chromium (every process of ours but the server). */
function browserCpu(serverPid: number): number {
  return descendants(Deno.pid, serverPid).reduce((sum, pid) => sum + (cpuOf(pid)?.own ?? 0), 0);
}

/** GNU time, for the command line's peak resident memory; without it the peak is not shown. */
const TIME = "/usr/bin/time";
const hasTime = (() => {
  try {
    return Deno.statSync(TIME).isFile;
  } catch {
    return false;
  }
})();

/** Wall time, CPU time and peak memory (MB, null unknown) of `deno task audit url`: must pass. */
async function cliAudit(url: string) {
  const task = [Deno.execPath(), "task", "--quiet", "audit", url];
  const [command, ...args] = hasTime ? [TIME, "-f", "maxrss %M", ...task] : task;
  const before = cpuOf("self")!.children;
  const started = performance.now();
  const out = await new Deno.Command(command, {
    args,
    cwd: new URL("../", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - started;
  // The task and the audit it runs have been waited for: their CPU is in our children's.
  const cpuS = cpuOf("self")!.children - before;
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) throw new Error(`deno task audit failed:\n${text}`);
  const kb = /maxrss (\d+)/.exec(new TextDecoder().decode(out.stderr))?.[1];
  return { ms, cpuS, peakMb: kb === undefined ? null : Number(kb) / 1024 };
}

/** The board's audit: its time (click to verdict, measured by the page), CPU time and workers. */
async function boardAudit(browser: Browser, { url, votes, serverPid }: {
  url: string;
  votes: number;
  serverPid: number;
}) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  try {
    await page.goto(new URL("board", url).href);
    await page.locator('.bulletin[data-ready="true"]').waitFor({ timeout: 600_000 });
    // The board recounts the tally by reading every vote; let it finish so it does not compete.
    await page.getByText(/the counts agree/).waitFor({ timeout: 600_000 });
    const before = browserCpu(serverPid);
    const idleMb = rendererMb(serverPid);
    let peakMb = idleMb;
    const sampling = setInterval(() => (peakMb = Math.max(peakMb, rendererMb(serverPid))), 250);
    await page.locator('[data-action="audit"]').click();
    const verdict = page.locator("[data-audit-verdict]");
    await verdict.waitFor({ timeout: 1_800_000 }).finally(() => clearInterval(sampling));
    const cpuS = browserCpu(serverPid) - before;
    if (await verdict.getAttribute("data-audit-verdict") !== "pass") {
      throw new Error(`The board's audit failed:\n${await page.locator("pre").textContent()}`);
    }
    const summary = await page.locator(".audit-summary").textContent() ?? "";
    if (!summary.startsWith(`${votes} votes`)) throw new Error(`Unexpected summary: ${summary}`);
    return {
      ms: Number(await verdict.getAttribute("data-audit-ms")),
      cpuS,
      idleMb,
      peakMb,
      workers: Number(/by (\d+) worker/.exec(summary)?.[1] ?? 0),
    };
  } finally {
    await page.close();
  }
}

/** A server verifier job: a vote's signature and payload, and its members' stored combs. */
type VerifyJob = {
  signature: RingSignature;
  payload: string;
  members: (KeyPrecomputation | null)[];
};

/**
 * The server's verification is measured on at most this many votes, the first in chain order: its
 * CPU per vote, not its total, is what the audits are compared with.
 */
const SERVER_SAMPLE = 10_000;

/**
 * The first `limit` sealed votes of `store` as the server's verifier receives them, in chain order,
 * each member with its stored combs (computed here, as registration does, for a key stored without
 * them).
 */
async function verifierJobs(store: Store, limit: number): Promise<VerifyJob[]> {
  const stored = new Map<string, KeyPrecomputation | null>();
  const jobs: VerifyJob[] = [];
  const { height } = await store.blocks(0, 1);
  for (let h = 1; h <= height && jobs.length < limit; h++) {
    for (let offset = 0;; offset += 100) {
      const { votes } = await store.blockVotes(h, offset, 100);
      for (const { vote } of votes) {
        const unknown = vote.publicKeys.filter((k) => !stored.has(k));
        const records = await store.lookupKeys(unknown);
        unknown.forEach((key, i) => {
          const pre = records[i]?.pre ?? precomputeKey(hexToBytes(key, 32));
          stored.set(key, typeof pre === "string" ? null : pre);
        });
        jobs.push({
          signature: decodeSignature(vote.signature),
          payload: vote.payload,
          members: vote.publicKeys.map((k) => stored.get(k)!),
        });
      }
      if (votes.length < 100) break;
    }
  }
  return jobs;
}

/** CPU seconds per vote of the server's verification of `jobs`, in this thread, with its cache. */
function serverCpuPerVote(jobs: VerifyJob[]): number {
  const cache = createMemberCache({ budgetBytes: DEFAULT_MEMBER_BUDGET / SERVER_WORKERS });
  const started = process.cpuUsage();
  for (const job of jobs) {
    if (!runJob({ type: "verify", ...job }, cache).ok) throw new Error("a vote does not verify");
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1e6 / jobs.length;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** A KV file holding a ledger of `votes` votes: kept in BENCH_LEDGER_DIR, or made for this run. */
async function ledgerFile(votes: number, tmp: string): Promise<string> {
  const kept = Deno.env.get("BENCH_LEDGER_DIR");
  const dir = kept ? new URL(kept + "/", `file://${Deno.cwd()}/`).pathname : tmp;
  await Deno.mkdir(dir, { recursive: true });
  const path = `${dir}/ledger-${votes}.sqlite3`;
  const kv = await Deno.openKv(path);
  try {
    const store = await createStore(kv);
    const held = (await store.tally()).total;
    if (held === votes) {
      console.log(`Ledger of ${votes} votes reused from ${path}`);
      return path;
    }
    if (held !== 0) throw new Error(`${path} holds ${held} votes, not ${votes}: remove it`);
    const started = performance.now();
    await buildLedger(store, { votes, perBlock: 100 });
    const s = ((performance.now() - started) / 1000).toFixed(0);
    console.log(`Ledger of ${votes} votes built in ${s} s`);
    return path;
  } finally {
    kv.close();
  }
}

const ms = (s: number) => `${(s * 1000).toFixed(2)} ms`;

await build({ ifNeeded: true });
if (!warmUp()) throw new Error("this build does not verify its own signatures");
const browser = await launchChromium();
const rows: string[] = [];
const cpuRows: string[] = [];
try {
  for (const votes of SIZES) {
    const tmp = await Deno.makeTempDir({ prefix: "ringvote-browser-audit-" });
    const kvPath = await ledgerFile(votes, tmp);
    const kv = await Deno.openKv(kvPath);
    const jobs = await verifierJobs(await createStore(kv), SERVER_SAMPLE);
    kv.close();
    if (jobs.length !== Math.min(votes, SERVER_SAMPLE)) {
      throw new Error(`read ${jobs.length} votes of ${votes}`);
    }
    const server = await startServer({ env: { KV_PATH: kvPath, BLOCK_INTERVAL_MS: "60000" } });
    const serverPid = server.process.pid;
    try {
      const [cli, board, verify, cliCpu, boardCpu, cliRatio, boardRatio] = [
        [],
        [],
        [],
        [],
        [],
        [],
        [],
      ] as number[][];
      let workers = 0;
      for (let round = 0; round < roundsFor(votes); round++) {
        const before = serverCpuPerVote(jobs);
        // BENCH_SKIP_CLI=1: the board alone (the command line's figures come out NaN).
        const c = Deno.env.get("BENCH_SKIP_CLI") === "1"
          ? { ms: NaN, cpuS: NaN, peakMb: null }
          : await cliAudit(server.url);
        // BENCH_SKIP_BOARD=1: the command line alone (the board's figures come out NaN).
        const b = Deno.env.get("BENCH_SKIP_BOARD") === "1"
          ? { ms: NaN, cpuS: NaN, workers: 0, idleMb: NaN, peakMb: NaN }
          : await boardAudit(browser, { url: server.url, votes, serverPid });
        // The server's verification before and after, so a drift of the machine's speed weighs
        // on both audits alike.
        const perVote = (before + serverCpuPerVote(jobs)) / 2;
        workers = b.workers;
        cli.push(c.ms);
        board.push(b.ms);
        verify.push(perVote);
        cliCpu.push(c.cpuS / votes);
        boardCpu.push(b.cpuS / votes);
        cliRatio.push(c.cpuS / votes / perVote);
        boardRatio.push(b.cpuS / votes / perVote);
        console.log(
          `  round ${round + 1}: server verification ${ms(perVote)} CPU/vote; ` +
            `deno task audit ${c.ms.toFixed(0)} ms, ${ms(c.cpuS / votes)} CPU/vote ` +
            `(${(c.cpuS / votes / perVote).toFixed(2)}×), peak ${c.peakMb?.toFixed(0)} MB; ` +
            `board ${b.ms.toFixed(0)} ms, ${ms(b.cpuS / votes)} CPU/vote ` +
            `(${(b.cpuS / votes / perVote).toFixed(2)}×), renderer ${
              b.idleMb.toFixed(0)
            } MB before ` +
            `the click, ${b.peakMb.toFixed(0)} MB at most during the audit (private memory)`,
        );
      }
      const [c, b] = [median(cli), median(board)];
      rows.push(
        `| ${votes} | ${(c / 1000).toFixed(2)} s | ${(b / 1000).toFixed(2)} s (${workers} ` +
          `workers) | ${(b / c).toFixed(2)}× |`,
      );
      cpuRows.push(
        `| ${votes} | ${ms(median(verify))} | ${ms(median(cliCpu))} | ` +
          `${median(cliRatio).toFixed(2)}× | ${ms(median(boardCpu))} | ` +
          `${median(boardRatio).toFixed(2)}× |`,
      );
    } finally {
      await server.stop();
      await Deno.remove(tmp, { recursive: true });
    }
  }
} finally {
  await browser.close();
}
console.log(
  "\nAudit of the whole ledger: board (Chromium, one click) vs deno task audit (medians)",
);
console.log("| votes | deno task audit | board audit | board ÷ CLI |");
console.log("| ---: | ---: | ---: | ---: |");
for (const row of rows) console.log(row);
console.log(
  "\nCPU per vote: each audit against the server's verification of the same votes (medians)",
);
console.log(
  "| votes | server verification | deno task audit | ÷ server | board | ÷ server |",
);
console.log("| ---: | ---: | ---: | ---: | ---: | ---: |");
for (const row of cpuRows) console.log(row);
