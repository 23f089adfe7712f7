// The board's rounds and its projector view (page §10, §10.11) in real Chromium against the real
// server: round 1 gets two votes, the presenter's token starts a round with three choices, eight
// registered keys vote in it over HTTP with real ring signatures, and then /board?view=room at
// 1920×1080 shows the question, every choice with its count (0 too) in text over 40 px, the votes
// sealed and waiting, the time to the next seal and a passing audit, all inside the first screen;
// a new vote moves a bar, the audit passes again at the new height, the QR code decodes to the
// voting page's address, and a new round is followed by itself, twelve choices fitting too.
// /board?round=2 shows round 2 and /board still round 1. axe-core finds nothing at 1280 and 390
// px, and a phone does not scroll sideways.
import assert from "node:assert/strict";
import type { Browser, Locator, Page } from "playwright-core";
import { build } from "../../scripts/build.ts";
import {
  call,
  makeVoters,
  ringFor,
  signedVote,
  type TestVoter,
} from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";
import { axeViolations } from "./axe.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";
import { decodeQrPng } from "./qr.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
const TOKEN = "board-room-test-presenter-0123";
const QUESTION = "Which colour for the new logo?";
const CHOICES = ["Red", "Green", "Blue"];
/** The votes cast in round 2 at first: Green gets none, and must still be shown. */
const FIRST_VOTES = ["Red", "Blue", "Red", "Blue", "Red"];
const PROJECTOR = { width: 1920, height: 1080 };
const WIDTHS = [1280, 390] as const;
const PHONE = 390;

/** The API path of round `round`'s `path` (round 1 at /api/…). */
function at(round: number, path: string): string {
  return round === 1 ? `/api/${path}` : `/api/rounds/${round}/${path}`;
}

/** Registers `voters` in round `round`'s key directory. */
async function register(base: string, round: number, voters: TestVoter[]): Promise<void> {
  for (const voter of voters) {
    const res = await call(base, "POST", at(round, "pki/key"), { key: voter.key });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  }
}

/**
 * `voters[from + i]` votes `payloads[i]` in round `round`, each in a ring of `ringSize` of
 * `voters` (in a round, the first `ringSize` of them: its group).
 */
