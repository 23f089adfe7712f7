// A relay that is down (protocol §7, page §14.6), in real Chromium against the real server behind a
// logging proxy, with the relay run as its own process: eight phones at 390×844 open the
// presenter's code and join, two choose; the relay is stopped before voting opens. Each phone that
// chose then says that the relay does not answer; once a relay answers again on the same address,
// both votes go through it and turn green, one vote each, and no phone ever sent the server
// anything directly.
import assert from "node:assert/strict";
import { scannedAddress, signIn, startRelayedRound } from "./relay_presenter.ts";
import type { Browser } from "playwright-core";
import { build } from "../../scripts/build.ts";
import { startRelay } from "../relay/relay_process.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";
import { isPageLoad, phoneContext, startServerBehindProxy } from "./relay_observers.ts";

const TOKEN = "relay-down-presenter-0123456789";
const CHOICES = ["Yes", "No"];
/** Phones that vote; a round opens with at least 8 keys, so the others only join. */
const PHONES = 2;
const JOINED = 8;

/** A phone whose requests to `server` carry its identity (standing for its network address). */
async function phone(browser: Browser, server: string, name: string) {
  const context = await phoneContext(browser, server, name);
  return { context, page: await context.newPage(), name };
}

Deno.test({
  name:
    "a relay that is down: the phone says so, sends nothing directly, and votes once it is back",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const { proxy, server } = await startServerBehindProxy(TOKEN);
    const relay = await startRelay(proxy.url);
    const relays = [relay];
    const browser = await launchChromium();
    const pageErrors: string[] = [];
    const phones: Awaited<ReturnType<typeof phone>>[] = [];
    try {
      const presenter = await (await browser.newContext()).newPage();
      let scanned = "";
      await t.step("the presenter names the relay and starts a round", async () => {
        await signIn(presenter, proxy.url, TOKEN);
        await startRelayedRound(presenter, {
          relay: relay.url,
          question: "Do we keep the Friday demo?",
          choices: CHOICES,
          intervalSeconds: 1,
          round: 2,
        });
        scanned = await scannedAddress(presenter);
        await presenter.locator('[data-action="present-close"]').click();
      });

      await t.step("eight phones open the code and join; two choose", async () => {
        for (let i = 0; i < JOINED; i++) {
          const p = await phone(browser, proxy.url, `phone-${i}`);
          p.page.on("pageerror", (error) => pageErrors.push(String(error)));
          phones.push(p);
          await p.page.goto(scanned);
          await p.page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor({
            timeout: 30_000,
          });
          await p.page.locator('[data-action="join"]').click();
          await p.page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
          if (i < PHONES) {
            await p.page.locator(`[data-choice="${CHOICES[i % CHOICES.length]}"]`).click();
          }
        }
      });

      await t.step("the relay stops; voting opens; each phone says the relay is down", async () => {
        await relay.stop();
        await presenter.locator(`[data-open-joined="${JOINED}"]`).waitFor({ timeout: 20_000 });
        // The presenter's call names it by its token and goes straight to the server.
        const opened = await fetch(`${server.url}api/rounds/2/voting`, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body: "{}",
        });
        assert.equal(opened.status, 200, await opened.text());
        for (const { page } of phones.slice(0, PHONES)) {
          const down = page.locator("[data-relay-down]");
          await down.waitFor({ timeout: 60_000 });
          assert.equal(
            await down.textContent(),
            `The relay at ${relay.url.replace(/\/$/, "")} does not answer: retrying…`,
          );
          assert.equal(await page.locator('[data-kind="vote"][data-status="voted"]').count(), 0);
        }
      });

      await t.step("a relay on the same port carries the votes: green, one vote each", async () => {
        const port = new URL(relay.url).port;
        const again = await startRelay(proxy.url, ["--port", port]);
        relays.push(again);
        assert.equal(again.url, relay.url);
        for (const { page } of phones.slice(0, PHONES)) {
          await page.locator('[data-kind="vote"][data-status="voted"]').waitFor({
            timeout: 120_000,
          });
          assert.equal(await page.locator("[data-relay-down]").count(), 0);
        }
        const tally = await (await fetch(`${server.url}api/rounds/2/tally`)).json();
        assert.equal(tally.total, PHONES);
      });

      await t.step("after its registration, no phone sent the server anything directly", () => {
        assert.equal(proxy.log.filter((e) => e.path.endsWith("/vote")).length, 0);
        for (const { name } of phones) {
          const mine = proxy.log.filter((e) => e.phone === name);
          const registration = mine.findIndex((e) =>
            e.method === "POST" && e.path === "/api/rounds/2/pki/key" && e.status < 300
          );
          assert.ok(registration >= 0, `${name} registered directly`);
          const after = mine.slice(registration + 1).filter((e) => !isPageLoad(e));
          assert.deepEqual(after.map((e) => `${e.method} ${e.path}`), [], name);
        }
      });
      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      for (const r of relays) await r.stop();
      await server.stop();
      await proxy.stop();
    }
  },
});
