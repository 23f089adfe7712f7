// Fork evidence whatever the log says (protocol §4.5, page §12), in real Chromium: a page saw the
// honest head at height h; a proxy holding the server's real key then shows it a fork — block h
// closed a second later, re-hashed and re-signed, with two blocks above it — while the log's calls
// (checkpoint, consistency and inclusion proofs) answer honestly. The log cannot hold the blocks
// above h, so the page raises that a proof is withheld; following their links down, it must also
// find block h signed twice and show it as fork evidence, downloadable, which checks out under the
// real key alone.
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { checkEvidence } from "../../lib/client/audit/evidence.ts";
import { serverPublicKey } from "../../lib/protocol/head.ts";
import type { BlockRecord } from "../../lib/protocol/schemas.ts";
import { build } from "../../scripts/build.ts";
import { createApp } from "../../server/app.ts";
import { createStore } from "../../server/store/mod.ts";
import { buildLedger } from "../helpers/ledger_builder.ts";
import { forkedChain, honestChain, rehash, resign } from "../helpers/lying_server.ts";
import { type Rewrite, startTamperingProxy } from "../helpers/tampering_proxy.ts";
import { launchChromium, skipWithoutChromium, storedVoter } from "./browser.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);

/** The real app over a temporary KV file on a free port: three sealed blocks of three votes. */
async function serveLedger() {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-fork-log-" });
  const kv = await Deno.openKv(`${dir}/ledger.sqlite3`);
  const store = await createStore(kv);
  const votes = await buildLedger(store, {
    votes: 9,
    ringSize: 4,
    perBlock: 3,
    startAt: Date.now() - 600_000,
  });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    createApp({ store }).fetch,
  );
  return {
    votes,
    seed: store.serverSeed(),
    url: `http://127.0.0.1:${server.addr.port}/`,
    async close() {
      await server.shutdown();
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/**
 * The honest chain forked at its head `h`: block h re-timestamped, re-hashed and re-signed with
 * `seed`, and two blocks above it, linked and signed the same way.
 */
function forkAtHead(honest: readonly BlockRecord[], seed: Uint8Array): BlockRecord[] {
  const forked = forkedChain(honest, { from: honest.length - 1, seed });
  for (let i = 0; i < 2; i++) {
    const prev = forked.at(-1)!;
    forked.push(resign(
      seed,
      rehash({
        ...prev,
        height: prev.height + 1,
        prev_hash: prev.hash,
        timestamp: prev.timestamp + 60_000,
      }),
    ));
  }
  return forked;
}

const PROOF = /^\/api\/block\/id\/(\d+)\/vote\/[^/]+$/;
const HASH = /^\/api\/block\/hash\/id\/(\d+)$/;

/**
 * Shows `chain` in place of the served blocks — the status head, the blocks lists (the blocks above
 * the honest head appended after it), block hashes and vote proofs — leaving the log's calls alone.
 */
function showForkedBlocks(chain: readonly BlockRecord[], honestHeight: number): Rewrite {
  const at = new Map(chain.map((b) => [b.height, b]));
  const head = chain.at(-1)!;
  const above = chain.filter((b) => b.height > honestHeight);
  return (path, body) => {
    if (path === "/api/block/status") {
      Object.assign(body, {
        height: head.height,
        hash: head.hash,
        head_signature: head.head_signature,
      });
    } else if (path === "/api/blocks") {
      const blocks: BlockRecord[] = body.blocks.map((b: BlockRecord) => at.get(b.height) ?? b);
      if (blocks.at(-1)?.height === honestHeight) blocks.push(...above);
      body.blocks = blocks;
      if (typeof body.height === "number") body.height = head.height;
    } else if (PROOF.test(path)) {
      body.block = at.get(body.block.height) ?? body.block;
    } else if (HASH.test(path)) {
      const block = at.get(Number(HASH.exec(path)![1]));
      if (block) body.hash = block.hash;
    }
  };
}

Deno.test({
  name: "two heads signed for one height are fork evidence while the log answers honestly",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const ledger = await serveLedger();
    const liar = startTamperingProxy(ledger.url);
    const key = serverPublicKey(ledger.seed);
    const browser: Browser = await launchChromium();
    try {
      const honest = await honestChain(ledger.url);
      const h = honest.length - 1;
      // A voter of the voting page whose vote is in block h: its proof shows the page that block,
      // and a verified vote keeps the page reading the chain's head.
      const cast = ledger.votes.find((v) => v.blockId === h)!;
      const proofPath = `api/block/id/${h}/vote/${encodeURIComponent(cast.voteId)}`;
      const proof = await (await fetch(new URL(proofPath, ledger.url))).json();
      const planted = {
        voters: "Planted Voter",
        ...storedVoter("Planted Voter", { ...cast, keyId: 1, signature: proof.vote.signature }),
      };
      const pages = [
        ["voting page", "", '[data-kind="vote"][data-status="voted"]', planted],
        ["board", "board", '.bulletin[data-ready="true"]', {}],
      ] as const;
      for (const [name, path, ready, entries] of pages) {
        await t.step(`${name}: fork evidence beside the withheld proof`, async () => {
          liar.tell(null);
          const context = await browser.newContext({ acceptDownloads: true });
          const page = await context.newPage();
          await page.goto(liar.url + path);
          await page.evaluate((e) => {
            localStorage.clear();
            for (const [k, v] of Object.entries(e)) localStorage.setItem(k, v);
          }, entries);
          await page.reload();
          await page.locator(ready).waitFor({ timeout: 30_000 });
          // The page remembers the honest head h, signed, and accepted the log up to it.
          await page.waitForFunction(
            (height) => {
              const heads = JSON.parse(localStorage.getItem("ringvote/seen-heads") ?? "null");
              const log = JSON.parse(localStorage.getItem("ringvote/seen-log") ?? "null");
              return heads?.heads.some((x: { height: number }) => x.height === height) &&
                log?.size === height + 1;
            },
            h,
            { timeout: 20_000 },
          );
          assert.equal(await page.locator(".fork-alert").count(), 0);

          // The page stays open: its next poll reads the forked head, two blocks above h.
          liar.tell(showForkedBlocks(forkAtHead(honest, ledger.seed), h));
          const alert = page.locator(".fork-alert");
          await alert.waitFor({ timeout: 30_000 });
          assert.equal(await alert.getAttribute("data-fork-height"), String(h));
          const [download] = await Promise.all([
            page.waitForEvent("download"),
            alert.locator(".fork-download").click(),
          ]);
          const evidence = JSON.parse(await Deno.readTextFile(await download.path()));
          const checked = checkEvidence(evidence, key);
          assert.equal(
            checked.kind === "fork" && checked.keyMatches,
            true,
            JSON.stringify(checked),
          );
          assert.equal(evidence.heads[0].height, h);
          assert.notEqual(evidence.heads[0].hash, evidence.heads[1].hash);
          // The log cannot hold the blocks above its checkpoint: that alert stays beside it.
          await page.locator('.head-alert[data-head-alert="withheld"]').waitFor({
            timeout: 30_000,
          });
          await Deno.mkdir(ARTIFACTS, { recursive: true });
          await page.setViewportSize({ width: 1280, height: 800 });
          await page.screenshot({
            path: new URL(`fork-over-honest-log-${path || "index"}.png`, ARTIFACTS).pathname,
          });
          await context.close();
        });
      }
    } finally {
      await browser.close();
      await liar.close();
      await ledger.close();
    }
  },
});
