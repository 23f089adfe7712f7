// A server that stalls, in real Chromium: a proxy in front of the real app holds the board's
// `GET /api/log/consistency/…` (and, apart, `GET /api/log/checkpoint`) unanswered after the board
// has accepted a checkpoint.
// The board must raise `unchecked` within the check's deadline (protocol §4.5, page §12), keep it
// while the server stalls, and clear it once the server answers again.
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { CHECK_DEADLINE_MS, REQUEST_TIMEOUT_MS } from "../../islands/hooks/watch_heads.ts";
import { build } from "../../scripts/build.ts";
import { createApp } from "../../server/app.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { createStore, type Store } from "../../server/store/mod.ts";
import { buildLedger } from "../helpers/ledger_builder.ts";
import { makeVoters, signedVote } from "../helpers/ledger_fixtures.ts";
import { startStallingProxy } from "../helpers/stalling_proxy.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

/** The board's tick (page §12): a stall is noticed by the first check after it starts. */
const BOARD_TICK_MS = 2_000;
/** The documented bound: a check starts within a tick and ends, or is abandoned, by its deadline. */
const BOUND_MS = BOARD_TICK_MS + CHECK_DEADLINE_MS + 1_000;

/** The real app over in-memory KV, served on a free port, with two sealed blocks of 2. */
async function serveLedger() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  await buildLedger(store, { votes: 4, ringSize: 3, perBlock: 2, startAt: Date.now() - 600_000 });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    createApp({ store }).fetch,
  );
  return {
    store,
    url: `http://127.0.0.1:${server.addr.port}/`,
    async close() {
      await server.shutdown();
      kv.close();
    },
  };
}

/** One more vote by a new voter, sealed into a block of its own. */
async function sealOneMore(store: Store): Promise<void> {
  const [a, b] = makeVoters(2);
  await store.registerKey(a.key);
  await store.registerKey(b.key);
  const vote = signedVote(a, [a, b], "Choice A");
  await store.submitVote(
    { payload: vote.payload, signature: vote.signature, publicKeys: vote.publicKeys },
    vote.tag,
  );
  await sealNextBlock(store, Date.now());
}

/** The size of the checkpoint `page` has accepted (protocol §4.5), or 0. */
function rememberedSize(page: Page): Promise<number> {
  return page.evaluate(() => {
    const stored = localStorage.getItem("ringvote/seen-log");
    return stored === null ? 0 : JSON.parse(stored).size;
  });
}

async function waitAccepted(page: Page, size: number) {
  await page.waitForFunction(
    (n) => {
      const stored = localStorage.getItem("ringvote/seen-log");
      return stored !== null && JSON.parse(stored).size === n;
    },
    size,
    { timeout: 15_000 },
  );
}

Deno.test({
  name: "a server that stalls the head check's requests is unchecked on the board until it answers",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const ledger = await serveLedger();
    const proxy = startStallingProxy(ledger.url);
    const browser: Browser = await launchChromium();
    try {
      for (
        const [path, grows] of [
          ["/api/log/consistency/{old}/{new}", true],
          ["/api/log/checkpoint", false],
        ] as const
      ) {
        await t.step(
          `${path} stalled: unchecked within the deadline, until it answers`,
          async () => {
            const context = await browser.newContext();
            const page = await context.newPage();
            try {
              await page.goto(proxy.url + "board");
              await page.locator('.bulletin[data-ready="true"]').waitFor();
              const height = (await ledger.store.status()).height;
              await waitAccepted(page, height + 1);
              proxy.stall(
                path.replace("{old}", String(height + 1)).replace("{new}", String(height + 2)),
              );
              // A new block makes the check ask for the proof joining the remembered checkpoint.
              if (grows) await sealOneMore(ledger.store);
              const started = performance.now();
              const alert = page.locator('.head-alert[data-head-alert="unchecked"]');
              await alert.waitFor({ timeout: BOUND_MS });
              const waited = performance.now() - started;
              assert.ok(waited < BOUND_MS, `raised after ${Math.round(waited)} ms`);
              assert.ok(proxy.held() > 0, "the watch's request was held");
              assert.match(await alert.innerText(), /could not check the server's history/);
              // The stall lasts longer than one request's deadline: the alert stays all along.
              const until = performance.now() + REQUEST_TIMEOUT_MS + BOARD_TICK_MS;
              while (performance.now() < until) {
                assert.equal(await alert.count(), 1, "unchecked stays while the server stalls");
                await page.waitForTimeout(500);
              }
              assert.equal(
                await rememberedSize(page),
                height + 1,
                "nothing new is accepted meanwhile",
              );
              proxy.answer();
              await alert.waitFor({ state: "detached", timeout: BOUND_MS });
              if (grows) await waitAccepted(page, height + 2);
              assert.equal(
                await page.locator(".head-alert").count(),
                0,
                "no other alert was raised",
              );
            } finally {
              proxy.answer();
              await context.close();
            }
          },
        );
      }
    } finally {
      await browser.close();
      await proxy.close();
      await ledger.close();
    }
  },
});
