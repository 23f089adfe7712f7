// The room's witness in a real browser (protocol §4.10, page §10.13): the presenter signs in with
// the link main.ts prints, the token in the fragment; the projector's board then starts
// witnessing, and its key is pinned as the room's without another click. A browser not signed in
// pins nothing. Over the real server on loopback, in headless Chromium.
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { WitnessList } from "../../lib/protocol/schemas.ts";
import { build } from "../../scripts/build.ts";
import { startServer } from "../helpers/server_process.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

const TOKEN = "witness-pin-test-presenter-0123";

/** The room's pinned witnesses, as `GET /api/log/witnesses` lists them. */
async function pinnedAt(url: string): Promise<string[]> {
  const list = await (await fetch(`${url}api/log/witnesses`)).json() as WitnessList;
  return list.pinned;
}

/** Starts witnessing on `page`'s board; answers the witness's vkey as the board shows it. */
async function witnessFrom(page: Page, url: string): Promise<string> {
  await page.goto(`${url}board`);
  await page.locator('.bulletin[data-ready="true"]').waitFor();
  await page.locator('[data-action="witness"]').click();
  const vkey = page.locator(".witness-vkey code");
  await vkey.waitFor();
  return (await vkey.textContent())!;
}

Deno.test({
  name: "the presenter's projector pins its witness; a browser not signed in pins nothing",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { ADMIN_TOKEN: TOKEN, BLOCK_INTERVAL_MS: "1000" } });
    const browser = await launchChromium();
    try {
      // A stranger's board witnesses too: its key is not pinned.
      const stranger = await (await browser.newContext()).newPage();
      const strangerKey = await witnessFrom(stranger, server.url);

      const projector = await (await browser.newContext()).newPage();
      await projector.goto(`${server.url}#admin=${TOKEN}`);
      await projector.locator('[data-section="presenter"]').waitFor();
      assert.equal(new URL(projector.url()).hash, "", "the token leaves the address bar");
      const projectorKey = await witnessFrom(projector, server.url);
      let pinned: string[] = [];
      for (let i = 0; i < 100 && !pinned.includes(projectorKey); i++) {
        pinned = await pinnedAt(server.url);
        if (!pinned.includes(projectorKey)) await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(pinned, [projectorKey]);
      assert.ok(!pinned.includes(strangerKey));
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
