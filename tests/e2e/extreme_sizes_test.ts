// Extreme sizes, in real Chromium: a proxy in front of the real server holds its signing key and,
// once a page has accepted the honest log, answers every ledger's checkpoint with a size of 0, 1,
// 2^31, 2^32, 2^53 − 1, −1 or 1.5 (signed with the real key, a made-up root and made-up proofs)
// and every status with a head of that height (signed where a height can be). Each page that
// watches its chain (/, /board, /board?view=room) must raise an alert, within 60 requests, and
// every page (the lab's too) must stay responsive: a screenshot is taken, and the page answers a
// script. Nothing on a page may loop, allocate or render by a size the server states (protocol
// §4.5, page §12). The times measured are printed, not asserted.
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { bytesToBase64, bytesToHex } from "../../lib/protocol/bytes.ts";
import { signHead } from "../../lib/protocol/head.ts";
import { formatNote, parseNote, signNote } from "../../lib/protocol/note.ts";
import { build } from "../../scripts/build.ts";
import { call, makeVoters, signedVote } from "../helpers/ledger_fixtures.ts";
import { serverSeedAt } from "../helpers/lying_server.ts";
import { startServer } from "../helpers/server_process.ts";
import { type Lie, startTamperingProxy } from "../helpers/tampering_proxy.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);

/** The sizes told: the edges of the integers a page may meet, and two that are no size. */
const SIZES = [0, 1, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER, -1, 1.5];

/** Most requests a page may make between the lie and its alert. */
const MAX_REQUESTS = 60;

/** A generous bound on a screenshot: only a guard against a page that no longer answers. */
const SCREENSHOT_GUARD_MS = 30_000;

/** The pages that watch a chain, with what says they are ready. */
const WATCHING = [
  ["voting page", "", '.voting-page[data-ready="true"]'],
  ["board", "board", '.bulletin[data-ready="true"]'],
  ["room view", "board?view=room", ".room"],
] as const;

/** The pages that watch no chain of their own, shown the same lie. */
const OTHERS = [
  ["lab", "lab", "main"],
  ["practice board", "board?ledger=lab", '.bulletin[data-ready="true"]'],
] as const;

const LEDGER = /^\/api\/(?:lab\/|rounds\/\d+\/)?/;

function randomBytes(n: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(n));
}

/**
 * The lie of `size`: every ledger's checkpoint of that size under its real origin, signed with
 * `seed` over a made-up root, made-up consistency and inclusion proofs, and a status head of that
 * height, signed with `seed` where a head of that height can be signed.
 */
function sizeLie(seed: Uint8Array, size: number): Lie {
  const root = bytesToBase64(randomBytes(32));
  const hash = bytesToHex(randomBytes(32));
  let signature: string;
  try {
    signature = signHead(seed, { height: size, hash });
  } catch {
    signature = bytesToHex(randomBytes(64));
  }
  const proof = Array.from({ length: 3 }, () => bytesToBase64(randomBytes(32)) + "\n").join("");
  return {
    answer: async ({ path, method, honest }) => {
      const ledger = LEDGER.exec(path);
      if (method !== "GET" || ledger === null) return null;
      const rest = path.slice(ledger[0].length);
      if (rest === "log/checkpoint") {
        const answer = await honest();
        if (answer.status !== 200) return null;
        const origin = parseNote(await answer.text()).text.split("\n", 1)[0];
        const text = `${origin}\n${size}\n${root}\n`;
        const note = formatNote({ text, signatures: [signNote(text, { name: origin, seed })] });
        return new Response(note, { headers: { "content-type": "text/plain; charset=utf-8" } });
      }
      if (/^log\/(?:consistency|inclusion)\/[^/]+\/[^/]+$/.test(rest)) {
        return new Response(proof, { headers: { "content-type": "text/plain; charset=utf-8" } });
      }
      return null;
    },
    rewrite: (path, body) => {
      const ledger = LEDGER.exec(path);
      if (ledger !== null && path.slice(ledger[0].length) === "block/status") {
        Object.assign(body, { height: size, hash, head_signature: signature });
      }
    },
  };
}

