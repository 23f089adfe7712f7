// The anonymity lens on a large record: 10,000 sealed ballots over 20,000 keys, rings of 8. Times
// the exact analysis (with decoy use) in Deno and in headless Chromium — on the page's thread and
// through the anonymity worker, which is how the pages run it — against reading the record's JSON,
// measured in the same run. The target is at most 2 s for the worker round trip in Chromium.
//
//   deno run -A bench/anonymity.ts [rounds=5]
//
// Needs Debian's Chromium for the browser half (apt-get install -y chromium); without it, says so.
import { runLens } from "../lib/client/anonymity/anonymity_lens.ts";
import { CHROMIUM_PATH, chromiumInstalled, launchChromium } from "../tests/e2e/browser.ts";
import { benchDirectory, benchRecord, timeAgainstParse } from "./anonymity_record.ts";

const ROUNDS = Number(Deno.args[0] ?? 5);
const BALLOTS = 10_000;
const KEYS = 20_000;

const record = benchRecord({ ballots: BALLOTS, keys: KEYS });
const directory = benchDirectory(KEYS);
const deno = timeAgainstParse(record, {
  rounds: ROUNDS,
  analyse: (ballots) => runLens({ seq: 0, ballots, reveals: [], directory }),
});
console.log(`\nAnonymity lens, ${BALLOTS} ballots over ${KEYS} keys, medians of ${ROUNDS} rounds`);
console.log("| where | reading the JSON (baseline) | analysis | ÷ baseline |");
console.log("| --- | ---: | ---: | ---: |");
const row = (where: string, parseMs: number, ms: number) =>
  console.log(
    `| ${where} | ${parseMs.toFixed(0)} ms | ${ms.toFixed(0)} ms | ${(ms / parseMs).toFixed(1)}× |`,
  );
row("Deno", deno.parseMs, deno.analysisMs);

if (!chromiumInstalled()) {
  console.log(`Chromium half skipped: no ${CHROMIUM_PATH} (apt-get install -y chromium)`);
  Deno.exit(0);
}

/** `deno bundle` of one entry for the browser; answers the code. */
async function bundle(entry: URL): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-anonymity-bench-" });
  try {
    const out = `${dir}/out.js`;
    const built = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--quiet", "--platform", "browser", "--minify", entry.pathname, "-o", out],
    }).output();
    if (!built.success) {
      throw new Error(`Bundling failed:\n${new TextDecoder().decode(built.stderr)}`);
    }
    return await Deno.readTextFile(out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

// A module worker needs a real origin: a throwaway server for the page, its script and the worker.
const files: Record<string, string> = {
  "/":
    '<!doctype html><title>anonymity bench</title><script type="module" src="/entry.js"></script>',
  "/entry.js": await bundle(new URL("./anonymity_entry.ts", import.meta.url)),
  "/worker.js": await bundle(new URL("../islands/workers/anonymity.ts", import.meta.url)),
};
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  const path = new URL(req.url).pathname;
  const body = files[path];
  if (body === undefined) return new Response("not found", { status: 404 });
  const type = path === "/" ? "text/html" : "text/javascript";
  return new Response(body, { headers: { "content-type": `${type}; charset=utf-8` } });
});
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.addr.port}/`);
  await page.waitForFunction(() => "anonymityBench" in globalThis);
  const chromium = await page.evaluate(
    (options) => {
      const bench = (globalThis as unknown as {
        anonymityBench(o: typeof options): Promise<{
          parseMs: number;
          analysisMs: number;
          workerMs: number;
          workerInsideMs: number;
        }>;
      }).anonymityBench;
      return bench(options);
    },
    { ballots: BALLOTS, keys: KEYS, rounds: ROUNDS, workerUrl: "/worker.js" },
  );
  row("Chromium, page thread", chromium.parseMs, chromium.analysisMs);
  row("Chromium, worker round trip", chromium.parseMs, chromium.workerMs);
  console.log(
    `\nIn the worker the analysis itself took ${chromium.workerInsideMs.toFixed(0)} ms; ` +
      `the round trip (target ≤ 2000 ms) ${chromium.workerMs.toFixed(0)} ms.`,
  );
} finally {
  await browser.close();
  await server.shutdown();
}
