// A room votes from its phones (page §14, protocol §4.9), in real Chromium against the real server:
// the presenter signs in with the admin token and starts a round with three choices; eight phones
// at 390×844 join and choose by a choice button — each waits until the presenter opens voting,
// then votes by itself — and every panel turns green; the projector view shows the round's tally
// above the fold at 1920×1080; round 1's tally is unchanged; the presenter's QR code decodes from a
// quarter-scale screenshot; and a returning browser raises no alarm when the next round starts.
import assert from "node:assert/strict";
import type { BrowserContext, Page } from "playwright-core";
import { build } from "../../scripts/build.ts";
import { startServer } from "../helpers/server_process.ts";
import { checkAxeAtWidths } from "./axe.ts";
import { COLOURS, launchChromium, openPhone, skipWithoutChromium } from "./browser.ts";
import { decodeQrPng } from "./qr.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
const TOKEN = "room-test-presenter-0123456789";
const QUESTION = "Where do we eat tonight?";
const CHOICES = ["Pizza", "Sushi", "Salad"];
const PHONES = 8;
const PROJECTOR = { width: 1920, height: 1080 };

/** True when the whole of `selector`'s first match is inside the viewport, without scrolling. */
async function inViewport(page: Page, selector: string): Promise<boolean> {
  return await page.locator(selector).first().evaluate((el) => {
    const box = el.getBoundingClientRect();
    return box.top >= 0 && box.bottom <= innerHeight && box.height > 0 && scrollY === 0;
  });
}