async function vote(
  base: string,
  round: number,
  { voters, payloads, ringSize, from = 0 }: {
    voters: TestVoter[];
    payloads: string[];
    ringSize: number;
    from?: number;
  },
): Promise<void> {
  for (const [i, payload] of payloads.entries()) {
    const signer = voters[from + i];
    // A round's ring is its group in id order: here all its voters, as they registered.
    const ring = round === 1 ? ringFor(signer, voters, ringSize) : voters.slice(0, ringSize);
    const body = signedVote(signer, ring, payload);
    const res = await call(base, "POST", at(round, "vote"), body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
  }
}

/** Waits until round `round`'s tally counts `total` sealed votes. */
async function sealed(base: string, round: number, total: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await call(base, "GET", at(round, "tally"))).body.total < total) {
    assert.ok(Date.now() < deadline, `round ${round}: ${total} votes not sealed in time`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts a round as the presenter; answers its id. */
async function startRound(base: string, question: string, choices: string[]): Promise<number> {
  const res = await fetch(new URL("/api/rounds", base), {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ question, choices, blockIntervalMs: 1000 }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()).id;
}

/** Waits until `selector`'s first match has `attribute` equal to `value`. */
async function attributeIs(page: Page, selector: string, attribute: string, value: string) {
  await page.waitForFunction(
    ([s, a, v]) => document.querySelector(s)?.getAttribute(a) === v,
    [selector, attribute, value] as const,
    { timeout: 30_000 },
  );
}

/** The font size of `locator`'s element, in CSS pixels. */
async function fontSize(locator: Locator): Promise<number> {
  return await locator.evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
}

/** What the QR code in `svg` says at a quarter of its size, as a phone at the back sees it. */
async function decodeQr(browser: Browser, svg: Locator): Promise<string | null> {
  return await decodeQrPng(browser, await svg.screenshot(), { scale: 0.25 });
}

/** Every element `selector` matches that is not wholly inside the first screen, with its box. */
async function belowTheFold(page: Page, selector: string): Promise<string[]> {
  return await page.locator(selector).evaluateAll((elements) =>
    elements.flatMap((el) => {
      const box = el.getBoundingClientRect();
      const inside = box.height > 0 && box.top >= 0 && box.left >= 0 &&
        box.bottom <= innerHeight && box.right <= innerWidth;
      return inside ? [] : [`${el.outerHTML.slice(0, 80)}: ${JSON.stringify(box)}`];
    })
  );
}

/** The elements the projector view must show on its first screen. */
const ROOM_PARTS = [
  "[data-room-question]",
  "[data-room-tally]",
  "[data-room-choice]",
  "[data-room-choice] .room-label",
  "[data-room-choice] .room-count",
  "[data-room-sealed]",
  "[data-room-waiting]",
  "[data-seal-countdown]",
  "[data-room-audit]",
  '[data-action="show-qr"]',
];

Deno.test({
  name: "the board's rounds and its projector view in Chromium",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { ADMIN_TOKEN: TOKEN, BLOCK_INTERVAL_MS: "300" } });
    const browser = await launchChromium();
    const pageErrors: string[] = [];
    try {
      // Round 1, the election: two votes for "Choice A", before any round is started.
      const electors = makeVoters(3);
      await register(server.url, 1, electors);
      await vote(server.url, 1, {
        voters: electors,
        payloads: ["Choice A", "Choice A"],
        ringSize: 3,
      });
      await sealed(server.url, 1, 2);

      const round = await startRound(server.url, QUESTION, CHOICES);
      assert.equal(round, 2);
      const voters = makeVoters(8);
      await register(server.url, round, voters);
      // A round takes votes once the presenter opens voting; each ring is then the round's group.
      const opened = await fetch(new URL(`/api/rounds/${round}/voting`, server.url), {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      });
      assert.equal(opened.status, 200, await opened.text());
      await vote(server.url, round, { voters, payloads: FIRST_VOTES, ringSize: 8 });
      await sealed(server.url, round, FIRST_VOTES.length);

      const context = await browser.newContext({ viewport: PROJECTOR, deviceScaleFactor: 1 });
      const room = await context.newPage();
      room.on("pageerror", (error) => pageErrors.push(String(error)));
      await room.goto(new URL("board?view=room", server.url).href);

      await t.step(
        "the room view follows the current round: its question, every choice",
        async () => {
          await room.locator('.room[data-round="2"] .room-body[data-ready="true"]').waitFor();
          assert.equal(await room.locator("[data-room-question]").textContent(), QUESTION);
          for (const choice of CHOICES) {
            const count = FIRST_VOTES.filter((v) => v === choice).length;
            await attributeIs(room, `[data-room-choice="${choice}"]`, "data-count", String(count));
            const row = room.locator(`[data-room-choice="${choice}"]`);
            assert.equal(await row.locator(".room-label").textContent(), choice);
            assert.equal(await row.locator(".room-count").textContent(), String(count));
          }
          assert.deepEqual(
            await room.locator("[data-room-choice]").evaluateAll((rows) =>
              rows.map((r) => r.getAttribute("data-room-choice"))
            ),
            CHOICES,
            "the choices in the order asked",
          );
          assert.equal(
            await room.locator("[data-room-sealed]").getAttribute("data-room-sealed"),
            "5",
          );
          await attributeIs(room, "[data-room-waiting]", "data-room-waiting", "0");
          // No other board section is shown.
          assert.equal(await room.locator(".bulletin, .bulletin-section, .chain").count(), 0);
        },
      );

      await t.step("large text, and everything on the first 1920×1080 screen", async () => {
        for (const part of [".room-label", ".room-count"]) {
          for (const el of await room.locator(`[data-room-choice] ${part}`).all()) {
            const size = await fontSize(el);
            assert.ok(size >= 40, `${part}: ${size} px`);
          }
        }
        assert.ok(await fontSize(room.locator("[data-room-question]")) >= 40, "the question");
        const outside: string[] = [];
        for (const part of ROOM_PARTS) {
          assert.ok(await room.locator(part).count() > 0, `${part} is shown`);
          outside.push(...await belowTheFold(room, part));
        }
        assert.deepEqual(outside, []);
        const scroll = await room.evaluate(() => ({
          height: document.documentElement.scrollHeight,
          width: document.documentElement.scrollWidth,
        }));
        assert.deepEqual(scroll, PROJECTOR, "the view does not scroll");
      });

      await t.step("the audit of the round runs by itself and passes", async () => {
        const head = (await call(server.url, "GET", at(round, "block/status"))).body.height;
        await attributeIs(room, "[data-room-audit]", "data-audit-height", String(head));
        assert.equal(
          await room.locator("[data-room-audit]").getAttribute("data-room-audit"),
          "passed",
        );
        assert.match(
          (await room.locator("[data-room-audit]").textContent())!,
          /✓ Audit passed: 5 votes in \d+ blocks?/,
        );
      });

      await t.step("the countdown names the next seal", async () => {
        const countdown = room.locator("[data-seal-countdown]");
        await room.waitForFunction(() =>
          /^\d+$/.test(
            document.querySelector("[data-seal-countdown]")?.getAttribute(
              "data-seal-countdown",
            ) ?? "",
          )
        );
        assert.match((await countdown.textContent())!, /^Next seal in 1 s$/);
        assert.equal(await countdown.getAttribute("data-votes-waiting"), "0");
      });

      await t.step("a new vote moves its bar, and the audit passes at the new height", async () => {
        await vote(server.url, round, { voters, payloads: ["Green"], ringSize: 8, from: 5 });
        await attributeIs(room, '[data-room-choice="Green"]', "data-count", "1");
        await attributeIs(room, "[data-room-sealed]", "data-room-sealed", "6");
        const head = (await call(server.url, "GET", at(round, "block/status"))).body.height;
        await attributeIs(room, "[data-room-audit]", "data-audit-height", String(head));
        assert.equal(
          await room.locator("[data-room-audit]").getAttribute("data-room-audit"),
          "passed",
        );
        await room.screenshot({ path: new URL("board-room-1920x1080.png", ARTIFACTS).pathname });
      });

      await t.step(
        "'Show the QR code' shows the voting page's address as a large QR code",
        async () => {
          const toggle = room.locator('[data-action="show-qr"]');
          assert.equal(await toggle.textContent(), "Show the QR code");
          assert.equal(await room.locator("#room-qr [data-qr]").count(), 0);
          await toggle.click();
          const svg = room.locator("#room-qr [data-qr]");
          await svg.waitFor();
          const box = (await svg.boundingBox())!;
          assert.ok(box.width >= 0.6 * PROJECTOR.height, `QR code ${box.width} px wide`);
          const address = (await room.locator("#room-qr .address-qr-url").textContent())!;
          assert.match(address, /^https?:\/\/.+\/$/);
          assert.equal(await decodeQr(browser, svg), address);
          assert.equal(await toggle.getAttribute("aria-expanded"), "true");
          assert.ok(await toggle.isVisible(), "the toggle stays above the code");
          await room.screenshot({
            path: new URL("board-room-qr-1920x1080.png", ARTIFACTS).pathname,
          });
          await toggle.click();
          await svg.waitFor({ state: "detached" });
          assert.equal(await toggle.textContent(), "Show the QR code");
        },
      );

      await t.step(
        "witnessing from the projector: the round's checkpoints cosigned, its key in the QR code",
        async () => {
          const witness = room.locator('[data-action="witness"]');
          await witness.click();
          assert.equal(await witness.getAttribute("aria-pressed"), "true");
          await room.locator('.room-witness[data-witness-activity="cosigned"]').waitFor({
            timeout: 20_000,
          });
          await room.locator('[data-action="show-qr"]').click();
          const svg = room.locator("#room-qr [data-qr]");
          await svg.waitFor();
          const scanned = (await room.locator("#room-qr").getAttribute("data-witness-qr"))!;
          assert.match(
            scanned,
            /^https?:\/\/.+\/#witness=witness\.ringvote\.local%2F[0-9a-f]{8}%2B/,
          );
          assert.equal(await decodeQr(browser, svg), scanned);
          // The server kept the projector's cosignature of the round's checkpoint.
          const note = await (await fetch(new URL("api/rounds/2/log/checkpoint", server.url)))
            .text();
          assert.match(note, /\n\u2014 witness\.ringvote\.local\/[0-9a-f]{8} /);
          await room.locator('[data-action="show-qr"]').click();
          await witness.click();
          assert.equal(await witness.getAttribute("aria-pressed"), "false");
        },
      );

      await t.step("/board?round=2 shows round 2's ledger, /board still round 1's", async () => {
        const page = await context.newPage();
        page.on("pageerror", (error) => pageErrors.push(String(error)));
        await page.goto(new URL("board?round=2", server.url).href);
        await page.locator('.bulletin[data-round="2"][data-ready="true"]').waitFor();
        assert.match((await page.locator("h1").textContent())!, /round 2/);
        await page.locator(`[data-round-question="${QUESTION}"]`).waitFor();
        const served = (payload: string) =>
          page.locator(`.tally-row[data-payload="${payload}"] .tally-count`);
        await page.waitForFunction(() =>
          document.querySelector('.tally-row[data-payload="Green"] .tally-count')?.textContent ===
            "1"
        );
        assert.equal(await served("Red").textContent(), "3");
        assert.equal(await served("Blue").textContent(), "2");
        assert.equal(await page.locator('.tally-row[data-payload="Choice A"]').count(), 0);
        // The rounds, linked, the one shown and the current one marked.
        const items = page.locator(".round-list [data-round]");
        assert.equal(await items.count(), 2);
        assert.equal(await items.nth(0).locator("a").getAttribute("href"), "/board?round=1");
        assert.equal(await items.nth(1).getAttribute("data-shown"), "true");
        assert.equal(await items.nth(1).getAttribute("data-current"), "true");
        assert.equal(await items.nth(1).locator("a").getAttribute("aria-current"), "page");
        // Beside the live line, the countdown to the next seal.
        await page.locator(".bulletin-seal [data-seal-countdown][data-votes-waiting]").waitFor();
        // The board's audit audits round 2.
        await page.locator('[data-action="audit"]').click();
        await page.locator('[data-audit-verdict="pass"]').waitFor({ timeout: 60_000 });
        assert.match(
          (await page.locator(".audit-summary").textContent())!,
          /^6 votes in \d+ blocks and 8 registered keys/,
        );

        await page.goto(new URL("board", server.url).href);
        await page.locator('.bulletin[data-round="1"][data-ready="true"]').waitFor();
        assert.equal(await page.locator("h1").textContent(), "Public bulletin board");
        await page.waitForFunction(() =>
          document.querySelector('.tally-row[data-payload="Choice A"] .tally-count')
            ?.textContent === "2"
        );
        assert.equal(await page.locator('.tally-row[data-payload="Red"]').count(), 0);
        await page.locator('.round-list [data-round="1"][data-shown="true"]').waitFor();
        await page.close();
      });

      await t.step(
        "the room view at 1280 and 390 px: no axe violation, no sideways scroll",
        async () => {
          for (const width of WIDTHS) {
            await room.setViewportSize({ width, height: width === PHONE ? 844 : 900 });
            assert.deepEqual(await axeViolations(room), [], `at ${width} px`);
            if (width === PHONE) {
              const scrollWidth = await room.evaluate(() => document.documentElement.scrollWidth);
              assert.ok(scrollWidth <= PHONE, `${scrollWidth} px wide at ${PHONE} px`);
              await room.screenshot({ path: new URL("board-room-390.png", ARTIFACTS).pathname });
            }
          }
          await room.locator('[data-action="show-qr"]').click();
          await room.locator("#room-qr [data-qr]").waitFor();
          assert.deepEqual(await axeViolations(room), [], "the QR code shown, at 390 px");
          await room.locator('[data-action="show-qr"]').click();
          await room.setViewportSize(PROJECTOR);
        },
      );

      await t.step(
        "a new round is followed by itself; a round named in the address is kept",
        async () => {
          const kept = await context.newPage();
          await kept.goto(new URL("board?view=room&round=2", server.url).href);
          await kept.locator('.room[data-round="2"] .room-body[data-ready="true"]').waitFor();
          const next = await startRound(server.url, "And the font?", ["Serif", "Sans"]);
          await room.locator(`.room[data-round="${next}"]`).waitFor({ timeout: 15_000 });
          assert.equal(await room.locator("[data-room-question]").textContent(), "And the font?");
          await attributeIs(room, '[data-room-choice="Serif"]', "data-count", "0");
          await room.locator('[data-room-audit="passed"]').waitFor({ timeout: 30_000 });
          await kept.waitForTimeout(3000);
          assert.equal(await kept.locator(".room").getAttribute("data-round"), "2");
          assert.equal(await kept.locator("[data-room-question]").textContent(), QUESTION);
          await kept.close();
        },
      );

      await t.step(
        "twelve choices and a 200-character question still fit, in text over 40 px",
        async () => {
          const question = `${
            "Of all the places this team could meet next spring, ".repeat(4)
          }which?`
            .slice(-200);
          const choices = Array.from({ length: 12 }, (_, i) => `Place number ${i + 1}, far away`);
          const next = await startRound(server.url, question, choices);
          await room.locator(`.room[data-round="${next}"] .room-body[data-ready="true"]`).waitFor({
            timeout: 15_000,
          });
          await room.locator('[data-room-choice="Place number 12, far away"]').waitFor();
          for (const el of await room.locator("[data-room-choice] .room-count").all()) {
            const size = await fontSize(el);
            assert.ok(size >= 40, `count: ${size} px`);
          }
          const outside: string[] = [];
          for (const part of ROOM_PARTS) outside.push(...await belowTheFold(room, part));
          assert.deepEqual(outside, []);
          await room.screenshot({
            path: new URL("board-room-12-1920x1080.png", ARTIFACTS).pathname,
          });
        },
      );

      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
