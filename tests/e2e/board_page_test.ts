// The bulletin board in real Chromium against the real server (in-memory KV, fast sealing), with
// votes made over HTTP with real keys and ring signatures. A tampering proxy in front of the
// server rewrites one block's prev_hash and one vote's payload: the page, which checks everything
// itself, must show a red link and a red proof step there, and only green on the honest server.
// The voting panel's tag check is driven the same way: honest, then through a proxy that says
// another vote holds its tag.
import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import { build } from "../../scripts/build.ts";
import {
  call,
  makeVoters,
  ringFor,
  signedVote,
  type TestVoter,
} from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";
import { startTamperingProxy } from "../helpers/tampering_proxy.ts";
import { COLOURS, launchChromium, skipWithoutChromium, storedVoter } from "./browser.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
/** The board's check colours (static/1_pages.css `--check-ok`, `--check-bad`). */
const CHECK = { ok: "rgb(46, 125, 50)", bad: "rgb(198, 40, 40)" } as const;
const TAMPERED_PREV_HASH = "ab".repeat(32);
const TAMPERED_PAYLOAD = "Choice Z";

type Cast = { voter: TestVoter; keyId: number; payload: string; signature: string; tag: string };
type Accepted = Cast & { voteId: string; blockId: number };

/** Height of the last sealed block. */
async function height(base: string): Promise<number> {
  return (await call(base, "GET", "/api/block/status")).body.height;
}

/** Waits until the chain's height reaches `target`. */
async function sealedUpTo(base: string, target: number): Promise<void> {
  while (await height(base) < target) await new Promise((r) => setTimeout(r, 100));
}

