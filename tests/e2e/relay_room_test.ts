// A room votes through a relay (protocol §7), in real Chromium against the real server behind a
// logging proxy, with the relay run as its own process (`relay.ts`): the presenter names the relay,
// its QR code carries `#relay=…&ohttp=…`; a phone opened with a wrong hash shows the relay alert and
// sends nothing; 16 phones at 390×844, each with an identity on what it sends the server (standing
// for its network address), open the code, join, choose, and turn green once the presenter opens
// voting. Checks: after its registration no phone sends the server anything but page loads; every
// vote reached the server through POST /api/ohttp; every Binary HTTP message is a multiple of 1,024
// bytes and every outer status 200; a timing attacker working from the server's log does no better
// than chance; the projector's "Who saw what" shows both sides.
import assert from "node:assert/strict";
import { scannedAddress, signIn, startRelayedRound } from "./relay_presenter.ts";
import type { Browser, Page } from "playwright-core";
import { build } from "../../scripts/build.ts";
import { keyConfigHash } from "../../lib/client/relay/fragment.ts";
import { KEEP_OPEN_TEXT } from "../../lib/client/relay/send_window.ts";
import { startRelay } from "../relay/relay_process.ts";
import { COLOURS, launchChromium, skipWithoutChromium } from "./browser.ts";
import { decodeQrPng } from "./qr.ts";
import {
  hashOf,
  isPageLoad,
  type Logged,
  pairByNextRequest,
  phoneContext,
  REQUEST_OVERHEAD,
  RESPONSE_OVERHEAD,
  startServerBehindProxy,
  withinChance,
} from "./relay_observers.ts";
import {
  countRelayed,
  figures,
  type PhoneTraffic,
  signingAt,
  summary,
  watchSigning,
} from "./relay_traffic.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
const TOKEN = "relay-room-presenter-0123456789";
const CHOICES = ["Yes", "No", "Abstain"];
const PHONES = Number(Deno.env.get("RELAY_ROOM_PHONES") ?? 24);
/** Phones of the round sent directly, for the "before" count: a round needs 8 keys to open. */
const BEFORE = 8;
const PROJECTOR = { width: 1920, height: 1080 };
/** How long the last phone to join stays in the room before its traffic is counted. */
const ROOM_STAY_MS = Number(Deno.env.get("RELAY_ROOM_STAY_MS") ?? 150_000);

/** A phone whose requests to `server` carry its identity, and whose posts to the relay are kept. */
async function phone(browser: Browser, server: string, relay: string, name: string) {
  const context = await phoneContext(browser, server, name);
  const page = await context.newPage();
  const relayPosts: Promise<string>[] = [];
  const traffic: PhoneTraffic = { name, relayed: [], registeredAt: null, signingAt: null };
  await countRelayed(page, relay, traffic);
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url() === relay) {
      relayPosts.push(hashOf(new Uint8Array(request.postDataBuffer() ?? new Uint8Array())));
    }
  });
  return { context, page, relayPosts, name, traffic };
}

