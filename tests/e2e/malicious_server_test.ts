// A malicious server, in real Chromium and against `deno task audit`: an HTTP proxy in front of
// the real app that holds the server's real signing key and lies — it withholds the proof that
// its log grew, forks one browser's view with a log of its own, serves one vote's block from
// another history, signs heads with a torsioned R, shrinks a sealed block, lies in a listing's
// total, and shows the auditor another key. Each lie must be caught where protocol §4.5–§4.6 and
// page §12 say, and never pass.
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import type { AuditFinding } from "../../lib/client/audit/findings.ts";
import { findingText } from "../../lib/client/audit/report_text.ts";
import type { Browser, Page } from "playwright-core";
import { serverPublicKey } from "../../lib/protocol/head.ts";
import { checkLogForkEvidence } from "../../lib/protocol/log_evidence.ts";
import { voteLeaf } from "../../lib/protocol/merkle.ts";
import { build } from "../../scripts/build.ts";
import { createApp } from "../../server/app.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { createStore, type Store } from "../../server/store/mod.ts";
import { buildLedger } from "../helpers/ledger_builder.ts";
import { makeVoters, signedVote } from "../helpers/ledger_fixtures.ts";
import {
  allOf,
  anotherKey,
  forkedChain,
  honestChain,
  listingLie,
  showChain,
  showLog,
  shrunkChain,
  torsionedHeads,
} from "../helpers/lying_server.ts";
import { type Lie, type Rewrite, startTamperingProxy } from "../helpers/tampering_proxy.ts";
import { launchChromium, skipWithoutChromium, storedVoter } from "./browser.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
const AUDIT = new URL("../../audit.ts", import.meta.url).pathname;
const PAGES = [["voting page", "", ".voting-page"], [
  "board",
  "board",
  '.bulletin[data-ready="true"]',
]] as const;

/** The real app over a temporary KV file, served on a free port, with three sealed blocks of 3. */
async function serveLedger() {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-malicious-" });
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
    store,
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

/** The heads `page` remembers, once it remembers one at `height`. */
async function rememberedAt(page: Page, height: number) {
  await page.waitForFunction(
    (h) => {
      const stored = localStorage.getItem("ringvote/seen-heads");
      return stored !== null &&
        JSON.parse(stored).heads.some((x: { height: number }) => x.height === h);
    },
    height,
    { timeout: 15_000 },
  );
  return JSON.parse((await page.evaluate(() => localStorage.getItem("ringvote/seen-heads")))!);
}

/** The log `page` remembers (protocol §4.5), once it has accepted a checkpoint of `size`. */
async function acceptedSize(page: Page, size: number): Promise<{ size: number; note: string }> {
  await page.waitForFunction(
    (n) => {
      const stored = localStorage.getItem("ringvote/seen-log");
      return stored !== null && JSON.parse(stored).size >= n;
    },
    size,
    { timeout: 15_000 },
  );
  return JSON.parse((await page.evaluate(() => localStorage.getItem("ringvote/seen-log")))!);
}

/** `deno task audit` as a newcomer runs it: exit code and printed report. */
async function cliAudit(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-read", AUDIT, ...args],
    stdout: "piped",
    stderr: "null",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

/**
 * Runs the board's one-click audit at `base` and answers its verdict and the failures it shows
 * beside the failing votes, as data (`data-finding`).
 */
async function boardAudit(page: Page, base: string) {
  await page.goto(new URL("board", base).href);
  await page.locator('.bulletin[data-ready="true"]').waitFor();
  await page.locator('[data-action="audit"]').click();
  const verdict = page.locator("[data-audit-verdict]");
  await verdict.waitFor({ timeout: 120_000 });
  const findings: AuditFinding[] =
    (await page.locator("[data-audit-problem]").evaluateAll((els) =>
      els.map((el) => el.getAttribute("data-finding") ?? "null")
    )).map((json) => JSON.parse(json));
  return { verdict: await verdict.getAttribute("data-audit-verdict"), findings };
}

/** The failure lines `deno task audit` printed. */
function failureLines(stdout: string): string[] {
  return stdout.split("\n").filter((l) => l.startsWith("  - ")).map((l) => l.slice(4));
}

async function screenshot(page: Page, name: string) {
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: new URL(`malicious-${name}.png`, ARTIFACTS).pathname });
}

