// A pin that a link cannot swap (protocol §7.4, page §14.6), in real Chromium against the real
// server behind a logging proxy, with the relay run as its own process. A phone joins a relayed
// round through the room's relay; it then opens the same origin with two other codes, one after
// the other: another relay sealing to a key of its own, and another relay forwarding to the real
// gateway with the real key. Each time it shows `[data-relay-alert]`, the other relay receives
// nothing, and its vote goes through its pinned relay and turns green. The legitimate flows: a
// phone that joined with no pin takes its first pin; a new round with a new relay, whose pin the
// phone takes at its join once checked and confirmed against the projector. A code on a poster that
// fails its check at the next join is dropped, and the phone joins with its pin.
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { scannedAddress, signIn, startRelayedRound } from "./relay_presenter.ts";
import { build } from "../../scripts/build.ts";
import { keyConfigHash, pinFragment, type RelayPin } from "../../lib/client/relay/fragment.ts";
import { encodeKeyConfigs } from "../../lib/protocol/ohttp.ts";
import { makeVoters } from "../helpers/ledger_fixtures.ts";
import { startRelay } from "../relay/relay_process.ts";
import { COLOURS, launchChromium, skipWithoutChromium } from "./browser.ts";
import { phoneContext, startServerBehindProxy } from "./relay_observers.ts";

const TOKEN = "relay-pin-presenter-0123456789";
const CHOICES = ["Yes", "No"];

/** A relay of someone else's that serves a key configuration of its own, counting every request. */
function startOwnKeyRelay() {
  const keys = encodeKeyConfigs([{
    keyId: 7,
    kemId: 0x0020,
    publicKey: crypto.getRandomValues(new Uint8Array(32)),
    suites: [{ kdfId: 1, aeadId: 1 }],
  }]);
  let requests = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => {
    requests++;
    return new Response(keys as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": "application/ohttp-keys", "access-control-allow-origin": "*" },
    });
  });
  return {
    pin: { relay: `http://127.0.0.1:${server.addr.port}`, ohttp: keyConfigHash(keys) },
    requests: () => requests,
    stop: () => server.shutdown(),
  };
}

/** A phone whose requests to `server` carry `name`, its requests to any address noted. */
async function phone(browser: Browser, server: string, name: string) {
  const context = await phoneContext(browser, server, name);
  const page = await context.newPage();
  const sent: string[] = [];
  page.on("request", (request) => sent.push(`${request.method()} ${request.url()}`));
  return { context, page, sent, name };
}

/** Opens `address` as a new load (a link or a code scanned), not a same-document hash change. */
async function open(page: Page, address: string, round: number): Promise<void> {
  await page.goto("about:blank");
  await page.goto(address);
  await page.locator(`.voting-page[data-ready="true"][data-round="${round}"]`).waitFor({
    timeout: 30_000,
  });
}

/** Registers `keys` in round `round` over HTTP, then opens its voting with the presenter's token. */
async function fillAndOpen(server: string, round: number, keys: readonly string[]) {
  for (const key of keys) {
    const joined = await fetch(`${server}api/rounds/${round}/pki/key`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ key }),
    });
    assert.equal(joined.status, 201, await joined.text());
  }
  const opened = await fetch(`${server}api/rounds/${round}/voting`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(opened.status, 200, await opened.text());
}

async function green(page: Page): Promise<void> {
  const vote = page.locator('[data-kind="vote"][data-status="voted"]');
  await vote.waitFor({ timeout: 180_000 });
  assert.equal(await vote.evaluate((el) => getComputedStyle(el).color), COLOURS.green);
}

const storedPin = (page: Page) =>
  page.evaluate(() => JSON.parse(localStorage.getItem("ringvote/relay-pin") ?? "null"));

const relayRequests = async (url: string) =>
  (await (await fetch(`${url.replace(/\/$/, "")}/stats`)).json()).requests as number;

