// Signed heads in real Chromium: the voting page and the board remember the heads signed through
// the lens telling no lie (every API read routed to /api/lens/honest/…), then the same pages are
// served the lens's forked history (/api/lens/fork-chain/…). Both must raise the fork alert with
// a download of evidence that checks out with the lens key alone — never the server key — and
// neither may raise it before. A page that remembered the server's own heads and is then shown
// the lens's key raises the changed-key alert and keeps the server's heads.
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { checkForkEvidence } from "../../lib/protocol/head.ts";
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

      for (
        const [name, path, ready] of [
          ["voting page", "", ".voting-page"],
          ["board", "board", '.bulletin[data-ready="true"]'],
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
            const seen = await seenHeads(page);
            assert.equal(seen.key, lensKey);
            assert.ok(seen.heads.some((h: { height: number }) => h.height === 1));
            assert.equal(await page.locator(".fork-alert, .head-alert").count(), 0);

            view = "fork-chain";
            await page.reload();
            const alert = page.locator(".fork-alert");
            await alert.waitFor({ timeout: 15_000 });
            assert.equal(await alert.getAttribute("data-fork-height"), "1");
            const [download] = await Promise.all([
              page.waitForEvent("download"),
              alert.locator(".fork-download").click(),
            ]);
            const evidence = JSON.parse(await Deno.readTextFile(await download.path()));
            assert.equal(evidence.key, lensKey, "proven under the lens key, not the server's");
            assert.deepEqual(checkForkEvidence(evidence), { ok: true, height: 1 });
            await Deno.mkdir(ARTIFACTS, { recursive: true });
            await page.setViewportSize({ width: 1280, height: 800 });
            await page.screenshot({
              path: new URL(`fork-alert-${path || "index"}.png`, ARTIFACTS).pathname,
            });
            await context.close();
          },
        );
      }
      await t.step("a page shown another key raises the alert and keeps its heads", async () => {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(server.url);
        await page.locator(".voting-page").waitFor();
        const before = await seenHeads(page);
        assert.equal(before.key, key);
        await throughLens(page, () => "fork-chain");
        await page.reload();
        const alert = page.locator('.head-alert[data-head-alert="key-changed"]');
        await alert.waitFor({ timeout: 15_000 });
        assert.match(await alert.innerText(), /changed its signing key/);
        assert.equal(await page.locator(".fork-alert").count(), 0);
        assert.deepEqual(await seenHeads(page), before);
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
