// The voting page's demo round in real Chromium against the real server (page §11): one click adds
// eight voters that generate keys, register and vote through their own panels, step by step; the
// panels turn green by themselves once their block is sealed, the storage holds exactly the entries
// of page §3, the tally counts eight votes, and a failure stops the round with its reason in red.
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { build } from "../../scripts/build.ts";
import { startServer } from "../helpers/server_process.ts";
import { COLOURS, launchChromium, skipWithoutChromium } from "./browser.ts";
import { axeViolations } from "./axe.ts";

const ROUND = 8;
const TOKEN = "demo-round-test-presenter-token";
const CHOICES = ["Yes", "No", "Abstain"];
const ARTIFACTS = new URL("../artifacts/", import.meta.url);
const ENTRIES = [
  "publicKey",
  "privateKey",
  "keyId",
  "voteId",
  "blockId",
  "voteContent",
  "voteSignature",
];

/** Every distinct text the demo status line and the panels' working notices showed. */
async function seenTexts(page: Page): Promise<{ demo: string[]; working: string[] }> {
  return await page.evaluate(() =>
    (globalThis as unknown as { seen: { demo: string[]; working: string[] } }).seen
  );
}

/** Waits until the demo status line has shown a text matching `pattern`: a step's text can come
 * and go between two polls of a locator, so this asks the page's own record of what it showed. */
async function sawDemoStatus(page: Page, pattern: string): Promise<void> {
  await page.waitForFunction(
    (source) =>
      (globalThis as unknown as { seen: { demo: string[] } }).seen.demo
        .some((text) => new RegExp(source).test(text)),
    pattern,
    { timeout: 30_000 },
  );
}

