// The log in real Chromium: the voting page and the board remember the heads and the checkpoint
// signed through the lens telling no lie (every API read routed to /api/lens/honest/…, the log's
// included), then the same pages are served the lens's forked history and its forked log
// (/api/lens/fork-chain/…). Both must raise the fork alert with a download of checkpoint fork
// evidence that checks out with the lens key alone — never the server key — and neither may
// raise it before. A page that remembered the server's own heads and checkpoint and is then shown
// the lens's key raises the changed-key alert and keeps what it remembered.
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { checkEvidence } from "../../lib/client/audit/evidence.ts";
import { checkLogForkEvidence } from "../../lib/protocol/log_evidence.ts";
import { build } from "../../scripts/build.ts";
import { call, makeVoters, signedVote } from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);

/** Sends every API read of `page` through the lens view that `view()` names at the time. */
async function throughLens(page: Page, view: () => string) {
  await page.route(/\/api\/(?!lens\/)/, async (route) => {
    const url = route.request().url().replace("/api/", `/api/lens/${view()}/`);
    await route.continue({ url });
  });
}

/** The remembered heads in `page`'s storage. */
async function seenHeads(page: Page): Promise<{ key: string; heads: { height: number }[] }> {
  await page.waitForFunction(() => localStorage.getItem("ringvote/seen-heads") !== null);
  return JSON.parse((await page.evaluate(() => localStorage.getItem("ringvote/seen-heads")))!);
}

/** Waits until `page` has proven block `height` included in the checkpoint it accepted. */
async function provenBlock(page: Page, height: number): Promise<void> {
  await page.waitForFunction((h) => {
    const memory = JSON.parse(localStorage.getItem("ringvote/seen-log") ?? "null");
    return memory?.proven.some((name: string) => name.startsWith(`${h}:`)) ?? false;
  }, height);
}

/** The remembered log (lib/client/log/log_view.ts LogMemory) in `page`'s storage. */
async function seenLog(
  page: Page,
): Promise<{ key: string; origin: string; size: number; note: string; proven: string[] }> {
  await page.waitForFunction(() => localStorage.getItem("ringvote/seen-log") !== null);
  return JSON.parse((await page.evaluate(() => localStorage.getItem("ringvote/seen-log")))!);
}

Deno.test({
  name: "the voting page and the board show fork evidence when the server forks, not before",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { BLOCK_INTERVAL_MS: "300" } });
    const browser = await launchChromium();
    try {
      const voters = makeVoters(3);
      for (const v of voters) await call(server.url, "POST", "/api/pki/key", { key: v.key });
      await call(server.url, "POST", "/api/vote", signedVote(voters[0], voters, "Yes"));
      while ((await call(server.url, "GET", "/api/block/status")).body.height < 1) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const { key } = (await call(server.url, "GET", "/api/server-key")).body;
      const lensKey = (await call(server.url, "GET", "/api/lens/honest/server-key")).body.key;
      assert.notEqual(lensKey, key);
      const checkpoint = await (await fetch(new URL("/api/log/checkpoint", server.url))).text();
      const origin = checkpoint.split("\n", 1)[0];

      for (
        const [name, path, ready, showsBlocks] of [
          ["voting page", "", ".voting-page", false],
          ["board", "board", '.bulletin[data-ready="true"]', true],
        ] as const
      ) {
        await t.step(
          `${name}: no alert while honest, the alert with evidence after a fork`,
          async () => {
            const context = await browser.newContext({ acceptDownloads: true });
            const page = await context.newPage();
            let view = "honest";
            await throughLens(page, () => view);
            await page.goto(server.url + path);
            await page.locator(ready).waitFor();
            // A whole check of what the page shows: the board's block 1 proven in the lens's
            // checkpoint; the voting page, without voters, shows no block, only the checkpoint.
            if (showsBlocks) await provenBlock(page, 1);
            const seen = await seenHeads(page);
            assert.equal(seen.key, lensKey);
            const log = await seenLog(page);
            assert.equal(log.key, lensKey);
            assert.equal(log.origin, `${origin}/lens`, "the lens's log has an origin of its own");
            assert.ok(log.size >= 2, `size ${log.size}`);
            assert.equal(await page.locator(".fork-alert, .head-alert").count(), 0);

            view = "fork-chain";
            await page.reload();
            const alert = page.locator(".fork-alert");
            await alert.waitFor({ timeout: 15_000 });
            // The forked log has the remembered checkpoint's size and another root.
            assert.equal(await alert.getAttribute("data-fork-size"), String(log.size));
            assert.equal(await alert.getAttribute("data-fork-height"), null);
            const [download] = await Promise.all([
              page.waitForEvent("download"),
              alert.locator(".fork-download").click(),
            ]);
            const evidence = JSON.parse(await Deno.readTextFile(await download.path()));
            assert.equal(evidence.kind, "ringvote/v1/log-fork-evidence");
            assert.equal(
              evidence.checkpoints[0],
              log.note,
              "the checkpoint remembered comes first",
            );
            assert.deepEqual(checkLogForkEvidence(evidence), {
              ok: true,
              form: "same-size",
              origin: `${origin}/lens`,
              sizes: [log.size, log.size],
            });
            const underLens = checkEvidence(evidence, lensKey);
            assert.equal(underLens.kind === "fork" && underLens.keyMatches, true);
            const underServer = checkEvidence(evidence, key);
            assert.equal(
              underServer.kind === "fork" && underServer.keyMatches,
              false,
              "proven under the lens key, not the server's",
            );
            assert.match(await alert.innerText(), /signed summary of the server's history/);
            await Deno.mkdir(ARTIFACTS, { recursive: true });
            await page.setViewportSize({ width: 1280, height: 800 });
            await page.screenshot({
              path: new URL(`fork-alert-${path || "index"}.png`, ARTIFACTS).pathname,
            });
            await context.close();
          },
        );
      }
      await t.step("a page shown another key raises the alert and keeps its memory", async () => {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(server.url);
        await page.locator(".voting-page").waitFor();
        const before = await seenHeads(page);
        assert.equal(before.key, key);
        const log = await seenLog(page);
        assert.equal(log.key, key);
        assert.equal(log.origin, origin);
        await throughLens(page, () => "fork-chain");
        await page.reload();
        const alert = page.locator('.head-alert[data-head-alert="key-changed"]');
        await alert.waitFor({ timeout: 15_000 });
        assert.match(await alert.innerText(), /changed its signing key/);
        assert.equal(await page.locator(".fork-alert").count(), 0);
        assert.deepEqual(await seenHeads(page), before);
        assert.deepEqual(await seenLog(page), log);
        await page.setViewportSize({ width: 1280, height: 800 });
        await page.screenshot({ path: new URL("head-alert-key.png", ARTIFACTS).pathname });
        await context.close();
      });
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
