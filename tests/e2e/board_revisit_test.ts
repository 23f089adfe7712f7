// The board's audit remembers (page §10.8) in real Chromium, against the real app on a Deno KV file
// the test also writes: a first visit checks every vote; a second visit with nothing new checks 0
// and remembers them all (its bytes and requests on the wire reported, no block below the remembered
// head read again); a visit after new blocks checks only theirs; "Audit everything again" checks
// all; a server that rewrites the head this browser verified fails the audit, and the memory it
// contradicts is kept, not replaced.
import assert from "node:assert/strict";
import type { BrowserContext, Page } from "playwright-core";
import { createApp } from "../../server/app.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { createStore, type Store } from "../../server/store/mod.ts";
import { build } from "../../scripts/build.ts";
import { buildLedger, type BuiltVote } from "../helpers/ledger_builder.ts";
import { makeVoters, ringFor, signedVote } from "../helpers/ledger_fixtures.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

/** Rewrites a JSON answer of the API in place; `path` is the request's pathname. */
// deno-lint-ignore no-explicit-any
type Lie = (path: string, body: any) => void;

/**
 * The real app over a store on a temporary KV file, on a free port, which tells `lie` when one is
 * set: its JSON answers rewritten, sent uncompressed and never to be stored, at the same origin.
 */