Deno.test({
  name: "a server that keeps its key and lies is caught by the pages and by the audit",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const ledger = await serveLedger();
    const liar = startTamperingProxy(ledger.url);
    const key = serverPublicKey(ledger.seed);
    const browser: Browser = await launchChromium();
    /**
     * A fresh browser context on `path` through the liar telling the truth, once it has accepted
     * the log up to block `height`.
     */
    const honestView = async (path: string, ready: string, height: number) => {
      liar.tell(null);
      const context = await browser.newContext({ acceptDownloads: true });
      const page = await context.newPage();
      await page.goto(liar.url + path);
      await page.locator(ready).waitFor();
      return { context, page, log: await acceptedSize(page, height + 1) };
    };
    const seenLog = async (page: Page) =>
      JSON.parse((await page.evaluate(() => localStorage.getItem("ringvote/seen-log")))!);
    /** The history forked from block `from` on, its blocks and its log signed with the real key. */
    const forkedView = async (from: number) => {
      const forked = forkedChain(await honestChain(ledger.url), { from, seed: ledger.seed });
      return { answer: showLog(ledger.seed, () => forked), rewrite: showChain(() => forked) };
    };
    const height = async () => (await honestChain(ledger.url)).length - 1;
    const lie = (told: Rewrite | Lie) => liar.tell(told);
    try {
      for (const [name, path, ready] of PAGES) {
        await t.step(`${name}: the proof that the log grew withheld`, async () => {
          const remembered = await height();
          const { context, page, log } = await honestView(path, ready, remembered);
          await sealOneMore(ledger.store);
          lie({
            answer: ({ path }) =>
              path.startsWith("/api/log/consistency/")
                ? Response.json({ error: { code: "not_found", message: "no proof" } }, {
                  status: 404,
                })
                : null,
          });
          await page.reload();
          const alert = page.locator('.head-alert[data-head-alert="withheld"]');
          await alert.waitFor({ timeout: 15_000 });
          assert.match(await alert.innerText(), /withheld a proof/);
          assert.equal((await seenLog(page)).note, log.note, "the larger checkpoint is not taken");
          await screenshot(page, `withheld-${path || "index"}`);
          await context.close();
        });
      }

      await t.step("voting page: a vote proof's block from another history", async () => {
        // A panel whose vote is in block 1 (the builder registered its keys first, in order).
        const cast = ledger.votes[0];
        const proofPath = `api/block/id/${cast.blockId}/vote/${encodeURIComponent(cast.voteId)}`;
        const proof = await (await fetch(new URL(proofPath, ledger.url))).json();
        const entries = {
          voters: "Planted Voter",
          ...storedVoter("Planted Voter", { ...cast, keyId: 1, signature: proof.vote.signature }),
        };
        liar.tell(null);
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(liar.url);
        await page.evaluate((e) => {
          localStorage.clear();
          for (const [k, v] of Object.entries(e)) localStorage.setItem(k, v);
        }, entries);
        await page.reload();
        await page.locator('[data-kind="vote"][data-status="voted"]').waitFor({ timeout: 30_000 });
        await rememberedAt(page, cast.blockId);
        // Only this voter's proof is lied about: its block closed a second later, re-hashed and
        // signed with the real key; the Merkle path still holds, the status and blocks are honest.
        const forked = forkedChain(await honestChain(ledger.url), { from: 1, seed: ledger.seed });
        lie((path, body) => {
          if (path.startsWith("/api/block/id/1/vote/")) {
            body.block = forked[1];
          }
        });
        await page.reload();
        const alert = page.locator(".fork-alert");
        await alert.waitFor({ timeout: 15_000 });
        assert.equal(await alert.getAttribute("data-fork-height"), "1");
        await screenshot(page, "proof-fork-index");
        await context.close();
      });

      let evidenceFile = "";
      for (const [name, path, ready] of PAGES) {
        await t.step(
          `${name}: a forked history with its own log is fork evidence under the real key`,
          async () => {
            const remembered = await height();
            const { context, page, log } = await honestView(path, ready, remembered);
            await sealOneMore(ledger.store);
            lie(await forkedView(remembered));
            await page.reload();
            const alert = page.locator(".fork-alert");
            await alert.waitFor({ timeout: 15_000 });
            assert.equal(await alert.getAttribute("data-fork-size"), String(remembered + 2));
            const [download] = await Promise.all([
              page.waitForEvent("download"),
              alert.locator(".fork-download").click(),
            ]);
            evidenceFile = await Deno.makeTempFile({ suffix: ".json" });
            await Deno.copyFile(await download.path(), evidenceFile);
            const evidence = JSON.parse(await Deno.readTextFile(evidenceFile));
            assert.equal(evidence.key, key, "signed by the server's own key");
            const proven = checkLogForkEvidence(evidence);
            assert.ok(proven.ok && proven.form === "failed-proof", JSON.stringify(proven));
            assert.deepEqual(proven.sizes, [remembered + 1, remembered + 2]);
            assert.equal(
              (await seenLog(page)).note,
              log.note,
              "the forked checkpoint is not taken",
            );
            const cli = await cliAudit(liar.url, "--key", key);
            assert.equal(cli.code, 1, cli.stdout);
            await context.close();
          },
        );
      }
      await t.step(
        "the audit proves the fork from the downloaded evidence, pinned to the key",
        async () => {
          // Two sizes: settled by the server's own consistency proof, which cannot join them.
          const proven = await cliAudit("--evidence", evidenceFile, liar.url, "--key", key);
          assert.equal(proven.code, 0, proven.stdout);
          const alone = await cliAudit("--evidence", evidenceFile, "--key", key);
          assert.equal(alone.code, 1, alone.stdout);
          assert.match(alone.stdout, /NOT SETTLED/);
          const other = serverPublicKey(new Uint8Array(32).fill(3));
          const wrongKey = await cliAudit("--evidence", evidenceFile, "--key", other);
          assert.equal(wrongKey.code, 1, wrongKey.stdout);
        },
      );

      for (const [name, path, ready] of PAGES.slice(1)) {
        await t.step(`${name}: head signatures with a torsioned R are refused`, async () => {
          const { context, page } = await honestView(path, ready, await height());
          const seen = await rememberedAt(page, await height());
          await sealOneMore(ledger.store);
          lie(torsionedHeads(ledger.seed));
          await page.reload();
          await page.locator('.head-alert[data-head-alert="unsigned"]').waitFor({
            timeout: 15_000,
          });
          const now = JSON.parse(
            (await page.evaluate(() => localStorage.getItem("ringvote/seen-heads")))!,
          );
          assert.deepEqual(now.heads.at(-1), seen.heads.at(-1), "no torsioned head is remembered");
          await context.close();
        });
      }
      await t.step("audit: torsioned head signatures fail", async () => {
        lie(torsionedHeads(ledger.seed));
        const { code, stdout } = await cliAudit(liar.url, "--key", key);
        assert.equal(code, 1, stdout);
        const statusHead = findingText({ kind: "head-signature", height: null, key });
        assert.ok(failureLines(stdout).includes(statusHead), stdout);
      });

      await t.step(
        "a block shrunk past the audit: one vote left out, the rest re-signed",
        async () => {
          const honest = await honestChain(ledger.url);
          const listed = await (await fetch(new URL("api/block/id/1/votes", ledger.url))).json();
          const kept = listed.votes.filter((v: { index: number }) => v.index !== 2);
          const shrunk = shrunkChain(honest, {
            height: 1,
            leaves: kept.map((v: { vote: Parameters<typeof voteLeaf>[0] }) => voteLeaf(v.vote)),
            seed: ledger.seed,
            keepSize: true,
          });
          lie(allOf(showChain(() => shrunk), listingLie(1, { drop: 2 })));
          const cli = await cliAudit(liar.url, "--key", key);
          assert.equal(cli.code, 1, cli.stdout);
          const shrunkBlock = { kind: "block-size", height: 1, size: 3, read: 2 } as const;
          assert.ok(failureLines(cli.stdout).includes(findingText(shrunkBlock)), cli.stdout);
          const context = await browser.newContext();
          const page = await context.newPage();
          const board = await boardAudit(page, liar.url);
          assert.equal(board.verdict, "fail");
          assert.ok(board.findings.some((f) => isDeepStrictEqual(f, shrunkBlock)));
          // The board's own recount, before any audit, holds the listing to the header's size.
          await page.locator('[data-recount-problem="1"]').waitFor();
          await context.close();
        },
      );

      for (
        const [what, total] of [["larger", (n: number) => n + 1], [
          "smaller",
          (n: number) => n - 1,
        ]] as const
      ) {
        await t.step(
          `a listing whose total is ${what} than the block fails the audit`,
          async () => {
            lie(listingLie(2, { total }));
            const cli = await cliAudit(liar.url, "--key", key);
            assert.equal(cli.code, 1, cli.stdout);
            const context = await browser.newContext();
            const page = await context.newPage();
            const board = await boardAudit(page, liar.url);
            assert.equal(board.verdict, "fail");
            await page.locator('[data-recount-problem="2"]').waitFor();
            const wrongTotal = board.findings.find((f) => f.kind === "listing-total");
            assert.ok(wrongTotal?.kind === "listing-total" && wrongTotal.height === 2);
            assert.ok(failureLines(cli.stdout).includes(findingText(wrongTotal)), cli.stdout);
            await context.close();
          },
        );
      }

      await t.step(
        "another key shown to the auditor and to a page that remembers the real one",
        async () => {
          const { context, page } = await honestView(
            "board",
            '.bulletin[data-ready="true"]',
            await height(),
          );
          const otherSeed = new Uint8Array(32).fill(5);
          // The other key signs the heads and the log's checkpoints alike.
          const honest = await honestChain(ledger.url);
          lie({ answer: showLog(otherSeed, () => honest), rewrite: anotherKey(otherSeed) });
          const cli = await cliAudit(liar.url, "--key", key);
          assert.equal(cli.code, 1, cli.stdout);
          assert.ok(
            cli.stdout.includes(key) && cli.stdout.includes(serverPublicKey(otherSeed)),
            cli.stdout,
          );
          const unpinned = await cliAudit(liar.url);
          assert.ok(
            unpinned.stdout.includes(serverPublicKey(otherSeed)),
            "the report names the key it trusted",
          );
          await page.reload();
          await page.locator('.head-alert[data-head-alert="key-changed"]').waitFor({
            timeout: 15_000,
          });
          await page.locator('[data-action="audit"]').click();
          await page.locator('[data-audit-verdict="fail"]').waitFor({ timeout: 120_000 });
          await screenshot(page, "key-changed-board");
          await context.close();
        },
      );
    } finally {
      await browser.close();
      await liar.close();
      await ledger.close();
    }
  },
});
