// Signing in the browser: lib/'s signRing against the straightforward signer
// (bench/baseline_lsag.ts), both bundled for the browser and run in headless Chromium in the same
// page, interleaved. Prints each ring size's medians and the ratio lib ÷ baseline.
//
//   deno run -A bench/browser_sign.ts [rounds=40]
//
// Needs Debian's Chromium (apt-get install -y chromium); without it, says so and exits 0.
import { CHROMIUM_PATH, launchChromium } from "../tests/e2e/browser.ts";

const ROUNDS = Number(Deno.args[0] ?? 40);
const RINGS = [2, 8, 32];

try {
  Deno.statSync(CHROMIUM_PATH);
} catch {
  console.log(
    `Browser signing skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`,
  );
  Deno.exit(0);
}

const dir = await Deno.makeTempDir({ prefix: "ringvote-browser-sign-" });
const bundle = `${dir}/sign.js`;
const built = await new Deno.Command(Deno.execPath(), {
  args: [
    "bundle",
    "--quiet",
    "--platform",
    "browser",
    "--minify",
    new URL("./browser_sign_entry.ts", import.meta.url).pathname,
    "-o",
    bundle,
  ],
}).output();
if (!built.success) throw new Error(`Bundling failed:\n${new TextDecoder().decode(built.stderr)}`);

const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.setContent("<!doctype html><title>sign bench</title>");
  await page.addScriptTag({ content: await Deno.readTextFile(bundle) });
  console.log(`\nSigning in Chromium, ${ROUNDS} interleaved rounds per ring size (medians)`);
  console.log("| ring | baseline | lib | lib ÷ baseline |");
  console.log("| ---: | ---: | ---: | ---: |");
  for (const n of RINGS) {
    const { baselineMs, libMs } = await page.evaluate(
      ([n, rounds]) => {
        const bench = (globalThis as unknown as {
          signBench(n: number, rounds: number): { baselineMs: number; libMs: number };
        }).signBench;
        return bench(n, rounds);
      },
      [n, n > 8 ? Math.max(5, ROUNDS >> 2) : ROUNDS],
    );
    const ratio = (libMs / baselineMs).toFixed(2);
    console.log(`| ${n} | ${baselineMs.toFixed(1)} ms | ${libMs.toFixed(1)} ms | ${ratio}× |`);
  }
} finally {
  await browser.close();
  await Deno.remove(dir, { recursive: true });
}
