// The election record on the board, in real Chromium against the real app: the record downloaded
// there (with its progress bar) is the very file `deno task audit URL --save FILE` writes, and the
// command line audits it offline; a record file chosen on the board is audited there with the
// one-click audit, passing when honest and naming the vote when a payload was changed.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { Page } from "playwright-core";
import { build } from "../../scripts/build.ts";
import { createApp } from "../../server/app.ts";
import { createStore } from "../../server/store/mod.ts";
import { buildLedger } from "../helpers/ledger_builder.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
const AUDIT = new URL("../../audit.ts", import.meta.url).pathname;

/** Runs `deno run {permissions} audit.ts ...args`. */
async function cli(permissions: string[], ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, AUDIT, ...args],
    stdout: "piped",
    stderr: "null",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

/** Chooses a record file named `name` holding `text` on the board; answers the audit's result. */
async function auditFile(page: Page, name: string, text: string) {
  await page.locator('input[type="file"][data-action="audit-file"]').setInputFiles({
    name,
    mimeType: "application/x-ndjson",
    buffer: Buffer.from(text),
  });
  const result = page.locator(
    `[data-audit-source="record"]:has(.audit-summary:has-text("of the election record ${name}"))`,
  );
  await result.waitFor({ timeout: 120_000 });
  return {
    verdict: await result.getAttribute("data-audit-verdict"),
    failures: await result.locator("[data-audit-failure]").evaluateAll((els) =>
      els.map((el) => ({
        voteId: el.getAttribute("data-vote-id"),
        height: Number(el.getAttribute("data-height")),
        kinds: (el.getAttribute("data-audit-failure") ?? "").split(" "),
      }))
    ),
    report: await result.locator("[data-audit-report]").textContent() ?? "",
  };
}

Deno.test({
  name: "the election record: downloaded on the board, accepted offline, audited from a file",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await build({ ifNeeded: true });
    const dir = await Deno.makeTempDir({ prefix: "ringvote-board-record-" });
    const kv = await Deno.openKv(`${dir}/ledger.sqlite3`);
    const store = await createStore(kv);
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      createApp({ store }).fetch,
    );
    const url = `http://127.0.0.1:${server.addr.port}/`;
    const browser = await launchChromium();
    try {
      await buildLedger(store, { votes: 12, perBlock: 5 });
      const context = await browser.newContext({
        acceptDownloads: true,
        viewport: { width: 1280, height: 800 },
      });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(new URL("board", url).href);
      await page.locator('.bulletin[data-ready="true"]').waitFor();

      // Slowed votes pages, so the progress bar can be seen.
      await page.route("**/api/block/id/*/votes*", async (route) => {
        await new Promise((r) => setTimeout(r, 300));
        await route.continue();
      });
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        (async () => {
          await page.locator('[data-action="download-record"]').click();
          const label = page.locator(".record-progress label");
          await label.filter({ hasText: /^Reading block [1-3] of 3$/ }).waitFor();
          assert.equal(await page.locator(".record-progress progress").getAttribute("max"), "3");
          await Deno.mkdir(ARTIFACTS, { recursive: true });
          await page.screenshot({ path: new URL("record-download.png", ARTIFACTS).pathname });
        })(),
      ]);
      await page.unroute("**/api/block/id/*/votes*");
      assert.equal(download.suggestedFilename(), "ringvote-record-3.ndjson");
      const fromBoard = `${dir}/board.ndjson`;
      await download.saveAs(fromBoard);
      await page.locator('[data-record-saved="ringvote-record-3.ndjson"]').waitFor();

      // The command line audits it with no network, and writes the same bytes from the server.
      const offline = await cli(["--allow-read"], fromBoard);
      assert.equal(offline.code, 0, offline.stdout);
      assert.match(offline.stdout, /votes verified {4}12\n/);
      const fromCli = `${dir}/cli.ndjson`;
      const saved = await cli(
        ["--allow-net", "--allow-read", "--allow-write"],
        url,
        "--save",
        fromCli,
      );
      assert.equal(saved.code, 0, saved.stdout);
      assert.deepEqual(await Deno.readFile(fromCli), await Deno.readFile(fromBoard));

      const text = await Deno.readTextFile(fromBoard);
      const honest = await auditFile(page, "honest.ndjson", text);
      assert.equal(honest.verdict, "pass", honest.report);
      assert.match(honest.report, /^Ringvote audit of honest\.ndjson \(election record, offline\)/);
      assert.match(honest.report, /votes verified {4}12\n/);

      const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
      const victim = lines.filter((l) => l.kind === "vote")[6];
      victim.payload = "Choice Z";
      const changed = lines.map((l) => JSON.stringify(l) + "\n").join("");
      const tampered = await auditFile(page, "tampered.ndjson", changed);
      assert.equal(tampered.verdict, "fail");
      assert.deepEqual(tampered.failures, [
        { voteId: victim.voteId, height: 2, kinds: ["invalid-signature"] },
      ]);
      await page.screenshot({ path: new URL("record-audit-fail.png", ARTIFACTS).pathname });
      assert.deepEqual(errors, []);
      await context.close();
    } finally {
      await browser.close();
      await server.shutdown();
      kv.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
