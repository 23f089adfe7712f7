// For demonstrators, in real Chromium against the real server: the voting page's QR code decodes
// to the address written under it, one phones can use (behind a trusted proxy too), the three
// pages fit a 390 px phone without sideways scrolling, and axe-core finds no accessibility
// violation on them at 1280 px and 390 px. Saves the voting page at both widths for a look.
import assert from "node:assert/strict";
import type { Browser, Locator, Page } from "playwright-core";
import { build } from "../../scripts/build.ts";
import { startServer } from "../helpers/server_process.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";
import { axeViolations } from "./axe.ts";
import { decodeQrPng } from "./qr.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
/** A projector's width and a phone's. */
const WIDTHS = [1280, 390] as const;
const PHONE = 390;

/** What the QR code in `svg` says: its pixels as the browser drew them, read by jsQR. */
async function decodeQr(browser: Browser, svg: Locator): Promise<string | null> {
  return await decodeQrPng(browser, await svg.screenshot());
}

/** How wide the document is: wider than the viewport means the page scrolls sideways. */
async function documentWidth(page: Page): Promise<number> {
  return await page.evaluate(() => document.documentElement.scrollWidth);
}

/** Checks `page` at each width: one `<h1>`, no axe violation, no sideways scroll on a phone. */
async function checkAtEveryWidth(page: Page, label: string): Promise<void> {
  assert.equal(await page.locator("h1").count(), 1, `${label}: one h1`);
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    assert.deepEqual(await axeViolations(page), [], `${label} at ${width} px`);
    if (width === PHONE) assert.ok(await documentWidth(page) <= PHONE, `${label} scrolls sideways`);
  }
  await page.setViewportSize({ width: WIDTHS[0], height: 900 });
}

function panel(page: Page, index: number): Locator {
  return page.locator("section.voter").nth(index);
}

/** Adds a voter; answers its panel once its key line is decided. */
async function newVoter(page: Page, index: number): Promise<Locator> {
  await page.getByRole("button", { name: "Generate A new Voter" }).click();
  const voter = panel(page, index);
  await voter.locator('[data-kind="key"][data-status="ungenerated"]').waitFor();
  return voter;
}

/** Gives `voter` new keys and registers them. */
async function registerKeys(voter: Locator): Promise<void> {
  await voter.getByRole("button", { name: "Generate new keys" }).click();
  await voter.getByRole("button", { name: "Register A Key" }).click();
  await voter.locator('[data-kind="vote"][data-status="unvoted"]').waitFor({ timeout: 30_000 });
}