async function serveLedger() {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-board-revisit-" });
  const kv = await Deno.openKv(`${dir}/ledger.sqlite3`);
  const store = await createStore(kv);
  const app = createApp({ store });
  let lie: Lie | null = null;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const told = lie;
    if (told === null || !new URL(req.url).pathname.startsWith("/api/")) return app.fetch(req);
    const headers = new Headers(req.headers);
    headers.delete("accept-encoding");
    headers.delete("if-none-match");
    const res = await app.fetch(new Request(req, { headers }));
    if (!(res.headers.get("content-type") ?? "").startsWith("application/json")) return res;
    const body = await res.json();
    told(new URL(req.url).pathname, body);
    const out = new Headers(res.headers);
    for (const name of ["etag", "content-length"]) out.delete(name);
    out.set("cache-control", "no-store");
    return new Response(JSON.stringify(body), { status: res.status, headers: out });
  });
  return {
    kv,
    store,
    url: `http://127.0.0.1:${server.addr.port}/`,
    tell(next: Lie | null) {
      lie = next;
    },
    async close() {
      await server.shutdown();
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** `count` more votes over rings of the ledger's voters, sealed in one block at `at`. */
async function sealMore(
  store: Store,
  built: BuiltVote[],
  { count, at }: { count: number; at: number },
) {
  const pool = built.map((v) => v.voter);
  for (const voter of makeVoters(count)) {
    await store.registerKey(voter.key);
    const vote = signedVote(voter, ringFor(voter, pool, 4, 1), "Choice A");
    await store.submitVote(
      { payload: vote.payload, signature: vote.signature, publicKeys: vote.publicKeys },
      vote.tag,
    );
  }
  assert.equal((await sealNextBlock(store, at)).length, 1);
}

/** What one audit showed: its verdict, votes checked and remembered, summary, bytes, requests. */
type Visit = {
  verdict: string | null;
  checked: number;
  remembered: number;
  summary: string;
  kinds: string[];
  bytes: number;
  requests: number;
  /** Every API path and query asked from the click to the verdict. */
  asked: string[];
};

/**
 * Opens the board at `base` (a fresh load: a revisit when this context audited before), clicks
 * `action` and answers the audit; the API bytes and requests Chromium received from the click to
 * the verdict, counted by DevTools (`encodedDataLength`, 0 for an answer from its cache).
 */
async function visit(
  context: BrowserContext,
  page: Page,
  { base, action = "audit" }: { base: string; action?: "audit" | "audit-all" },
): Promise<Visit> {
  await page.goto(new URL("board", base).href);
  await page.locator('.bulletin[data-ready="true"]').waitFor();
  // The recount ends in agreement, or, over a lying header, in its red line.
  await page.getByText(/the counts agree/).or(page.locator("[data-recount-problem]"))
    .waitFor({ timeout: 60_000 });
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  const urls = new Map<string, string>();
  let bytes = 0;
  let requests = 0;
  const asked: string[] = [];
  cdp.on("Network.requestWillBeSent", (e) => {
    urls.set(e.requestId, e.request.url);
    const url = new URL(e.request.url);
    if (url.pathname.startsWith("/api/")) asked.push(url.pathname + url.search);
  });
  cdp.on("Network.loadingFinished", (e) => {
    if (!new URL(urls.get(e.requestId) ?? base).pathname.startsWith("/api/")) return;
    bytes += e.encodedDataLength;
    if (e.encodedDataLength > 0) requests++;
  });
  await page.locator(`[data-action="${action}"]`).click();
  const verdict = page.locator("[data-audit-verdict]");
  await verdict.waitFor({ timeout: 120_000 });
  await cdp.detach();
  return {
    verdict: await verdict.getAttribute("data-audit-verdict"),
    checked: Number(await verdict.getAttribute("data-votes-checked")),
    remembered: Number(await verdict.getAttribute("data-votes-remembered")),
    summary: await page.locator(".audit-summary").textContent() ?? "",
    kinds: await page.locator("[data-audit-problem]").evaluateAll((els) =>
      els.map((el) => el.getAttribute("data-audit-problem") ?? "")
    ),
    bytes,
    requests,
    asked,
  };
}

Deno.test({
  name: "the board's audit remembers: revisits check only the new votes, a rewrite fails",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const browser = await launchChromium();
    const ledger = await serveLedger();
    try {
      const built = await buildLedger(ledger.store, { votes: 30, perBlock: 10, ringSize: 4 });
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));

      await t.step("the first visit checks every vote", async () => {
        const first = await visit(context, page, { base: ledger.url });
        assert.equal(first.verdict, "pass", first.summary);
        assert.deepEqual([first.checked, first.remembered], [30, 0]);
        assert.match(first.summary, /^30 votes in 4 blocks/);
        console.log(`first visit's audit: ${first.bytes} API bytes, ${first.requests} requests`);
      });

      await t.step("a second visit with nothing new checks 0 votes, remembers 30", async () => {
        const again = await visit(context, page, { base: ledger.url });
        assert.equal(again.verdict, "pass", again.summary);
        assert.deepEqual([again.checked, again.remembered], [0, 30]);
        assert.match(again.summary, /^0 new votes checked in .* and 30 remembered/);
        assert.match(again.summary, /up to block 3: 30 votes in 4 blocks/);
        console.log(`a revisit's audit: ${again.bytes} API bytes, ${again.requests} requests`);
        assert.ok(again.bytes <= 20_000, `${again.bytes} bytes on the wire`);
        // No block below the remembered head (block 3) is read again: the memory holds them.
        const blockReads = again.asked.filter((p) => p.startsWith("/api/blocks?"));
        assert.ok(blockReads.length > 0);
        for (const read of blockReads) {
          assert.ok(Number(new URLSearchParams(read.split("?")[1]).get("from")) >= 3, read);
        }
        assert.equal(await page.locator('[data-action="audit-all"]').count(), 1);
      });

      await t.step("a visit after a new block checks only its votes", async () => {
        await sealMore(ledger.store, built, { count: 6, at: 1_800_000_000_000 });
        const later = await visit(context, page, { base: ledger.url });
        assert.equal(later.verdict, "pass", later.summary);
        assert.deepEqual([later.checked, later.remembered], [6, 30]);
        assert.match(later.summary, /^6 new votes checked .* and 30 remembered/);
      });

      await t.step("'Audit everything again' checks every vote", async () => {
        const all = await visit(context, page, { base: ledger.url, action: "audit-all" });
        assert.equal(all.verdict, "pass", all.summary);
        assert.deepEqual([all.checked, all.remembered], [36, 0]);
      });

      await t.step("a rewritten head fails; the memory it contradicts is kept", async () => {
        // The memory's head is block 4, the last audit's; the blocks below it are the memory's.
        const honest = (await ledger.store.blocks(4, 1)).blocks[0];
        ledger.tell((path, body) => {
          if (path !== "/api/blocks") return;
          for (const b of body.blocks) if (b.height === 4) b.merkle_root = "ab".repeat(32);
        });
        const lied = await visit(context, page, { base: ledger.url });
        assert.equal(lied.verdict, "fail", lied.summary);
        assert.ok(lied.kinds.includes("block-hash"), lied.kinds.join(" "));
        // The board's own recount names the header too, before any audit.
        assert.equal(
          await page.locator("[data-recount-problem]").getAttribute("data-recount-problem"),
          "4",
        );
        ledger.tell((path, body) => {
          if (path !== "/api/blocks") return;
          for (const b of body.blocks) if (b.height === 4) b.hash = "cd".repeat(32);
        });
        const rewritten = await visit(context, page, { base: ledger.url });
        assert.equal(rewritten.verdict, "fail", rewritten.summary);
        assert.ok(rewritten.kinds.includes("remembered-hash"), rewritten.kinds.join(" "));
        const finding = JSON.parse(
          await page.locator('[data-audit-problem="remembered-hash"]').first()
            .getAttribute("data-finding") ?? "null",
        );
        assert.deepEqual(
          { height: finding.height, remembered: finding.remembered },
          { height: 4, remembered: honest.hash },
        );
        ledger.tell(null);
        const kept = await visit(context, page, { base: ledger.url });
        assert.equal(kept.verdict, "pass", kept.summary);
        assert.deepEqual([kept.checked, kept.remembered], [0, 36]);
      });
      assert.deepEqual(errors, []);
      await context.close();
    } finally {
      await browser.close();
      await ledger.close();
    }
  },
});
