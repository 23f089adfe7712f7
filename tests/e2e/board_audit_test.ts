// The board's one-click audit and ring walkthrough in real Chromium, against the real app on a
// Deno KV file that the test also opens: an honest ledger passes and its rings close; a ballot
// forged in KV before sealing fails the audit alone and its ring does not close; a proxy that
// rewrites one response r_i turns that vote red; and the command-line auditor reports the same
// failures as the board for the same ledger. The audit is anchored in this browser's memory: a
// remembered head the chain does not hold fails it. A fork-evidence file chosen on the board is
// checked there, and its key compared with the server's.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { Browser, Page } from "playwright-core";
import { findingText } from "../../lib/client/audit/report_text.ts";
import { bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import { RING_OPEN } from "../../lib/protocol/ring_signature.ts";
import { forkEvidence, serverPublicKey, signHead } from "../../lib/protocol/head.ts";
import type { SignedHead } from "../../lib/protocol/schemas.ts";
import { kvKeys, type ServerKeyRecord } from "../../server/store/layout.ts";
import { createApp } from "../../server/app.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { createStore, type Store } from "../../server/store/mod.ts";
import { build } from "../../scripts/build.ts";
import { forgeBallot } from "../helpers/forged_ballot.ts";
import { buildLedger, type BuiltVote } from "../helpers/ledger_builder.ts";
import { makeVoters, ringFor, signedVote } from "../helpers/ledger_fixtures.ts";
import { startTamperingProxy } from "../helpers/tampering_proxy.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
const VIEWPORTS = [{ width: 1280, height: 800 }, { width: 1920, height: 1080 }];

/** The real app over a store on a temporary KV file, served on a free port. */
async function serveLedger() {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-board-audit-" });
  const kv = await Deno.openKv(`${dir}/ledger.sqlite3`);
  const store = await createStore(kv);
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    createApp({ store }).fetch,
  );
  return {
    kv,
    store,
    url: `http://127.0.0.1:${server.addr.port}/`,
    async close() {
      await server.shutdown();
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A new voter casts one more vote through the store; its payload is rewritten in KV, then sealed. */
async function castForged(
  { store, kv }: { store: Store; kv: Deno.Kv },
  voters: BuiltVote[],
): Promise<string> {
  const [signer] = makeVoters(1);
  await store.registerKey(signer.key);
  const ring = ringFor(signer, voters.map((v) => v.voter), 8, 3);
  const vote = signedVote(signer, ring, "Choice A");
  const { voteId } = await store.submitVote(
    { payload: vote.payload, signature: vote.signature, publicKeys: vote.publicKeys },
    vote.tag,
  );
  await forgeBallot(kv, voteId, "Choice B");
  await sealNextBlock(store, 1_800_000_000_000);
  return voteId;
}

/** Opens the board, clicks the audit control and answers the verdict once it is there. */
async function runAudit(page: Page, base: string) {
  await page.goto(new URL("board", base).href);
  await page.locator('.bulletin[data-ready="true"]').waitFor();
  return await clickAudit(page);
}

/** Clicks the audit control of the open board and answers the verdict once it is there. */
async function clickAudit(page: Page) {
  await page.locator('[data-action="audit"]').click();
  const verdict = page.locator("[data-audit-verdict]");
  await verdict.waitFor({ timeout: 120_000 });
  // Each failing vote with the kinds of its problems, as the board marks them.
  const failures = await page.locator("[data-audit-failure]").evaluateAll((els) =>
    els.map((el) => ({
      voteId: el.getAttribute("data-vote-id"),
      kinds: (el.getAttribute("data-audit-failure") ?? "").split(" "),
    }))
  );
  const report = await page.locator("[data-audit-report]").textContent() ?? "";
  return { verdict: await verdict.getAttribute("data-audit-verdict"), failures, report };
}

/** Opens the shared link of `voteId` and answers whether its ring closes. */
async function walkthrough(page: Page, base: string, voteId: string) {
  await page.goto(new URL(`board?vote=${encodeURIComponent(voteId)}`, base).href);
  const walk = page.locator(`[data-walkthrough="${voteId}"]`);
  await walk.waitFor({ timeout: 60_000 });
  return walk;
}

/** The failure lines of a printed report (the lines after the verdict). */
function failureLines(report: string): string[] {
  return report.split("\n").filter((line) => line.startsWith("  - ")).map((l) => l.slice(4));
}

async function cliAudit(url: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", new URL("../../audit.ts", import.meta.url).pathname, url],
    stdout: "piped",
    stderr: "null",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

async function screenshots(page: Page, name: string) {
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  for (const size of VIEWPORTS) {
    await page.setViewportSize(size);
    await page.screenshot({
      path: new URL(`${name}-${size.width}x${size.height}.png`, ARTIFACTS).pathname,
    });
  }
}

function withBrowser(name: string, fn: (browser: Browser, t: Deno.TestContext) => Promise<void>) {
  Deno.test({
    name,
    ignore: skipWithoutChromium(),
    sanitizeOps: false,
    sanitizeResources: false,
    async fn(t) {
      await build({ ifNeeded: true });
      const browser = await launchChromium();
      try {
        await fn(browser, t);
      } finally {
        await browser.close();
      }
    },
  });
}

withBrowser("honest ledger: the audit passes and a shared walkthrough closes", async (browser) => {
  const ledger = await serveLedger();
  try {
    const votes = await buildLedger(ledger.store, { votes: 12, perBlock: 5 });
    const page = await browser.newPage({ viewport: VIEWPORTS[0] });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    const audit = await runAudit(page, ledger.url);
    assert.equal(audit.verdict, "pass", audit.report);
    assert.deepEqual(audit.failures, []);
    assert.match(audit.report, /votes verified\s+12\n/);
    assert.match(audit.report, /VERDICT: the record is consistent/);
    await screenshots(page, "audit-pass");

    const walk = await walkthrough(page, ledger.url, votes[6].voteId);
    assert.equal(await walk.getAttribute("data-ring-closes"), "true");
    // Every link then the closing comparison, one at a time.
    for (let i = 0; i < 8; i++) {
      await page.locator(`[data-walk-link="${i}"]`).waitFor();
      if (i === 2) await screenshots(page, "walkthrough-step");
      await page.locator('[data-action="next-step"]').click();
    }
    assert.equal(
      await page.locator("[data-walk-closing]").getAttribute("data-walk-closing"),
      "true",
    );
    assert.equal(await walk.locator('[data-check="fail"]').count(), 0);
    // The inclusion proof follows, all green.
    const steps = page.locator(`[data-proof="${votes[6].voteId}"] .proof-steps .step`);
    await steps.last().waitFor();
    assert.equal(await steps.locator('xpath=self::*[@data-ok="false"]').count(), 0);
    // Every listed vote of the open block shows a verified signature.
    const badges = page.locator("tr[data-vote] [data-signature]");
    await page.locator('tr[data-vote] [data-signature="checking"]').first().waitFor({
      state: "detached",
    });
    assert.deepEqual(
      new Set(
        await badges.evaluateAll((els) => els.map((el) => el.getAttribute("data-signature"))),
      ),
      new Set(["valid"]),
    );
    await screenshots(page, "walkthrough-closes");
    assert.deepEqual(errors, []);
  } finally {
    await ledger.close();
  }
});

withBrowser(
  "forged ballot: the board fails that vote alone, like the command-line auditor",
  async (browser) => {
    const ledger = await serveLedger();
    try {
      const votes = await buildLedger(ledger.store, { votes: 10, perBlock: 4 });
      const forged = await castForged(ledger, votes);
      const page = await browser.newPage({ viewport: VIEWPORTS[0] });
      const audit = await runAudit(page, ledger.url);
      assert.equal(audit.verdict, "fail");
      assert.deepEqual(audit.failures, [{ voteId: forged, kinds: ["invalid-signature"] }]);
      await screenshots(page, "audit-fail");

      const cli = await cliAudit(ledger.url);
      assert.equal(cli.code, 1);
      assert.deepEqual(failureLines(audit.report), failureLines(cli.stdout));
      assert.deepEqual(failureLines(cli.stdout), [
        findingText({
          kind: "invalid-signature",
          reason: RING_OPEN,
          vote: { height: 4, index: 0, position: 0, voteId: forged },
        }),
      ]);

      const walk = await walkthrough(page, ledger.url, forged);
      assert.equal(await walk.getAttribute("data-ring-closes"), "false");
      await page.locator('[data-action="last-step"]').click();
      assert.equal(
        await page.locator("[data-walk-closing]").getAttribute("data-walk-closing"),
        "false",
      );
      await screenshots(page, "walkthrough-open");
    } finally {
      await ledger.close();
    }
  },
);

withBrowser("tampering proxy: one rewritten response r_i turns that vote red", async (browser) => {
  const ledger = await serveLedger();
  const votes = await buildLedger(ledger.store, { votes: 8, perBlock: 4 });
  let victim = "";
  const proxy = startTamperingProxy(ledger.url, (path, body) => {
    if (path !== "/api/block/id/2/votes") return;
    const entry = body.votes[1];
    victim = entry.voteId;
    const sig = JSON.parse(entry.vote.signature);
    // Another canonical scalar: byte 0 changed, the top byte kept below the group order.
    const r = hexToBytes(sig.r[3], 32);
    r[0] ^= 1;
    sig.r[3] = bytesToHex(r);
    entry.vote.signature = JSON.stringify(sig);
  });
  try {
    const page = await browser.newPage({ viewport: VIEWPORTS[0] });
    await page.goto(new URL("board", proxy.url).href);
    await page.locator('.bulletin[data-ready="true"]').waitFor();
    await page.locator('.chain-block[data-height="2"]').click();
    const rows = page.locator("tr[data-vote]");
    await rows.nth(3).waitFor();
    const status = async (i: number) => {
      const badge = rows.nth(i).locator("[data-signature]");
      await badge.locator('xpath=self::*[@data-signature!="checking"]').waitFor();
      return await badge.getAttribute("data-signature");
    };
    assert.deepEqual(
      [await status(0), await status(1), await status(2), await status(3)],
      ["valid", "invalid", "valid", "valid"],
    );
    assert.equal(await rows.nth(1).getAttribute("data-vote"), victim);
    assert.ok(votes.some((v) => v.voteId === victim));

    // The board's audit names that vote alone, with the command line's own failure lines.
    const audit = await runAudit(page, proxy.url);
    assert.equal(audit.verdict, "fail");
    assert.deepEqual(audit.failures.map((f) => f.voteId), [victim]);
    const cli = await cliAudit(proxy.url);
    assert.equal(cli.code, 1);
    assert.deepEqual(failureLines(audit.report), failureLines(cli.stdout));
  } finally {
    await proxy.close();
    await ledger.close();
  }
});

/** The server's head-signing seed, read from its KV (protocol §5.2 `["cfg", "server-key"]`). */
async function serverSeed(kv: Deno.Kv): Promise<Uint8Array> {
  return (await kv.get<ServerKeyRecord>(kvKeys.serverKey())).value!.seed;
}

/** A head at `height` with `hash`, signed by `seed`. */
function signed(seed: Uint8Array, height: number, hash: string): SignedHead {
  return { height, hash, head_signature: signHead(seed, { height, hash }) };
}

withBrowser("remembered heads the chain does not hold fail the board's audit", async (browser) => {
  const ledger = await serveLedger();
  try {
    await buildLedger(ledger.store, { votes: 4, perBlock: 2, ringSize: 3 });
    const seed = await serverSeed(ledger.kv);
    // This browser "saw" another block 1, signed by the server's real key, and a block 9; the
    // memory is there before the page loads, so the page's own watch never overwrites it.
    const other = "ab".repeat(32);
    const planted = {
      key: serverPublicKey(seed),
      heads: [signed(seed, 1, other), signed(seed, 9, "cd".repeat(32))],
    };
    const page = await browser.newPage({ viewport: VIEWPORTS[0] });
    await page.addInitScript((value) => {
      if (localStorage.getItem("ringvote/seen-heads") === null) {
        localStorage.setItem("ringvote/seen-heads", value);
      }
    }, JSON.stringify(planted));
    await page.goto(new URL("board", ledger.url).href);
    await page.locator('.bulletin[data-ready="true"]').waitFor();
    const audit = await clickAudit(page);
    assert.equal(audit.verdict, "fail", audit.report);
    assert.deepEqual(audit.failures, [], "every vote holds: only the remembered heads fail");
    const problems = page.locator("[data-audit-problem]");
    const block1 = (await ledger.store.blocks(1, 1)).blocks[0].hash;
    const expected = [
      { kind: "remembered-hash", height: 1, hash: block1, remembered: other, how: "fork" },
      { kind: "remembered-above", height: 9, audited: 2 },
    ] as const;
    assert.deepEqual(
      await problems.evaluateAll((els) => els.map((el) => el.getAttribute("data-audit-problem"))),
      expected.map((f) => f.kind),
    );
    assert.deepEqual(await problems.allTextContents(), expected.map(findingText));
    // The two planted, and maybe the head the page was shown before it was shown block 1.
    assert.match(audit.report, /remembered heads {2}[23]\n/);
    await screenshots(page, "audit-remembered-head");
  } finally {
    await ledger.close();
  }
});

withBrowser("a fork-evidence file chosen on the board is checked there", async (browser) => {
  const ledger = await serveLedger();
  try {
    const seed = await serverSeed(ledger.kv);
    const page = await browser.newPage({ viewport: VIEWPORTS[0] });
    await page.goto(new URL("board", ledger.url).href);
    await page.locator('.bulletin[data-ready="true"]').waitFor();
    const input = page.locator('input[type="file"][data-action="check-evidence"]');
    const choose = async (name: string, value: unknown) => {
      const text = typeof value === "string" ? value : JSON.stringify(value);
      await input.setInputFiles({ name, mimeType: "application/json", buffer: Buffer.from(text) });
      const verdict = page.locator(`.evidence-result:has-text("${name}")`);
      await verdict.waitFor();
      return verdict;
    };
    const fork = (s: Uint8Array) =>
      forkEvidence(serverPublicKey(s), [
        signed(s, 1, "aa".repeat(32)),
        signed(s, 1, "bb".repeat(32)),
      ]);

    const valid = await choose("valid.json", fork(seed));
    assert.equal(await valid.getAttribute("data-evidence-verdict"), "fork");
    assert.equal(await valid.getAttribute("data-evidence-against"), "this-server");
    assert.match(await valid.textContent() ?? "", /proves a fork: block 1 was signed twice/);
    assert.match(await valid.textContent() ?? "", /It is proof against this server/);
    await screenshots(page, "evidence-fork");

    const elsewhere = await choose(
      "other-key.json",
      fork(crypto.getRandomValues(new Uint8Array(32))),
    );
    assert.equal(await elsewhere.getAttribute("data-evidence-verdict"), "fork");
    assert.equal(await elsewhere.getAttribute("data-evidence-against"), "other-key");
    assert.match(await elsewhere.textContent() ?? "", /It is not proof against this server/);

    const tampered = fork(seed);
    tampered.heads[1].hash = "cc".repeat(32);
    const invalid = await choose("tampered.json", tampered);
    assert.equal(await invalid.getAttribute("data-evidence-verdict"), "no-fork");
    assert.match(
      await invalid.textContent() ?? "",
      new RegExp(`proves no fork.*Head 2 is not signed by key ${serverPublicKey(seed)}`),
    );
    const junk = await choose("junk.json", "{not json");
    assert.equal(await junk.getAttribute("data-evidence-verdict"), "no-fork");
    assert.match(await junk.textContent() ?? "", /The file is not JSON/);
  } finally {
    await ledger.close();
  }
});
