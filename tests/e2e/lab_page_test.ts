// The attack lab in real Chromium against the real server: the lab prepares its voters and honest
// votes, every attack is sent from the page and refused with its status, every lie of the lens is
// caught by the check it names, the ledger is unchanged afterwards and the auditor passes. The
// page runs under the server's Content-Security-Policy, and screenshots are saved for a look.
import assert from "node:assert/strict";
import { checkForkEvidence } from "../../lib/protocol/head.ts";
import { ATTACKS } from "../../lib/app/attacks.ts";
import { LIES } from "../../lib/app/lies.ts";
import { build } from "../../scripts/build.ts";
import { call } from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
const ROOT = new URL("../../", import.meta.url);

async function ledger(url: string) {
  const [status, tally] = await Promise.all([
    call(url, "GET", "/api/block/status"),
    call(url, "GET", "/api/tally"),
  ]);
  return { height: status.body.height, tally: tally.body };
}

Deno.test({
  name: "the lab runs every attack and every lie from the page; the ledger stays as it was",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { BLOCK_INTERVAL_MS: "700", RING_SIZE: "4" } });
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const violations: string[] = [];
      page.on("console", (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });

      await t.step("the voting page and the board link to the lab", async () => {
        for (const path of ["", "board"]) {
          await page.goto(server.url + path);
          assert.equal(await page.locator('a[href="/lab"]').count(), 1, `/${path}`);
        }
      });

      await t.step("the lab prepares its own voters and honest votes", async () => {
        await page.goto(`${server.url}lab`);
        await page.locator('.lab[data-ready="true"]').waitFor({ timeout: 60_000 });
        assert.match(await page.locator(".lab-prep").innerText(), /Ready: 6 lab voters/);
        assert.equal(await page.evaluate(() => localStorage.getItem("voters")), null);
      });
      const before = await ledger(server.url);
      assert.equal(before.tally.total, 2, "the lab's two honest votes are sealed");

      for (const attack of ATTACKS) {
        await t.step(`attack ${attack.id}: refused with ${attack.status}`, async () => {
          await page.locator(`[data-attack="${attack.id}"]`).click();
          const result = page.locator(`[data-attack-result="${attack.id}"]`);
          await result.waitFor({ timeout: 30_000 });
          assert.equal(await result.getAttribute("data-outcome"), "refused");
          assert.equal(await result.getAttribute("data-status"), String(attack.status));
          assert.equal(
            await result.locator(".ledger-compare caption").innerText(),
            "Ledger unchanged",
          );
          assert.match(await result.locator(".lab-answer").innerText(), new RegExp(attack.code));
        });
      }

      for (const lie of LIES) {
        await t.step(`lie ${lie.id}: caught as ${lie.caughtBy}`, async () => {
          await page.locator(`[data-lie="${lie.id}"]`).click();
          const result = page.locator(`[data-lie-result="${lie.id}"]`);
          await result.waitFor({ timeout: 30_000 });
          assert.equal(await result.getAttribute("data-detected"), "true");
          const failed = (await result.getAttribute("data-failed"))!.split(",");
          assert.ok(failed.includes(lie.caughtBy), failed.join(", "));
        });
      }

      await t.step("the fork's evidence is offered as a JSON download", async () => {
        const card = page.locator('[data-lie-result="fork-chain"]');
        const [download] = await Promise.all([
          page.waitForEvent("download"),
          card.locator(".fork-download").click(),
        ]);
        const text = await Deno.readTextFile(await download.path());
        const evidence = JSON.parse(text);
        assert.equal(evidence.kind, "ringvote/v1/fork-evidence");
        // Proven under the lens's own key, never the server's (protocol §4.7).
        const lensKey = await call(server.url, "GET", "/api/lens/honest/server-key");
        const key = await call(server.url, "GET", "/api/server-key");
        assert.equal(evidence.key, lensKey.body.key);
        assert.notEqual(evidence.key, key.body.key);
        assert.equal(checkForkEvidence(evidence).ok, true);
        assert.match(await card.locator(".fork-alert").innerText(), /lab lens's key/);
      });

      await t.step("the ledger is unchanged and the auditor passes", async () => {
        assert.deepEqual(await ledger(server.url), before);
        const audit = await new Deno.Command(Deno.execPath(), {
          args: ["run", "--allow-net", "audit.ts", server.url],
          cwd: ROOT.pathname,
          stdout: "piped",
          stderr: "piped",
        }).output();
        const out = new TextDecoder().decode(audit.stdout);
        assert.equal(audit.code, 0, out);
        assert.match(out, /VERDICT: the record is consistent/);
      });

      await t.step("no policy violation, and screenshots saved", async () => {
        assert.deepEqual(violations, []);
        await Deno.mkdir(ARTIFACTS, { recursive: true });
        await page.evaluate(() => scrollTo(0, 0));
        await page.screenshot({ path: new URL("lab-1280x800.png", ARTIFACTS).pathname });
        await page.locator('[data-card="torsion-tag"]').scrollIntoViewIfNeeded();
        await page.screenshot({ path: new URL("lab-attacks-1280x800.png", ARTIFACTS).pathname });
        await page.setViewportSize({ width: 1920, height: 1080 });
        await page.evaluate(() => scrollTo(0, 0));
        await page.screenshot({ path: new URL("lab-1920x1080.png", ARTIFACTS).pathname });
        await page.locator('[data-card="fork-chain"]').scrollIntoViewIfNeeded();
        await page.screenshot({ path: new URL("lab-lies-1920x1080.png", ARTIFACTS).pathname });
        await page.screenshot({
          path: new URL("lab-full-1920.png", ARTIFACTS).pathname,
          fullPage: true,
        });
      });
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