Deno.test({
  name:
    "a room votes from its phones: presenter, a round with choices, eight phones, the projector",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { ADMIN_TOKEN: TOKEN, BLOCK_INTERVAL_MS: "1000" } });
    const browser = await launchChromium();
    const roundOneTally = await (await fetch(`${server.url}api/tally`)).text();
    const pageErrors: string[] = [];
    try {
      const presenterContext = await browser.newContext({ viewport: PROJECTOR });
      const presenter = await presenterContext.newPage();
      presenter.on("pageerror", (error) => pageErrors.push(String(error)));

      await t.step(
        "the presenter signs in: the token is kept and leaves the address bar",
        async () => {
          await presenter.goto(`${server.url}?admin=${TOKEN}`);
          await presenter.locator('[data-section="presenter"]').waitFor();
          assert.equal(new URL(presenter.url()).searchParams.get("admin"), null);
          assert.equal(
            await presenter.evaluate(() => localStorage.getItem("ringvote/admin-token")),
            TOKEN,
          );
          assert.equal(await presenter.locator('[data-action="demo-round"]').count(), 1);
        },
      );

      await t.step("the presenter's QR code decodes from a quarter-scale screenshot", async () => {
        await presenter.locator('[data-action="present"]').click();
        const svg = presenter.locator("[data-present] [data-qr]");
        await svg.waitFor();
        const box = (await svg.boundingBox())!;
        assert.ok(
          box.width >= 0.6 * PROJECTOR.height,
          `QR code ${box.width} px wide, under 60% of ${PROJECTOR.height}`,
        );
        const shown = (await presenter.locator("[data-present] .address-qr-url").textContent())!;
        const png = await presenter.screenshot();
        await Deno.writeFile(new URL("presenter-qr-1920x1080.png", ARTIFACTS), png);
        assert.equal(await decodeQrPng(browser, png, { scale: 0.25 }), shown);
        assert.match(shown, /^http:\/\//);
        await checkAxeAtWidths(presenter, { label: "the presenter's QR code", restore: PROJECTOR });
        await presenter.locator('[data-action="present-close"]').click();
        await presenter.locator("[data-present]").waitFor({ state: "detached" });
      });

      await t.step("the presenter starts a round with a question and three choices", async () => {
        await presenter.locator('[data-section="rounds"] [name="question"]').fill(QUESTION);
        await presenter.locator('[data-section="rounds"] [name="choices"]').fill(
          CHOICES.join("\n"),
        );
        await presenter.locator('[data-section="rounds"] [name="interval"]').fill("2");
        await presenter.locator('[data-action="start-round"]').click();
        await presenter.locator('[data-round-status="started"]').waitFor();
        await presenter.locator('.voting-page[data-round="2"]').waitFor({ timeout: 10_000 });
        const rounds = await (await fetch(`${server.url}api/rounds`)).json();
        assert.equal(rounds.current, 2);
        assert.deepEqual(rounds.rounds[1].choices, CHOICES);
        assert.equal(rounds.rounds[1].blockIntervalMs, 2000);
      });

      const phones: { context: BrowserContext; page: Page; choice: string }[] = [];
      await t.step(
        "eight phones join and choose, and wait for the presenter to open voting",
        async () => {
          for (let i = 0; i < PHONES; i++) {
            const { context, page } = await openPhone(browser);
            page.on("pageerror", (error) => pageErrors.push(String(error)));
            const choice = CHOICES[i % CHOICES.length];
            phones.push({ context, page, choice });
            await page.goto(server.url);
            await page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor();
            assert.equal(await page.locator("[data-round-question]").textContent(), QUESTION);
            // One clear call to action; the presenter's controls are not there.
            assert.equal(await page.locator('[data-action="demo-round"]').count(), 0);
            assert.equal(await page.locator('[data-section="presenter"]').count(), 0);
            assert.ok(await inViewport(page, '[data-action="join"]'), "join is above the fold");
            if (i === 0) {
              await page.screenshot({
                path: new URL("phone-before-join-390.png", ARTIFACTS).pathname,
              });
            }
            await page.locator('[data-action="join"]').click();
            await page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
            await page.locator(`[data-choice="${choice}"]`).click();
            // A round with phases: the choice is kept until voting opens (page §14.5).
            const waiting = page.locator("[data-waiting-for]");
            await waiting.waitFor();
            assert.match(
              (await waiting.textContent())!,
              new RegExp(`^Voting opens when the presenter starts it\\. Your choice "${choice}"`),
            );
            if (i === 0) {
              await page.screenshot({ path: new URL("phone-waiting-390.png", ARTIFACTS).pathname });
            }
          }
        },
      );

      await t.step("the presenter opens voting with the eight joined", async () => {
        await presenter.locator('[data-open-joined="8"]').waitFor({ timeout: 10_000 });
        await presenter.locator('[data-action="open-voting"]').click();
        await presenter.locator('[data-open-status="opened"]').waitFor();
      });

      await t.step("every panel turns green by itself, what matters above the fold", async () => {
        for (const [i, { page }] of phones.entries()) {
          const vote = page.locator('[data-kind="vote"][data-status="voted"]');
          await vote.waitFor({ timeout: 60_000 });
          assert.equal(await vote.evaluate((el) => getComputedStyle(el).color), COLOURS.green);
          await page.locator('[data-kind="tag"][data-status="once"]').waitFor({ timeout: 20_000 });
          await page.locator("[data-effective-anonymity]").waitFor({ timeout: 30_000 });
          await page.evaluate(() => scrollTo(0, 0));
          await page.evaluate(() =>
            document.querySelector(".voter")?.scrollIntoView({ block: "start" })
          );
          // What a participant looks at after voting: one screen, no scrolling of their own.
          const shown = await page.evaluate(() => {
            const visible = (selector: string) => {
              const box = document.querySelector(selector)?.getBoundingClientRect();
              return box !== undefined && box.top >= 0 && box.bottom <= innerHeight;
            };
            return {
              green: visible('[data-kind="vote"]'),
              tag: visible('[data-kind="tag"]'),
              anonymity: visible(".ring-anonymity"),
            };
          });
          assert.deepEqual(shown, { green: true, tag: true, anonymity: true }, `phone ${i + 1}`);
          if (i === 0) {
            await page.screenshot({
              path: new URL("phone-after-vote-390.png", ARTIFACTS).pathname,
            });
          }
        }
      });

      await t.step("a phone joining after voting opened is told it votes next round", async () => {
        // The round takes no late joiners (the default): its key stays out of every group.
        const { context, page } = await openPhone(browser);
        page.on("pageerror", (error) => pageErrors.push(String(error)));
        await page.goto(server.url);
        await page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor();
        await page.locator('[data-action="join"]').click();
        await page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
        await page.waitForFunction(
          () => document.querySelector("[data-waiting-for]")?.textContent?.startsWith("You joined"),
          undefined,
          { timeout: 15_000 },
        );
        assert.equal(
          await page.locator("[data-waiting-for]").textContent(),
          "You joined after voting opened: you can vote in the next round.",
        );
        await context.close();
      });

      await t.step("the round's tally counts every choice; round 1 is unchanged", async () => {
        const tally = await (await fetch(`${server.url}api/rounds/2/tally`)).json();
        assert.equal(tally.total, PHONES);
        const expected = new Map<string, number>();
        for (const { choice } of phones) expected.set(choice, (expected.get(choice) ?? 0) + 1);
        for (const { payload, count } of tally.results) assert.equal(count, expected.get(payload));
        assert.equal(await (await fetch(`${server.url}api/tally`)).text(), roundOneTally);
      });

      await t.step(
        "the projector shows the round's tally above the fold at 1920×1080",
        async () => {
          const room = await presenterContext.newPage();
          room.on("pageerror", (error) => pageErrors.push(String(error)));
          await room.goto(`${server.url}board?view=room`);
          await room.locator("[data-room-tally]").waitFor();
          for (const choice of CHOICES) {
            const count = phones.filter((p) => p.choice === choice).length;
            const row = room.locator(`[data-room-choice="${choice}"]`);
            await room.waitForFunction(
              ([selector, n]) => document.querySelector(selector)?.getAttribute("data-count") === n,
              [`[data-room-choice="${choice}"]`, String(count)] as const,
              { timeout: 20_000 },
            );
            const size = await row.evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
            assert.ok(size >= 40, `${choice}: ${size} px`);
            assert.ok(await inViewport(room, `[data-room-choice="${choice}"]`), choice);
          }
          for (
            const selector of [
              "[data-room-question]",
              "[data-room-sealed]",
              "[data-seal-countdown]",
            ]
          ) {
            assert.ok(await inViewport(room, selector), selector);
          }
          assert.equal(await room.locator("[data-room-question]").first().textContent(), QUESTION);
          await room.screenshot({
            path: new URL("room-projector-1920x1080.png", ARTIFACTS).pathname,
          });
          await room.close();
        },
      );

      await t.step("a returning phone raises no alarm when the next round starts", async () => {
        const res = await fetch(`${server.url}api/rounds`, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body: JSON.stringify({ question: "And dessert?", choices: ["Yes", "No"] }),
        });
        assert.equal(res.status, 201);
        const { page } = phones[0];
        await page.locator('.voting-page[data-round="3"]').waitFor({ timeout: 15_000 });
        await page.reload();
        await page.locator('.voting-page[data-ready="true"][data-round="3"]').waitFor();
        await page.waitForTimeout(6000);
        assert.equal(await page.locator("[data-head-alert], [data-fork-height]").count(), 0);
        await page.goto(`${server.url}board?round=2`);
        await page.locator('.bulletin[data-ready="true"]').waitFor();
        await page.waitForTimeout(3000);
        assert.equal(await page.locator("[data-head-alert], [data-fork-height]").count(), 0);
      });

      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