Deno.test({
  name: "a demo round in Chromium: one click, eight voters, eight verified votes",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    // The default ring of 8: the round's own 8 keys fill it.
    // The demo round is the presenter's (page §14.3): the page signs in with the admin token.
    const server = await startServer({ env: { BLOCK_INTERVAL_MS: "1000", ADMIN_TOKEN: TOKEN } });
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      await context.addInitScript(() => {
        const seen = { demo: [] as string[], working: [] as string[] };
        (globalThis as unknown as { seen: typeof seen }).seen = seen;
        new MutationObserver(() => {
          const demo = document.querySelector("[data-demo-status]")?.textContent ?? "";
          if (demo && !seen.demo.includes(demo)) seen.demo.push(demo);
          for (const el of document.querySelectorAll(".notice-working")) {
            const text = el.textContent ?? "";
            if (!seen.working.includes(text)) seen.working.push(text);
          }
        }).observe(document, { subtree: true, childList: true, characterData: true });
      });
      await page.goto(`${server.url}?admin=${TOKEN}`);
      await page.locator('.voting-page[data-ready="true"]').waitFor();
      const button = page.locator('[data-action="demo-round"]');
      await button.waitFor();
      const status = page.locator("[data-demo-status]");

      await t.step(
        "the control: a labelled button with its sentence, apart from the spec's",
        async () => {
          assert.equal(await button.textContent(), `Run a demo round: ${ROUND} voters`);
          assert.match(
            await page.locator(".demo-round").innerText(),
            /Adds 8 voters who each make a key, register it and vote Yes, No or Abstain at random/,
          );
          assert.equal(await page.getByRole("button", { name: "Generate A new Voter" }).count(), 1);
          assert.equal(await page.locator("section.voter").count(), 0);
        },
      );

      await t.step("one click runs the round step by step; a second click is refused", async () => {
        await button.click();
        await sawDemoStatus(page, "^Voter 1 of 8");
        assert.equal(await button.isDisabled(), true);
        await sawDemoStatus(page, "^Voter 3 of 8 \\(.+\\): registering its key…$");
        assert.equal(await button.isDisabled(), true);
        await Deno.mkdir(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: new URL("demo-round-running.png", ARTIFACTS).pathname });
        await page.locator('[data-demo-status="done"]').waitFor({ timeout: 120_000 });
        assert.equal(
          await status.textContent(),
          "Done: 8 voters registered their keys and voted. Each vote turns green once its block " +
            "is sealed.",
        );
        assert.equal(await button.isEnabled(), true);
        assert.equal(await page.locator("section.voter").count(), ROUND);

        const { demo, working } = await seenTexts(page);
        const names = await page.locator("section.voter .voter-name").allTextContents();
        // Every voter, every step, in order: all registered first, then every vote.
        const steps = demo.filter((text) => text.startsWith("Voter "));
        const expected = [
          ...names.flatMap((name, i) => [
            `Voter ${i + 1} of 8: adding a new voter with a generated name…`,
            `Voter ${i + 1} of 8 (${name}): generating its keys…`,
            `Voter ${i + 1} of 8 (${name}): registering its key…`,
          ]),
          ...names.map((name, i) => `Voter ${i + 1} of 8 (${name}): signing and submitting`),
        ];
        assert.equal(steps.length, expected.length, steps.join("\n"));
        for (const [i, text] of steps.entries()) {
          assert.ok(text.startsWith(expected[i].replace(/…$/, "")), `${text} ≠ ${expected[i]}`);
        }
        // The panels worked as under clicks: their own working notices appeared.
        for (const notice of ["Registering key…", "Signing vote…", "Verifying vote…"]) {
          assert.ok(working.includes(notice), `${notice} in ${working.join(", ")}`);
        }
      });

      await t.step(
        "all 8 panels turn green by themselves once their blocks are sealed",
        async () => {
          await page.waitForFunction(
            (n) =>
              document.querySelectorAll('[data-kind="vote"][data-status="voted"]').length === n,
            ROUND,
            { timeout: 90_000 },
          );
          const voted = page.locator('[data-kind="vote"][data-status="voted"]');
          assert.equal(await voted.count(), ROUND);
          for (let i = 0; i < ROUND; i++) {
            assert.equal(
              await voted.nth(i).evaluate((el) => getComputedStyle(el).color),
              COLOURS.green,
            );
          }
        },
      );

      await t.step("the stored entries are the specified ones", async () => {
        const storage = await page.evaluate(() => ({ ...localStorage }));
        const names = await page.locator("section.voter .voter-name").allTextContents();
        assert.equal(storage.voters, names.join(","));
        // Besides the page's own remembered heads (page §12), only the entries of page §3.
        assert.deepEqual(
          Object.keys(storage).filter((key) => !key.startsWith("ringvote/")).sort(),
          ["voters", ...names.flatMap((name) => ENTRIES.map((e) => `${name}:${e}`))].sort(),
        );
        const keyIds = new Set<string>();
        for (const [i, name] of names.entries()) {
          const get = (entry: string) => storage[`${name}:${entry}`];
          assert.match(get("publicKey"), /^[0-9a-f]{64}$/);
          assert.equal(atob(get("privateKey")).length, 32);
          assert.match(get("keyId"), /^[1-8]$/);
          keyIds.add(get("keyId"));
          assert.match(get("voteId"), /^[A-Za-z0-9_-]{22}$/);
          assert.match(get("blockId"), /^[1-9][0-9]*$/);
          assert.ok(CHOICES.includes(get("voteContent")), get("voteContent"));
          const signature = JSON.parse(get("voteSignature"));
          assert.deepEqual(Object.keys(signature), ["c0", "r", "I", "ring"]);
          assert.equal(signature.ring.length, 8);
          assert.ok(signature.ring.includes(get("publicKey")));
          const panel = page.locator("section.voter").nth(i);
          assert.equal(
            await panel.locator('[data-kind="key"]').textContent(),
            `Key Registered with ID: ${get("keyId")}`,
          );
          assert.equal(
            await panel.locator('[data-kind="vote"]').textContent(),
            `Vote Voted with Block ID: ${get("blockId")} and Vote ID: ${get("voteId")}`,
          );
          assert.equal(
            await panel.getByPlaceholder("Vote Content").inputValue(),
            get("voteContent"),
          );
        }
        assert.equal(keyIds.size, ROUND);
      });

      await t.step("the tally counts 8 votes", async () => {
        const tally = await (await fetch(`${server.url}api/tally`)).json();
        assert.equal(tally.total, ROUND);
        const counted = tally.results.reduce((n: number, r: { count: number }) => n + r.count, 0);
        assert.equal(counted, ROUND);
        for (const r of tally.results) assert.ok(CHOICES.includes(r.payload), r.payload);
      });

      await t.step("screenshot after the round; axe finds nothing at 1280 and 390 px", async () => {
        const panels = page.locator("section.voter");
        await panels.last().locator('[data-kind="ring"][data-effective-anonymity]').waitFor({
          timeout: 30_000,
        });
        await panels.last().locator('[data-kind="tag"]').waitFor({ timeout: 30_000 });
        await Deno.mkdir(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: new URL("demo-round.png", ARTIFACTS).pathname });
        assert.deepEqual(await axeViolations(page), [], "1280 px");
        await page.setViewportSize({ width: 390, height: 900 });
        assert.deepEqual(await axeViolations(page), [], "390 px");
        assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 390);
        await page.setViewportSize({ width: 1280, height: 900 });
      });

      await t.step(
        "a failing step stops the round, its reason red on the status line",
        async () => {
          await page.route("**/api/pki/key", (route) =>
            route.fulfill({
              status: 503,
              contentType: "application/json",
              body: JSON.stringify({ error: { code: "unavailable", message: "Try again later" } }),
            }));
          await button.click();
          const failed = page.locator('[data-demo-status="failed"]');
          await failed.waitFor({ timeout: 30_000 });
          assert.match(
            (await failed.textContent())!,
            /^Stopped at voter 1 of 8 \(.+\), registering its key: POST \/api\/pki\/key answered 503: /,
          );
          assert.equal(await failed.evaluate((el) => getComputedStyle(el).color), COLOURS.red);
          assert.equal(await button.isEnabled(), true);
          assert.equal(await page.locator("section.voter").count(), ROUND + 1);
          assert.equal(await page.locator('[data-kind="vote"]').count(), ROUND, "no vote section");
          assert.deepEqual(await axeViolations(page), [], "a stopped round");
          await page.unroute("**/api/pki/key");
        },
      );
      assert.deepEqual(pageErrors, []);
      await context.close();
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