Deno.test({
  name: "a joined phone keeps its round's relay pin whatever code it opens later",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const { proxy, server } = await startServerBehindProxy(TOKEN);
    const relay = await startRelay(proxy.url);
    const sameKey = await startRelay(proxy.url);
    const ownKey = startOwnKeyRelay();
    const browser = await launchChromium();
    const pageErrors: string[] = [];
    const keys = makeVoters(13).map((v) => v.key);
    try {
      const presenter = await (await browser.newContext()).newPage();
      await signIn(presenter, proxy.url, TOKEN);
      await startRelayedRound(presenter, {
        relay: relay.url,
        question: "Do we keep the Friday demo?",
        choices: CHOICES,
        intervalSeconds: 1,
        round: 2,
      });
      const scanned = await scannedAddress(presenter);
      await presenter.locator('[data-action="present-close"]').click();
      const real: RelayPin = { relay: relay.url.replace(/\/$/, ""), ohttp: relay.sha256 };
      const forwarding: RelayPin = { relay: sameKey.url.replace(/\/$/, ""), ohttp: relay.sha256 };
      assert.equal(sameKey.sha256, relay.sha256, "the other relay forwards with the real key");

      const held = await phone(browser, proxy.url, "phone-held");
      const plain = await phone(browser, proxy.url, "phone-plain");
      for (const p of [held, plain]) p.page.on("pageerror", (e) => pageErrors.push(String(e)));

      await t.step("one phone joins through the room's code, one with no pin", async () => {
        await open(held.page, scanned, 2);
        await open(plain.page, proxy.url, 2);
        for (const { page } of [held, plain]) {
          await page.locator('[data-action="join"]').click();
          await page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
          await page.locator('[data-choice="Yes"]').click();
        }
        assert.equal(
          await held.page.locator("[data-relay-host]").getAttribute("data-relay-host"),
          new URL(relay.url).host,
          "the phone shows its relay's host",
        );
      });

      const others = [
        { what: "another relay with its own key", pin: ownKey.pin },
        { what: "another relay forwarding to the real gateway with the real key", pin: forwarding },
      ];
      for (const { what, pin } of others) {
        await t.step(
          `the joined phone opens a code naming ${what}: an alert, its pin kept`,
          async () => {
            await open(held.page, `${proxy.url}#${pinFragment(pin)}`, 2);
            const alert = held.page.locator("[data-relay-alert]");
            await alert.waitFor({ timeout: 20_000 });
            const text = (await alert.textContent())!;
            assert.match(text, new RegExp(`names the relay ${new URL(pin.relay).host}`));
            assert.match(text, /Nothing is sent through/);
            assert.deepEqual(await storedPin(held.page), real, "the stored pin is the room's");
            assert.equal(
              await held.page.locator("[data-relay-host]").getAttribute("data-relay-host"),
              new URL(relay.url).host,
            );
          },
        );
      }

      await t.step(
        "the phone with no pin opens the room's code and takes its first pin",
        async () => {
          await open(plain.page, scanned, 2);
          await plain.page.locator("[data-relay-notice]").waitFor({ timeout: 20_000 });
          await plain.page.locator(`[data-relay-host="${new URL(relay.url).host}"]`).waitFor();
          for (let i = 0; i < 40 && (await storedPin(plain.page)) === null; i++) {
            await plain.page.waitForTimeout(250);
          }
          assert.deepEqual(await storedPin(plain.page), real, "stored once checked");
          assert.equal(await plain.page.locator("[data-relay-alert]").count(), 0);
        },
      );

      await t.step("voting opens: both votes go through the room's relay, green", async () => {
        const before = await relayRequests(relay.url);
        await fillAndOpen(server.url, 2, keys.slice(0, 6));
        await green(held.page);
        await green(plain.page);
        assert.ok((await relayRequests(relay.url)) > before, "the room's relay carried them");
        const direct = proxy.log.filter((e) => e.method === "POST" && e.path.endsWith("/vote"));
        assert.deepEqual(direct, [], "no vote sent directly");
        assert.equal((await (await fetch(`${server.url}api/rounds/2/tally`)).json()).total, 2);
      });

      await t.step("the other relays received nothing", async () => {
        assert.equal(ownKey.requests(), 0, "the relay with its own key: no request");
        assert.equal(
          await relayRequests(sameKey.url),
          0,
          "the forwarding relay: nothing forwarded",
        );
        for (const { sent, name } of [held, plain]) {
          const toOthers = sent.filter((s) =>
            s.includes(ownKey.pin.relay) || s.includes(forwarding.relay)
          );
          assert.deepEqual(toOthers, [], name);
        }
      });

      await t.step(
        "a poster's code that fails its check at the next join: dropped, the phone not blocked",
        async () => {
          await startRelayedRound(presenter, {
            relay: relay.url,
            question: "And the Tuesday one?",
            choices: CHOICES,
            round: 3,
          });
          await open(held.page, `${proxy.url}#${pinFragment(ownKey.pin)}`, 3);
          await held.page.locator("[data-relay-alert]").waitFor({ timeout: 20_000 });
          await held.page.locator('[data-action="join"]').click();
          await held.page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
          const alert = held.page.locator("[data-relay-alert]");
          assert.match((await alert.textContent())!, /was not taken .*nothing was sent through it/);
          assert.deepEqual(await storedPin(held.page), real);
          assert.deepEqual(
            await held.page.evaluate(() => localStorage.getItem("ringvote/relay-round/3")),
            JSON.stringify(real),
            "the round is joined under the room's pin",
          );
          // Its check read the poster relay's key configuration, and sent it nothing else.
          assert.deepEqual(
            held.sent.filter((s) => s.includes(ownKey.pin.relay)),
            [`GET ${ownKey.pin.relay}/.well-known/ohttp-gateway`],
          );
        },
      );

      await t.step(
        "a new round with a new relay: taken at the join, once checked and confirmed",
        async () => {
          await startRelayedRound(presenter, {
            relay: sameKey.url,
            question: "And the Monday one?",
            choices: CHOICES,
            intervalSeconds: 1,
            round: 4,
          });
          const next = await scannedAddress(presenter);
          await presenter.locator('[data-action="present-close"]').click();
          await open(held.page, next, 4);
          await held.page.locator("[data-relay-alert]").waitFor({ timeout: 20_000 });
          assert.deepEqual(await storedPin(held.page), real, "not taken at the load");
          await held.page.locator('[data-action="join"]').click();
          const confirm = held.page.locator("[data-relay-confirm]");
          await confirm.waitFor({ timeout: 30_000 });
          assert.match(
            (await confirm.textContent())!,
            new RegExp(`Check that the presenter's screen shows ${new URL(sameKey.url).host}`),
          );
          assert.equal(
            proxy.log.filter((e) => e.phone === "phone-held" && e.path === "/api/rounds/4/pki/key")
              .length,
            0,
            "no registration before the holder confirmed",
          );
          await held.page.locator('[data-action="relay-confirm"]').click();
          await held.page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
          assert.deepEqual(await storedPin(held.page), forwarding);
          await held.page.locator('[data-choice="No"]').click();
          const before = await relayRequests(sameKey.url);
          await fillAndOpen(server.url, 4, keys.slice(6, 13));
          await green(held.page);
          assert.ok((await relayRequests(sameKey.url)) > before, "the new relay carried it");
          assert.equal(await held.page.locator("[data-relay-alert]").count(), 0);
        },
      );
      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      await relay.stop();
      await sameKey.stop();
      await ownKey.stop();
      await server.stop();
      await proxy.stop();
    }
  },
});