/** Requests `page` makes from now on, counted. */
function countRequests(page: Page): { count: number } {
  const counter = { count: 0 };
  page.on("request", () => counter.count++);
  return counter;
}

/** The time a screenshot of `page` takes, in ms; throws past the guard. */
async function screenshotMs(page: Page, name: string): Promise<number> {
  const started = performance.now();
  await page.screenshot({
    path: new URL(`extreme-${name}.png`, ARTIFACTS).pathname,
    timeout: SCREENSHOT_GUARD_MS,
  });
  return Math.round(performance.now() - started);
}

Deno.test({
  name: "every page survives a checkpoint and a head of any size, and the watching ones alert",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const dir = await Deno.makeTempDir({ prefix: "ringvote-extreme-" });
    const kvPath = `${dir}/ledger.sqlite3`;
    const server = await startServer({ env: { KV_PATH: kvPath, BLOCK_INTERVAL_MS: "300" } });
    const proxy = startTamperingProxy(server.url);
    let browser: Browser | null = null;
    const figures: string[] = [];
    try {
      const voters = makeVoters(3);
      for (const v of voters) await call(server.url, "POST", "/api/pki/key", { key: v.key });
      await call(server.url, "POST", "/api/vote", signedVote(voters[0], voters, "Yes"));
      while ((await call(server.url, "GET", "/api/block/status")).body.height < 1) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const seed = await serverSeedAt(kvPath);
      browser = await launchChromium();
      await Deno.mkdir(ARTIFACTS, { recursive: true });
      for (const [name, path, ready] of WATCHING) {
        for (const size of SIZES) {
          await t.step(`${name}: size ${size}`, async () => {
            proxy.tell(null);
            const context = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
            const page = await context.newPage();
            await page.goto(proxy.url + path);
            await page.locator(ready).first().waitFor({ timeout: 30_000 });
            await page.waitForFunction(
              () => {
                const log = JSON.parse(localStorage.getItem("ringvote/seen-log") ?? "null");
                return (log?.size ?? 0) >= 2;
              },
              null,
              { timeout: 30_000 },
            );
            assert.equal(await page.locator(".fork-alert, .head-alert").count(), 0);
            const requests = countRequests(page);
            const started = performance.now();
            proxy.tell(sizeLie(seed, size));
            await page.locator(".fork-alert, .head-alert").first().waitFor({ timeout: 60_000 });
            const alertMs = Math.round(performance.now() - started);
            const asked = requests.count;
            const shotMs = await screenshotMs(
              page,
              `${(path || "index").replace(/\W+/g, "-")}-${size}`,
            );
            assert.equal(await page.evaluate(() => 1 + 1), 2, "the page answers a script");
            const kinds = await page.locator(".fork-alert, .head-alert").evaluateAll((els) =>
              els.map((el) => el.getAttribute("data-head-alert") ?? "fork")
            );
            figures.push(
              `${name} size ${size}: alert after ${alertMs} ms and ${asked} requests ` +
                `(${kinds.join(", ")}); screenshot ${shotMs} ms`,
            );
            assert.ok(asked <= MAX_REQUESTS, `${asked} requests before the alert`);
            await context.close();
          });
        }
      }
      for (const [name, path, ready] of OTHERS) {
        await t.step(`${name}: size 2^53 − 1, the page still answers`, async () => {
          proxy.tell(sizeLie(seed, Number.MAX_SAFE_INTEGER));
          const context = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
          const page = await context.newPage();
          await page.goto(proxy.url + path);
          await page.locator(ready).first().waitFor({ timeout: 30_000 });
          // A few of its polls, then the page must still paint and answer.
          await page.waitForTimeout(5_000);
          const shotMs = await screenshotMs(page, path.replace(/\W+/g, "-"));
          assert.equal(await page.evaluate(() => 1 + 1), 2, "the page answers a script");
          figures.push(`${name} size 2^53 − 1: screenshot ${shotMs} ms`);
          await context.close();
        });
      }
    } finally {
      console.log(figures.join("\n"));
      await browser?.close();
      await proxy.close();
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
