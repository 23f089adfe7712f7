// No downgrade (protocol §7.4, page §14.6), in real Chromium against the real server started with
// OHTTP_RELAY: the presenter's relay field is filled with it, and a phone that opened the plain
// address, with no relay pinned, is asked to scan the presenter's code, while one that opened the
// code's address is not.
import assert from "node:assert/strict";
import { build } from "../../scripts/build.ts";
import { keyConfigHash } from "../../lib/client/relay/fragment.ts";
import { startServer } from "../helpers/server_process.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

const TOKEN = "relay-required-presenter-0123456789";
const RELAY = "http://127.0.0.1:9/";

Deno.test({
  name: "where the server declares a relay, a page with none pinned asks to scan the code",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { ADMIN_TOKEN: TOKEN, OHTTP_RELAY: RELAY } });
    const browser = await launchChromium();
    try {
      const presenter = await browser.newPage();
      await presenter.goto(`${server.url}?admin=${TOKEN}`);
      await presenter.locator('[data-section="presenter"]').waitFor({ timeout: 20_000 });
      assert.equal(
        await presenter.locator("[data-relay-address]").inputValue(),
        RELAY.replace(/\/$/, ""),
        "OHTTP_RELAY fills the presenter's relay field",
      );

      const plain = await browser.newPage();
      await plain.goto(server.url);
      const asked = plain.locator('[data-relay-required="declared"]');
      await asked.waitFor({ timeout: 20_000 });
      assert.match((await asked.textContent())!, /scan the presenter's QR code/);

      const pinned = await (await browser.newContext()).newPage();
      const hash = keyConfigHash(new Uint8Array(8));
      await pinned.goto(`${server.url}#relay=${encodeURIComponent(RELAY)}&ohttp=${hash}`);
      await pinned.locator("[data-relay-notice]").waitFor({ timeout: 20_000 });
      assert.equal(await pinned.locator("[data-relay-required]").count(), 0);
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
