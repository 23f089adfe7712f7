// The board's one-click audit in headless Chromium against `deno task audit`, on the same ledger
// served by the same server process, measured in one run, alternating. For each ledger size:
// really signed votes (rings of 8, blocks of 100) written to a temporary KV file, the real server
// started on it, then rounds of the command-line audit (wall time of `deno task audit URL`,
// process start included) and of the board's audit (from the click to the verdict, in a fresh
// page each time, so the workers' member caches start cold like the command line's). Prints the
// medians and the ratio browser ÷ command line.
//
//   deno run -A bench/browser_audit.ts [votes…]      default: 400 10000
//
// Needs Debian's Chromium (apt-get install -y chromium); without it, says so and exits 0.
import type { Browser } from "playwright-core";
import { build } from "../scripts/build.ts";
import { createStore } from "../server/store/mod.ts";
import { launchChromium, skipWithoutChromium } from "../tests/e2e/browser.ts";
import { buildLedger } from "../tests/helpers/ledger_builder.ts";
import { startServer } from "../tests/helpers/server_process.ts";

const SIZES = Deno.args.length > 0 ? Deno.args.map(Number) : [400, 10_000];
/** Rounds per size: the small ledger is measured three times each way, the large one once. */
const roundsFor = (votes: number) => (votes <= 1000 ? 3 : 1);

// Without Chromium the bench says so (skipWithoutChromium) and ends.
if (skipWithoutChromium()) Deno.exit(0);

/** Wall time of `deno task audit url`, which must pass. */
async function cliAuditMs(url: string): Promise<number> {
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "audit", url],
    cwd: new URL("../", import.meta.url).pathname,
    stdout: "piped",
    stderr: "null",
  }).output();
  const ms = performance.now() - started;
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) throw new Error(`deno task audit failed:\n${text}`);
  return ms;
}

/** The board's audit time (click to verdict, measured by the page) and its worker count. */
async function browserAuditMs(browser: Browser, url: string, votes: number) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  try {
    await page.goto(new URL("board", url).href);
    // The board's first read includes its recount of every vote; let it finish so that it does
    // not compete with the audit.
    await page.locator('.bulletin[data-ready="true"]').waitFor({ timeout: 600_000 });
    // The board recounts the tally by reading every vote; let it finish so it does not compete.
    await page.getByText(/the counts agree/).waitFor({ timeout: 600_000 });
    await page.locator('[data-action="audit"]').click();
    const verdict = page.locator("[data-audit-verdict]");
    await verdict.waitFor({ timeout: 1_800_000 });
    if (await verdict.getAttribute("data-audit-verdict") !== "pass") {
      throw new Error(`The board's audit failed:\n${await page.locator("pre").textContent()}`);
    }
    const summary = await page.locator(".audit-summary").textContent() ?? "";
    if (!summary.startsWith(`${votes} votes`)) throw new Error(`Unexpected summary: ${summary}`);
    return {
      ms: Number(await verdict.getAttribute("data-audit-ms")),
      workers: Number(/by (\d+) worker/.exec(summary)?.[1] ?? 0),
    };
  } finally {
    await page.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

await build({ ifNeeded: true });
const browser = await launchChromium();
const rows: string[] = [];
try {
  for (const votes of SIZES) {
    const dir = await Deno.makeTempDir({ prefix: "ringvote-browser-audit-" });
    const kvPath = `${dir}/ledger.sqlite3`;
    const kv = await Deno.openKv(kvPath);
    const started = performance.now();
    await buildLedger(await createStore(kv), { votes, perBlock: 100 });
    kv.close();
    console.log(
      `Ledger of ${votes} votes built in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
    const server = await startServer({ env: { KV_PATH: kvPath, BLOCK_INTERVAL_MS: "60000" } });
    try {
      const cli: number[] = [];
      const board: number[] = [];
      let workers = 0;
      for (let round = 0; round < roundsFor(votes); round++) {
        cli.push(await cliAuditMs(server.url));
        const run = await browserAuditMs(browser, server.url, votes);
        board.push(run.ms);
        workers = run.workers;
        console.log(
          `  round ${round + 1}: deno task audit ${cli.at(-1)!.toFixed(0)} ms, board ${run.ms} ms`,
        );
      }
      const [c, b] = [median(cli), median(board)];
      rows.push(
        `| ${votes} | ${(c / 1000).toFixed(2)} s | ${
          (b / 1000).toFixed(2)
        } s (${workers} workers) | ` +
          `${(b / c).toFixed(2)}× |`,
      );
    } finally {
      await server.stop();
      await Deno.remove(dir, { recursive: true });
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
