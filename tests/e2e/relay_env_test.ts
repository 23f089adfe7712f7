// `OHTTP_RELAY` is used (protocol §7.4, page §14.6, operations.md), in real Chromium against the
// real server started with it and the relay run as its own process: a presenter who only starts a
// round and presses "Show the QR code to the room" gets a code with `relay=` and `ohttp=` at once,
// the relay's `sameMachine` beside it, and eight phones at 390×844 that scan it vote through the
// relay and turn green. With the relay down, the presenter's page shows a red state and no code,
// never the plain one.
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { signIn } from "./relay_presenter.ts";
import { build } from "../../scripts/build.ts";
import { freePort, startServer } from "../helpers/server_process.ts";
import { startRelay } from "../relay/relay_process.ts";
import { COLOURS, launchChromium, PHONE_CONTEXT, skipWithoutChromium } from "./browser.ts";
import { decodeQrPng } from "./qr.ts";

const TOKEN = "relay-env-presenter-0123456789";
const CHOICES = ["Yes", "No", "Abstain"];
const PHONES = 8;

/** Starts round 2 from the presenter's form alone: the relay field is left as the server fills it. */
async function startRound(presenter: Page): Promise<void> {
  const form = presenter.locator('[data-section="rounds"]');
  await form.locator('[name="question"]').fill("Relayed by the server's own relay?");
  await form.locator('[name="choices"]').fill(CHOICES.join("\n"));
  await form.locator('[name="interval"]').fill("1");
  await presenter.locator('[data-action="start-round"]').click();
  await presenter.locator('.voting-page[data-round="2"]').waitFor({ timeout: 15_000 });
}

Deno.test({
  name: "a server with OHTTP_RELAY: the first code carries the relay, and phones vote through it",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const port = freePort();
    const relayUrl = `http://127.0.0.1:${port}`;
    const serverPort = freePort();
    const server = await startServer({
      env: {
        ADMIN_TOKEN: TOKEN,
        BLOCK_INTERVAL_MS: "1000",
        OHTTP_RELAY: relayUrl,
        PORT: String(serverPort),
        PUBLIC_URL: `http://127.0.0.1:${serverPort}/`,
      },
    });
    const relay = await startRelay(server.url, ["--port", String(port)]);
    const browser = await launchChromium();
    const pageErrors: string[] = [];
    try {
      const presenter = await (await browser.newContext()).newPage();
      await signIn(presenter, server.url, TOKEN);
      let scanned = "";
      await t.step("the presenter only presses Show the QR code: relay= and ohttp=", async () => {
        await startRound(presenter);
        await presenter.locator('[data-action="present"]').click();
        const qr = presenter.locator("[data-present] [data-relay-qr]");
        await qr.waitFor({ timeout: 20_000 });
        scanned = (await qr.getAttribute("data-relay-qr"))!;
        const fragment = new URLSearchParams(new URL(scanned).hash.slice(1));
        assert.equal(fragment.get("relay"), relayUrl);
        assert.equal(fragment.get("ohttp"), relay.sha256);
        const png = await presenter.locator("[data-present] [data-qr]").screenshot();
        assert.equal(await decodeQrPng(browser, png), scanned, "the QR code says the address");
        assert.equal(
          await presenter.locator("[data-present] [data-relay-host]").getAttribute(
            "data-relay-host",
          ),
          `127.0.0.1:${port}`,
          "the projected code names the relay's host",
        );
        // The relay runs on this machine: the presenter's page says so, in red.
        const machine = presenter.locator('[data-relay-same-machine="true"]');
        await machine.waitFor({ timeout: 20_000 });
        assert.equal(await machine.evaluate((el) => getComputedStyle(el).color), COLOURS.red);
        await presenter.locator('[data-action="present-close"]').click();
      });

      await t.step(`${PHONES} phones scan it and vote through the relay: green`, async () => {
        const phones: Page[] = [];
        const direct: string[] = [];
        for (let i = 0; i < PHONES; i++) {
          const page = await (await browser.newContext(PHONE_CONTEXT)).newPage();
          page.on("pageerror", (error) => pageErrors.push(String(error)));
          page.on("request", (r) => {
            if (r.method() === "POST" && r.url().endsWith("/vote")) direct.push(r.url());
          });
          phones.push(page);
          await page.goto(scanned);
          await page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor({
            timeout: 30_000,
          });
          await page.locator('[data-action="join"]').click();
          await page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
          await page.locator(`[data-choice="${CHOICES[i % CHOICES.length]}"]`).click();
        }
        await presenter.locator(`[data-open-joined="${PHONES}"]`).waitFor({ timeout: 20_000 });
        await presenter.locator('[data-action="open-voting"]').click();
        for (const page of phones) {
          const vote = page.locator('[data-kind="vote"][data-status="voted"]');
          await vote.waitFor({ timeout: 180_000 });
          assert.equal(await vote.evaluate((el) => getComputedStyle(el).color), COLOURS.green);
        }
        assert.deepEqual(direct, [], "no vote sent directly");
        const stats = await (await fetch(`${relayUrl}/stats`)).json();
        assert.ok(stats.requests >= PHONES, `${stats.requests} requests through the relay`);
        const tally = await (await fetch(`${server.url}api/rounds/2/tally`)).json();
        const open = await (await fetch(`${server.url}api/rounds/2/block/open`)).json();
        assert.equal(tally.total + open.votes, PHONES);
      });
      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      await relay.stop();
      await server.stop();
    }
  },
});

Deno.test({
  name: "a server with OHTTP_RELAY whose relay is down: a red state and no code",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await build({ ifNeeded: true });
    const relayUrl = `http://127.0.0.1:${freePort()}`;
    const server = await startServer({ env: { ADMIN_TOKEN: TOKEN, OHTTP_RELAY: relayUrl } });
    const browser = await launchChromium();
    try {
      const presenter = await (await browser.newContext()).newPage();
      await signIn(presenter, server.url, TOKEN);
      await startRound(presenter);
      await presenter.locator('[data-action="present"]').click();
      const failed = presenter.locator('[data-present] [data-relay-qr-state="failed"]');
      await failed.waitFor({ timeout: 30_000 });
      assert.match((await failed.textContent())!, new RegExp(`^No code: the relay ${relayUrl}`));
      assert.equal(await failed.evaluate((el) => getComputedStyle(el).color), COLOURS.red);
      assert.equal(await presenter.locator("[data-present] [data-qr]").count(), 0, "no code");
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