/** Posts each cast as a vote and answers them with their ids. */
async function castAll(base: string, casts: Cast[]): Promise<Accepted[]> {
  const out: Accepted[] = [];
  for (const cast of casts) {
    const res = await call(base, "POST", "/api/vote", {
      publicKeys: JSON.parse(cast.signature).ring,
      signature: cast.signature,
      tag: cast.tag,
      payload: cast.payload,
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    out.push({ ...cast, ...res.body });
  }
  return out;
}

function castBy(voter: TestVoter, pool: TestVoter[], ids: Map<string, number>, payload: string) {
  const vote = signedVote(voter, ringFor(voter, pool, 3), payload);
  return { voter, keyId: ids.get(voter.key)!, payload, signature: vote.signature, tag: vote.tag };
}

async function colourOf(
  locator: Locator,
  property: "color" | "background-color" | "border-top-color" = "color",
) {
  return await locator.evaluate(
    (el, p) => getComputedStyle(el).getPropertyValue(p),
    property,
  );
}

async function openBoard(page: Page, base: string, blocks: number): Promise<void> {
  await page.goto(new URL("board", base).href);
  await page.locator('.bulletin[data-ready="true"]').waitFor();
  await page.locator(".chain-block").nth(blocks - 1).waitFor();
}

async function openProof(page: Page, blockHeight: number, voteId: string): Promise<Locator> {
  await page.locator(`.chain-block[data-height="${blockHeight}"]`).click();
  const row = page.locator(`tr[data-vote="${voteId}"]`);
  await row.getByRole("button", { name: "Check proof" }).click();
  const steps = page.locator(`[data-proof="${voteId}"] .proof-steps .step`);
  await steps.last().waitFor();
  return steps;
}

Deno.test({
  name: "the bulletin board in Chromium",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { BLOCK_INTERVAL_MS: "250" } });
    const browser = await launchChromium();
    const proxies: { close(): Promise<void> }[] = [];
    try {
      // Six voters with registered keys; five vote in two blocks, the sixth votes later.
      const voters = makeVoters(6);
      const ids = new Map<string, number>();
      for (const voter of voters) {
        const res = await call(server.url, "POST", "/api/pki/key", { key: voter.key });
        assert.equal(res.status, 201);
        ids.set(voter.key, res.body.id);
      }
      const first = await castAll(server.url, [
        castBy(voters[0], voters, ids, "Choice A"),
        castBy(voters[1], voters, ids, "Choice B"),
        castBy(voters[2], voters, ids, "Choice A"),
      ]);
      await sealedUpTo(server.url, Math.max(...first.map((v) => v.blockId)));
      const second = await castAll(server.url, [
        castBy(voters[3], voters, ids, "Choice A"),
        castBy(voters[4], voters, ids, "Choice C"),
      ]);
      await sealedUpTo(server.url, Math.max(...second.map((v) => v.blockId)));
      const head = await height(server.url);
      const votesIn = async (h: number) =>
        (await call(server.url, "GET", `/api/block/id/${h}/votes`)).body.votes as {
          voteId: string;
          index: number;
        }[];
      // The payload rewritten is leaf 0 of the first vote's block; the prev_hash, the head's.
      const victimBlock = first[0].blockId;
      const victim = (await votesIn(victimBlock))[0].voteId;

      const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      const consoleErrors: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") consoleErrors.push(`${m.text()} (${m.location().url})`);
      });

      await t.step("honest server: every link and every proof step green", async () => {
        await openBoard(page, server.url, head + 1);
        const links = page.locator(".chain-link");
        assert.equal(await links.count(), head + 1);
        for (let h = 0; h <= head; h++) {
          const link = page.locator(`.chain-link[data-height="${h}"]`);
          assert.equal(await link.getAttribute("data-link"), "ok", `link ${h}`);
          assert.equal(await colourOf(link, "background-color"), CHECK.ok);
          assert.equal(
            await page.locator(`.chain-block[data-height="${h}"]`).getAttribute("data-hash-ok"),
            "true",
          );
        }
        const steps = await openProof(page, victimBlock, victim);
        const count = await steps.count();
        assert.ok(count >= 4, "leaf, root, block and previous at least");
        for (let i = 0; i < count; i++) {
          assert.equal(await steps.nth(i).getAttribute("data-ok"), "true");
          assert.equal(await colourOf(steps.nth(i)), CHECK.ok);
        }
        const kinds = await steps.evaluateAll((els) => els.map((el) => el.dataset.step));
        assert.equal(kinds[0], "leaf");
        assert.deepEqual(kinds.slice(-3), ["root", "block", "previous"]);
        assert.equal(
          new Set(kinds.slice(1, -3)).size <= 1 && kinds.slice(1, -3).every((k) => k === "sibling"),
          true,
        );
      });

      await t.step(
        "the tally: bars recounted in the browser, counts list their votes",
        async () => {
          const rows = page.locator(".tally-row");
          await rows.first().waitFor();
          const tally = (await call(server.url, "GET", "/api/tally")).body;
          assert.equal(await rows.count(), tally.results.length);
          for (const [i, r] of tally.results.entries()) {
            assert.equal(await rows.nth(i).getAttribute("data-payload"), r.payload);
            assert.equal(await rows.nth(i).locator(".tally-count").textContent(), String(r.count));
            assert.equal(await rows.nth(i).getAttribute("data-ok"), "true");
          }
          await page.getByText(/the counts agree/).waitFor();
          await page.locator('.tally-row[data-payload="Choice A"] .tally-count').click();
          const listed = page.locator("#payload-votes li");
          await listed.first().waitFor();
          assert.equal(await listed.count(), 3);
          await listed.first().getByRole("button").click();
          await page.locator("[data-proof] .proof-steps .step").last().waitFor();
          const payloadCell = page.locator("tr.vote-open .vote-payload");
          assert.equal(await payloadCell.textContent(), "Choice A");
        },
      );

      await t.step("live: a new block appears without reloading, the tally follows", async () => {
        const [late] = await castAll(server.url, [castBy(voters[5], voters, ids, "Choice C")]);
        await page.locator(`.chain-block[data-height="${late.blockId}"]`).waitFor();
        assert.equal(
          await page.locator(`.chain-link[data-height="${late.blockId}"]`).getAttribute(
            "data-link",
          ),
          "ok",
        );
        await page.locator('.tally-row[data-payload="Choice C"] .tally-count', { hasText: "2" })
          .waitFor();
        await page.getByText(/the counts agree/).waitFor();
        // No failed fetch, no refused script or style (the Content-Security-Policy holds).
        assert.deepEqual(consoleErrors, []);
      });
      const liveHead = await height(server.url);

      const tampering = startTamperingProxy(server.url, (path, body) => {
        const b = body as Record<string, unknown>;
        if (path === "/api/blocks") {
          for (const block of b.blocks as { height: number; prev_hash: string }[]) {
            if (block.height === head) block.prev_hash = TAMPERED_PREV_HASH;
          }
        }
        if (path === `/api/block/id/${victimBlock}/votes`) {
          for (const entry of b.votes as { index: number; vote: { payload: string } }[]) {
            if (entry.index === 0) entry.vote.payload = TAMPERED_PAYLOAD;
          }
        }
      });
      proxies.push(tampering);

      await t.step("tampered answers: a red link and red proof steps", async () => {
        await openBoard(page, tampering.url, liveHead + 1);
        const broken = page.locator(`.chain-link[data-height="${head}"]`);
        assert.equal(await broken.getAttribute("data-link"), "broken");
        assert.equal(await colourOf(broken, "background-color"), CHECK.bad);
        const block = page.locator(`.chain-block[data-height="${head}"]`);
        assert.equal(await block.getAttribute("data-hash-ok"), "false");
        assert.equal(await colourOf(block, "border-top-color"), CHECK.bad);
        const links = await page.locator(".chain-link").evaluateAll((els) =>
          els.map((el) => [Number(el.dataset.height), el.dataset.link])
        );
        for (const [h, link] of links) {
          assert.equal(link, h === head ? "broken" : "ok", `link ${h}`);
        }
        await page.getByText(`block(s) fail a check: #${head}`).waitFor();

        const steps = await openProof(page, victimBlock, victim);
        assert.equal(
          await page.locator(`tr[data-vote="${victim}"] .vote-payload`).textContent(),
          TAMPERED_PAYLOAD,
        );
        const leaf = steps.and(page.locator('[data-step="leaf"]'));
        assert.equal(await leaf.getAttribute("data-ok"), "false");
        assert.equal(await colourOf(leaf), CHECK.bad);
        const root = steps.and(page.locator('[data-step="root"]'));
        assert.equal(await root.getAttribute("data-ok"), "false");
        assert.equal(await colourOf(root), CHECK.bad);
        assert.equal(
          await steps.and(page.locator('[data-step="block"]')).getAttribute("data-ok"),
          "true",
        );
        // The recount sees the rewritten payload too.
        const bad = page.locator('.tally-row[data-ok="false"]');
        await bad.first().waitFor();
        assert.ok((await bad.count()) >= 1);
        assert.equal(await colourOf(bad.first().locator(".tally-count")), CHECK.bad);

        await Deno.mkdir(ARTIFACTS, { recursive: true });
        await page.screenshot({
          path: new URL("board-page.png", ARTIFACTS).pathname,
          fullPage: true,
        });
      });

      await t.step("the board's first load is small and needs no faker", async () => {
        await openBoard(page, server.url, liveHead + 1);
        const scripts = await page.evaluate(() =>
          (performance.getEntriesByType("resource") as PerformanceResourceTiming[])
            .filter((e) => e.name.endsWith(".js"))
            .map((e) => ({ name: e.name, encoded: e.encodedBodySize }))
        );
        assert.ok(scripts.some((s) => /\/Board-[0-9a-f]{12}\.js$/.test(s.name)));
        assert.ok(!scripts.some((s) => /VotingPage|voter_names/.test(s.name)));
        const gzipBytes = scripts.reduce((n, s) => n + s.encoded, 0);
        await Deno.writeTextFile(
          new URL("board-page-metrics.json", ARTIFACTS),
          JSON.stringify({ firstLoadJsGzipBytes: gzipBytes, firstLoadScripts: scripts }, null, 2) +
            "\n",
        );
        console.log(`board first-load JS ${gzipBytes} B gzipped`);
      });

      await t.step("voting page and board link to each other", async () => {
        await page.goto(server.url);
        await page.getByRole("link", { name: "Public bulletin board" }).click();
        await page.locator('.bulletin[data-ready="true"]').waitFor();
        assert.equal(new URL(page.url()).pathname, "/board");
        await page.getByRole("link", { name: "Back to the voting page" }).click();
        await page.locator('.voting-page[data-ready="true"]').waitFor();
        assert.equal(new URL(page.url()).pathname, "/");
      });

      // A voter whose entries hold voters[0]'s real key and vote, as the page would store them.
      const own = first[0];
      const namespace = "Ada Lovelace Byron";
      const entries = { voters: namespace, ...storedVoter(namespace, own) };
      const tagLine = page.locator('section.voter [data-kind="tag"]');

      await t.step("a voted panel checks its tag: this key voted once", async () => {
        await page.goto(server.url);
        await page.evaluate((e) => {
          localStorage.clear();
          for (const [k, v] of Object.entries(e)) localStorage.setItem(k, v);
        }, entries);
        await page.reload();
        await page.locator('[data-kind="vote"][data-status="voted"]').waitFor();
        await tagLine.and(page.locator('[data-status="once"]')).waitFor();
        assert.equal(await tagLine.textContent(), "Tag checked: this key voted once");
        assert.equal(await colourOf(tagLine), COLOURS.green);
      });

      const other = second[0].voteId;
      const reusing = startTamperingProxy(server.url, (path, body) => {
        if (path === `/api/tag/${own.tag}`) (body as { voteId: string }).voteId = other;
      });
      proxies.push(reusing);

      await t.step("a board that lists another vote under its tag: red", async () => {
        await page.goto(reusing.url);
        await page.evaluate((e) => {
          localStorage.clear();
          for (const [k, v] of Object.entries(e)) localStorage.setItem(k, v);
        }, entries);
        await page.reload();
        const voteLine = page.locator('[data-kind="vote"]');
        await voteLine.and(page.locator('[data-status="voted"]')).waitFor();
        await tagLine.and(page.locator('[data-status="reused"]')).waitFor();
        assert.equal(await tagLine.textContent(), `Your key was used for another vote: ${other}`);
        assert.equal(await colourOf(tagLine), COLOURS.red);
        // The page's own status line is unchanged.
        assert.equal(
          await voteLine.textContent(),
          `Vote Voted with Block ID: ${own.blockId} and Vote ID: ${own.voteId}`,
        );
        assert.deepEqual(pageErrors, []);
      });
      await context.close();
    } finally {
      for (const proxy of proxies) await proxy.close();
      await browser.close();
      await server.stop();
    }
  },
});