Deno.test({
  name: "a room votes through a relay: the server's log cannot pair a phone with its ballot",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const { proxy, server } = await startServerBehindProxy(TOKEN);
    const relay = await startRelay(proxy.url);
    const browser = await launchChromium();
    const pageErrors: string[] = [];
    const watch = (page: Page) => page.on("pageerror", (error) => pageErrors.push(String(error)));
    const phones: Awaited<ReturnType<typeof phone>>[] = [];
    try {
      const desk = await browser.newContext({ viewport: PROJECTOR });
      const presenter = await desk.newPage();
      watch(presenter);
      let scanned = "";

      await t.step("the presenter names the relay; the code carries it and its hash", async () => {
        await signIn(presenter, proxy.url, TOKEN);
        await startRelayedRound(presenter, {
          relay: relay.url,
          question: "Do we keep the Friday demo?",
          choices: CHOICES,
          intervalSeconds: 1,
          round: 2,
        });
        scanned = await scannedAddress(presenter);
        const fragment = new URLSearchParams(new URL(scanned).hash.slice(1));
        assert.equal(fragment.get("relay"), relay.url.replace(/\/$/, ""));
        assert.equal(fragment.get("ohttp"), relay.sha256);
        const png = await presenter.locator("[data-present] [data-qr]").screenshot();
        assert.equal(await decodeQrPng(browser, png), scanned, "the QR code says the address");
        await presenter.locator('[data-action="present-close"]').click();
      });

      const projector = await desk.newPage();
      watch(projector);
      await projector.goto(`${proxy.url}board?view=room`);
      await projector.locator("[data-who-saw]").waitFor({ timeout: 20_000 });

      await t.step(
        "a phone given a wrong hash shows the relay alert and sends nothing",
        async () => {
          const wrong = await phone(browser, proxy.url, relay.url, "phone-wrong");
          const forged = keyConfigHash(crypto.getRandomValues(new Uint8Array(32)));
          await wrong.page.goto(scanned.replace(/ohttp=[^&]+/, `ohttp=${forged}`));
          const alert = wrong.page.locator("[data-relay-alert]");
          await alert.waitFor({ timeout: 20_000 });
          assert.match((await alert.textContent())!, /nothing was sent/);
          await wrong.page.locator('[data-action="join"]').click();
          await wrong.page.locator('[data-join-status="failed"]').waitFor({ timeout: 30_000 });
          const sent = proxy.log.filter((e) => e.phone === "phone-wrong" && e.method !== "GET");
          assert.deepEqual(sent, [], "no registration, no vote");
          assert.equal(wrong.relayPosts.length, 0, "nothing posted to the relay");
          await wrong.context.close();
        },
      );

      await t.step(`${PHONES} phones open the code, join and choose`, async () => {
        for (let i = 0; i < PHONES; i++) {
          const p = await phone(browser, proxy.url, relay.url, `phone-${i}`);
          watch(p.page);
          phones.push(p);
          await p.page.goto(scanned);
          await p.page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor({
            timeout: 30_000,
          });
          await p.page.locator("[data-relay-notice]").waitFor();
          await p.page.locator('[data-action="join"]').click();
          await p.page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
          await p.page.locator(`[data-choice="${CHOICES[i % CHOICES.length]}"]`).click();
        }
      });

      await t.step(
        "a joined phone whose browser forgot every file reloads before voting opens",
        async () => {
          // Its next load fetches the page's files again, and with them the code its vote runs.
          const { page } = phones[2];
          const session = await page.context().newCDPSession(page);
          await session.send("Network.clearBrowserCache");
          await session.detach();
          await page.reload();
          await page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor({
            timeout: 30_000,
          });
          // Still joined, its choice kept: the waiting line says voting has not opened.
          await page.locator("[data-waiting-for]").waitFor({ timeout: 30_000 });
          assert.equal(await page.locator('[data-action="join"]').count(), 0);
        },
      );

      let openToGreenMs = 0;
      let openedAtClock = Infinity;
      let votingOpenedAt = Infinity;
      await t.step(
        "the presenter opens voting; every phone waits its window, then green",
        async () => {
          await presenter.locator(`[data-open-joined="${PHONES}"]`).waitFor({ timeout: 20_000 });
          // Each phone notes the waiting line it shows while its vote waits for its window.
          for (const { page } of phones) {
            await watchSigning(page);
            await page.evaluate(() => {
              const seen: string[] = [];
              (globalThis as unknown as { relayWaitSeen: string[] }).relayWaitSeen = seen;
              new MutationObserver(() => {
                const text = document.querySelector("[data-relay-wait]")?.textContent;
                if (text && !seen.includes(text)) seen.push(text);
              }).observe(document.body, { subtree: true, childList: true, characterData: true });
            });
          }
          const openedAt = performance.now();
          votingOpenedAt = openedAt;
          openedAtClock = Date.now();
          await presenter.locator('[data-action="open-voting"]').click();
          await presenter.locator('[data-open-status="opened"]').waitFor();
          for (const { page } of phones) {
            const vote = page.locator('[data-kind="vote"][data-status="voted"]');
            await vote.waitFor({ timeout: 180_000 });
            assert.equal(await vote.evaluate((el) => getComputedStyle(el).color), COLOURS.green);
          }
          openToGreenMs = performance.now() - openedAt;
          for (const p of phones) Object.assign(p.traffic, await signingAt(p.page));
          const seen = await Promise.all(
            phones.map(({ page }) =>
              page.evaluate(() =>
                (globalThis as unknown as { relayWaitSeen: string[] }).relayWaitSeen
              )
            ),
          );
          const waited = seen.filter((texts) => texts.length > 0);
          assert.ok(waited.length > 0, "phones said to keep the page open while their vote waited");
          for (const texts of waited) assert.deepEqual(texts, [KEEP_OPEN_TEXT]);
          // The anonymity line says which set a timing observer is left with.
          const sealedWith = phones[0].page.locator("[data-sealed-with]");
          await sealedWith.waitFor({ timeout: 30_000 });
          assert.match(
            (await sealedWith.textContent())!,
            /^Sealed with \d+ ballots? of your group in block \d+, yours included/,
          );
          console.log(
            `voting opens → last phone green: ${
              (openToGreenMs / 1000).toFixed(1)
            } s (${PHONES} phones)`,
          );
        },
      );

      await t.step("a voted phone reloads and is green again from what it kept", async () => {
        const { page } = phones[1];
        await page.reload();
        await page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor({
          timeout: 30_000,
        });
        const vote = page.locator('[data-kind="vote"][data-status="voted"]');
        await vote.waitFor({ timeout: 60_000 });
        assert.equal(await vote.evaluate((el) => getComputedStyle(el).color), COLOURS.green);
      });

      await t.step("the room stays a while, as a hall does, every phone in it", async () => {
        // Each phone's average counts its whole time in the room: the last to join stays as long.
        const lastJoined = Math.max(...phones.map((p) => p.traffic.registeredAt ?? 0));
        const stay = lastJoined + ROOM_STAY_MS - Date.now();
        if (stay > 0) await new Promise((resolve) => setTimeout(resolve, stay));
      });

      await t.step(
        "each phone is quiet through the relay: 2 reads at the opening, 12 a minute, 20 at most",
        () => {
          const until = Date.now();
          const all = phones.map((p) => figures(p.traffic, openedAtClock, until));
          console.log(summary(all));
          for (const f of all) {
            assert.ok(f.openingReads <= 2, `${f.name}: ${f.openingReads} reads before signing`);
            assert.ok(f.perMinute <= 12, `${f.name}: ${f.perMinute.toFixed(1)} a minute`);
            assert.ok(f.busiestMinute <= 20, `${f.name}: ${f.busiestMinute} in its busiest 60 s`);
          }
        },
      );

      await t.step(
        "after its registration, no phone sends the server anything but page loads",
        () => {
          for (const { name } of phones) {
            const mine = proxy.log.filter((e) => e.phone === name);
            const registration = mine.findIndex((e) =>
              e.method === "POST" && e.path === "/api/rounds/2/pki/key" && e.status < 300
            );
            assert.ok(registration >= 0, `${name} registered directly`);
            const after = mine.slice(registration + 1).filter((e) => !isPageLoad(e));
            assert.deepEqual(after.map((e) => `${e.method} ${e.path}`), [], name);
          }
          // Code a vote needs loads at join: once voting opens, a phone that is not reloaded
          // sends the server nothing at all, not even a file of the page.
          const reloaded = phones[1].name;
          const late = proxy.log.filter((e) =>
            e.phone !== null && e.phone !== reloaded && e.at >= votingOpenedAt
          );
          assert.deepEqual(late.map((e) => `${e.phone} ${e.method} ${e.path}`), []);
        },
      );

      // Phones go on polling: the relayed requests so far, each once answered (a poll may still be
      // held at the gateway).
      const relayed = await proxy.answered((e) => e.path === "/api/ohttp");
      let linkedAfter = -1;
      await t.step("every vote reached the server through POST /api/ohttp, padded", async () => {
        assert.equal(proxy.log.filter((e) => e.path.endsWith("/vote")).length, 0);
        const { total } = await (await fetch(`${server.url}api/rounds/2/tally`)).json();
        const open = await (await fetch(`${server.url}api/rounds/2/block/open`)).json();
        assert.equal(total + open.votes, PHONES);
        for (const e of relayed) {
          assert.equal(e.phone, null, "the relay forwards no identity");
          assert.equal(e.status, 200, "outer status 200, whatever the inner one");
          assert.equal((e.bytes - REQUEST_OVERHEAD) % 1024, 0, `request of ${e.bytes} bytes`);
          assert.equal((e.responseBytes! - RESPONSE_OVERHEAD) % 1024, 0, "response padded");
        }
      });

      await t.step(
        "a timing attacker pairs relayed votes and phones no better than chance",
        async () => {
          const owner = new Map<string, string>();
          for (const p of phones) {
            for (const h of await Promise.all(p.relayPosts)) owner.set(h, p.name);
          }
          const voteBytes = Math.max(...relayed.map((e) => e.bytes));
          const votes: Logged[] = relayed.filter((e) => e.bytes === voteBytes);
          assert.equal(votes.length, PHONES, "one vote a phone, every vote of one length");
          const guesses = pairByNextRequest(votes, proxy.log);
          const correct = votes.filter((v, i) => owner.get(v.bodyHash!) === guesses[i]).length;
          linkedAfter = correct;
          assert.ok(withinChance(correct, PHONES, PHONES), `${correct} of ${PHONES} paired`);
        },
      );

      await t.step("the projector shows who saw what, both sides", async () => {
        await projector.locator(`[data-who-saw-figure="votes"][data-value="${PHONES}"]`)
          .waitFor({ timeout: 30_000 });
        const envelopes = Number(
          await projector.locator('[data-who-saw-figure="envelopes"]').getAttribute("data-value"),
        );
        assert.ok(envelopes >= PHONES, `${envelopes} envelopes`);
        assert.match(
          (await projector.locator("[data-who-saw-text]").textContent())!,
          new RegExp(
            `^The relay saw \\d+ phones and \\d+ sealed envelopes it cannot open\\. ` +
              `The server saw ${PHONES} votes, all from the relay\\.`,
          ),
        );
        // The relay runs on this machine: the projector says so, in red.
        const red = projector.locator("[data-who-saw-same-machine]");
        assert.equal(
          await red.textContent(),
          "This relay runs on the server's machine: a demonstration, no protection.",
        );
        const box = (await projector.locator("[data-who-saw]").boundingBox())!;
        assert.ok(box.y >= 0 && box.y + box.height <= PROJECTOR.height, "above the fold");
        await projector.screenshot({
          path: new URL("relay-who-saw-1920x1080.png", ARTIFACTS).pathname,
        });
      });

      await t.step("before, without the relay: every vote names its phone", async () => {
        await startRelayedRound(presenter, {
          relay: "",
          question: "The same question, sent directly",
          choices: CHOICES,
          intervalSeconds: 1,
          round: 3,
        });
        const direct = [];
        for (let i = 0; i < BEFORE; i++) {
          const p = await phone(browser, proxy.url, relay.url, `direct-${i}`);
          watch(p.page);
          direct.push(p);
          await p.page.goto(proxy.url);
          await p.page.locator('.voting-page[data-ready="true"][data-round="3"]').waitFor({
            timeout: 30_000,
          });
          await p.page.locator('[data-action="join"]').click();
          await p.page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
          await p.page.locator(`[data-choice="${CHOICES[i % CHOICES.length]}"]`).click();
        }
        await presenter.locator(`[data-open-joined="${BEFORE}"]`).waitFor({ timeout: 20_000 });
        await presenter.locator('[data-action="open-voting"]').click();
        for (const { page } of direct) {
          await page.locator('[data-kind="vote"][data-status="voted"]').waitFor({
            timeout: 120_000,
          });
        }
        const named = new Set(
          proxy.log.filter((e) => e.method === "POST" && e.path === "/api/rounds/3/vote")
            .map((e) => e.phone),
        );
        assert.equal(named.size, BEFORE, "each direct vote carried its phone's identity");
        console.log(
          `ballots the server's log links to a phone: before (direct) ${named.size} of ${BEFORE}; ` +
            `after (relay) ${linkedAfter} of ${PHONES} by the timing attacker, chance 1 in ${PHONES}`,
        );
      });

      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      await relay.stop();
      await server.stop();
      await proxy.stop();
    }
  },
});