Deno.test({
  name: "for demonstrators: a QR code of the page, phone width, no accessibility violation",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    // A ring of 2, so that two voters of the page can vote; it also shows the weak-ring warning.
    // TRUST_PROXY, so that the proxy step below may name the address the browser used.
    const server = await startServer({
      env: { RING_SIZE: "2", BLOCK_INTERVAL_MS: "300", TRUST_PROXY: "1" },
    });
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ viewport: { width: WIDTHS[0], height: 900 } });
      const page = await context.newPage();
      await page.goto(server.url);
      await page.locator('.voting-page[data-ready="true"]').waitFor();

      await t.step("the QR code is an inline SVG of the address phones use", async () => {
        const qr = page.locator("[data-qr]");
        assert.equal(await qr.evaluate((el) => el.tagName), "svg");
        const written = await page.locator(".address-qr-url").innerText();
        assert.equal(await decodeQr(browser, qr), written);
        assert.match(
          await page.locator(".address-qr").innerText(),
          /Scan to vote from your phone/,
        );
        // The page was opened on 127.0.0.1, which no phone reaches: the code names this machine's
        // network address on the server's port, or, on a machine with none, 127.0.0.1 under a
        // warning for the presenter. Only compared as text: no request goes to a network address.
        const { hostname, port } = new URL(written);
        assert.equal(port, String(server.port));
        if (hostname === "127.0.0.1") {
          assert.match(await page.locator("[data-address-warning]").innerText(), /PUBLIC_URL/);
        } else {
          assert.equal(await page.locator("[data-address-warning]").count(), 0);
          await page.locator("[data-address-note]").waitFor();
        }
      });

      await t.step("behind a trusted proxy it encodes the address the browser used", async () => {
        const proxied = await browser.newContext({
          extraHTTPHeaders: {
            "X-Forwarded-Host": "vote.example.org",
            "X-Forwarded-Proto": "https",
          },
        });
        const other = await proxied.newPage();
        await other.goto(server.url);
        assert.equal(
          await decodeQr(browser, other.locator("[data-qr]")),
          "https://vote.example.org/",
        );
        await proxied.close();
      });

      await t.step("the voting page's red lines pass axe: a new voter, a refusal", async () => {
        const first = await newVoter(page, 0);
        assert.deepEqual(await axeViolations(page), [], "a new voter");
        await registerKeys(first);
        // One registered key cannot fill a ring of two: a red refusal under the panel, and a
        // line saying how many more must join (page §14.2).
        await first.getByPlaceholder("Vote Content").fill("Too early");
        await first.getByRole("button", { name: "Submit Vote" }).click();
        await first.locator(".notice-problem").waitFor();
        assert.match((await first.locator("[data-waiting-for]").textContent())!, /1 more person/);
        assert.deepEqual(await axeViolations(page), [], "a refused vote");
      });

      await t.step("two voters, one voted: the voting page at both widths", async () => {
        const first = panel(page, 0);
        await registerKeys(await newVoter(page, 1));
        await first.getByPlaceholder("Vote Content").fill("Choice A");
        await first.getByRole("button", { name: "Submit Vote" }).click();
        await first.locator('[data-kind="vote"][data-status="voted"]').waitFor({ timeout: 60_000 });
        await first.locator('[data-kind="tag"]').waitFor({ timeout: 30_000 });
        await first.locator('[data-kind="ring"][data-effective-anonymity]').waitFor({
          timeout: 30_000,
        });
        await checkAtEveryWidth(page, "/");
        await Deno.mkdir(ARTIFACTS, { recursive: true });
        for (const width of WIDTHS) {
          await page.setViewportSize({ width, height: 900 });
          await page.screenshot({
            path: new URL(`voting-page-${width}.png`, ARTIFACTS).pathname,
            fullPage: true,
          });
        }
        await page.setViewportSize({ width: WIDTHS[0], height: 900 });
      });

      await t.step("the lab, ready, with an attack and a lie shown", async () => {
        await page.goto(`${server.url}lab`);
        await page.locator('.lab[data-ready="true"]').waitFor({ timeout: 60_000 });
        await page.locator('[data-attack="double-vote"]').click();
        await page.locator('[data-attack-result="double-vote"]').waitFor({ timeout: 30_000 });
        await page.locator('[data-lie="fork-chain"]').click();
        await page.locator('[data-lie-result="fork-chain"]').waitFor({ timeout: 30_000 });
        await checkAtEveryWidth(page, "/lab");
      });

      await t.step("the board, with a block, a proof, a walkthrough and the audit", async () => {
        const [voteId, blockId] = await page.goto(server.url).then(() =>
          page.evaluate(() => {
            const namespace = localStorage.getItem("voters")!.split(",")[0];
            return [`${namespace}:voteId`, `${namespace}:blockId`].map((k) =>
              localStorage.getItem(k)!
            );
          })
        );
        await page.goto(`${server.url}board?vote=${voteId}`);
        await page.locator('.bulletin[data-ready="true"]').waitFor();
        await page.locator(`[data-walkthrough="${voteId}"]`).waitFor();
        await page.locator(`.chain-block[data-height="${blockId}"]`).click();
        await page.locator(`tr[data-vote="${voteId}"]`).getByRole("button", { name: "Check proof" })
          .click();
        await page.locator("[data-proof] .proof-steps .step").last().waitFor();
        await page.locator('[data-action="audit"]').click();
        await page.locator("[data-audit-verdict]").waitFor({ timeout: 60_000 });
        await checkAtEveryWidth(page, "/board");
      });
      await context.close();
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
