// The attack lab's card attacks in real Chromium against the real server (protocol §4.7, §2.11):
// each is sent from the page to the carded practice directory and shown refused, green, with the
// status and code its card expects and the check that refuses it; the election's directory is
// untouched.
import assert from "node:assert/strict";
import { CARD_ATTACKS } from "../../lib/client/lab/card_attacks.ts";
import { build } from "../../scripts/build.ts";
import { call } from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

Deno.test({
  name: "the lab sends each card attack from the page and shows it refused by its check",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { RING_SIZE: "4", LAB_MAX_KEYS: "8" } });
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${server.url}lab`);
      await page.locator('.lab[data-ready="true"]').waitFor({ timeout: 60_000 });
      for (const attack of CARD_ATTACKS) {
        await page.locator(`[data-card-attack="${attack.id}"]`).click();
        const result = page.locator(`[data-card-attack-result="${attack.id}"]`);
        await result.waitFor({ timeout: 30_000 });
        assert.equal(await result.getAttribute("data-outcome"), "refused");
        assert.equal(await result.getAttribute("data-status"), String(attack.status));
        assert.match(await result.getAttribute("class") ?? "", /lab-good/);
        const text = await result.innerText();
        assert.ok(text.includes(attack.code), text);
        assert.ok(text.includes(attack.check), text);
      }
      const election = await call(server.url, "GET", "/api/pki/key/offset/0/limit/1");
      assert.equal(election.body.total, 0);
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
