// The anonymity lens in real Chromium against the real server (in-memory KV, fast sealing), over a
// ledger built through the API with real keys and ring signatures. It holds a closed set — 8
// ballots whose rings all use the same 8 keys, and a 9th ballot over a 9th key and 7 of those —
// so the 9th ballot has exactly one possible signer, and a second group where one revealed signer
// sets off a chain reaction. The voting panel's ring line and the board's anonymity section are
// checked against those known answers, and screenshots land in tests/artifacts/.
import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import { analyseAnonymity } from "../../lib/client/anonymity/anonymity.ts";
import { build } from "../../scripts/build.ts";
import { call, makeVoters, signedVote, type TestVoter } from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";
import { COLOURS, launchChromium, skipWithoutChromium, storedVoter } from "./browser.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
const VIEWPORTS = [{ width: 1280, height: 800 }, { width: 1920, height: 1080 }];

type Cast = { voter: TestVoter; ring: TestVoter[]; payload: string };
type Accepted = Cast & { voteId: string; blockId: number; signature: string; keyId: number };

/** A ring in the order the page would send it: sorted by key, so the signer's place says nothing. */
function sortedRing(members: TestVoter[]): TestVoter[] {
  return [...members].sort((a, b) => (a.key < b.key ? -1 : 1));
}

async function height(base: string): Promise<number> {
  return (await call(base, "GET", "/api/block/status")).body.height;
}

async function sealedUpTo(base: string, target: number): Promise<void> {
  while (await height(base) < target) await new Promise((r) => setTimeout(r, 100));
}

/** Posts each cast as a signed vote and waits until all of them are sealed. */
async function castAll(
  base: string,
  casts: Cast[],
  ids: Map<string, number>,
): Promise<Accepted[]> {
  const out: Accepted[] = [];
  for (const cast of casts) {
    const vote = signedVote(cast.voter, sortedRing(cast.ring), cast.payload);
    const res = await call(base, "POST", "/api/vote", vote);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    out.push({ ...cast, ...res.body, signature: vote.signature, keyId: ids.get(cast.voter.key)! });
  }
  await sealedUpTo(base, Math.max(...out.map((a) => a.blockId)));
  return out;
}

async function colourOf(locator: Locator): Promise<string> {
  return await locator.evaluate((el) => getComputedStyle(el).color);
}

async function screenshots(page: Page, name: string, ready: () => Promise<void>): Promise<void> {
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    await ready();
    await page.screenshot({
      path: new URL(`${name}-${viewport.width}x${viewport.height}.png`, ARTIFACTS).pathname,
    });
  }
}

Deno.test({
  name: "the anonymity lens in Chromium",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { BLOCK_INTERVAL_MS: "250" } });
    const browser = await launchChromium();
    try {
      // Closed set: a[0..7] each cast one ballot over a[0..7]; a[8] casts over a[8] and a[0..6].
      // Chain group: m[0..6] cast over m[0..7]; m[8] over m[0..6] and m[8]; m[7] casts over m[7]
      // and the seven keys n[0..6], which never vote.
      const a = makeVoters(9);
      const m = makeVoters(9);
      const n = makeVoters(7);
      const ids = new Map<string, number>();
      for (const voter of [...a, ...m, ...n]) {
        const res = await call(server.url, "POST", "/api/pki/key", { key: voter.key });
        assert.equal(res.status, 201);
        ids.set(voter.key, res.body.id);
      }
      const closed = await castAll(server.url, [
        ...a.slice(0, 8).map((voter, i) => ({
          voter,
          ring: a.slice(0, 8),
          payload: `Choice ${"AB"[i % 2]}`,
        })),
        { voter: a[8], ring: [a[8], ...a.slice(0, 7)], payload: "Choice C" },
      ], ids);
      const chain = await castAll(server.url, [
        ...m.slice(0, 7).map((voter) => ({ voter, ring: m.slice(0, 8), payload: "Choice A" })),
        { voter: m[8], ring: [...m.slice(0, 7), m[8]], payload: "Choice B" },
        { voter: m[7], ring: [m[7], ...n], payload: "Choice C" },
      ], ids);
      const exposed = closed[8];
      const exposedByReveal = chain[7];
      const revealedBallot = chain[8];
      const ballots = closed.length + chain.length;

      const context = await browser.newContext({ viewport: VIEWPORTS[0] });
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      const blockReads: string[] = [];
      page.on("request", (request) => {
        const path = new URL(request.url()).pathname;
        if (/^\/api\/block\/id\/\d+\/votes$/.test(path)) blockReads.push(path);
      });

      // Three voters of this browser: the exposed signer a[8] and two members of its ring.
      const names = ["Grace B. Hopper", "Ada B. Lovelace", "Alan M. Turing"];
      const entries: Record<string, string> = {
        voters: names.join(","),
        ...storedVoter(names[0], exposed),
        ...storedVoter(names[1], closed[0]),
        ...storedVoter(names[2], closed[1]),
      };

      await t.step(
        "the panel names the voters of this page in its ring and warns in red",
        async () => {
          await page.goto(server.url);
          await page.evaluate((e) => {
            localStorage.clear();
            for (const [k, v] of Object.entries(e)) localStorage.setItem(k, v);
          }, entries);
          await page.reload();
          const panel = (name: string) => page.locator(`section.voter[data-voter="${name}"]`);
          const line = (name: string) =>
            panel(name).locator('[data-kind="ring"][data-effective-anonymity]');

          const grace = line(names[0]);
          await grace.waitFor();
          assert.equal(await grace.getAttribute("data-effective-anonymity"), "1");
          const inRing = sortedRing(exposed.ring).map((v) => v.key);
          const onPage = new Map([[closed[0].voter.key, names[1]], [
            closed[1].voter.key,
            names[2],
          ]]);
          const named = inRing.filter((k) => onPage.has(k)).map((k) => onPage.get(k));
          assert.equal(
            await grace.locator(".ring-hidden").textContent(),
            `Hidden among 8 keys: you, ${named.join(", ")} and 5 keys of voters not on this page`,
          );
          assert.equal(
            await grace.locator(".ring-anonymity").textContent(),
            "Effective anonymity: 1 of 8 — the other sealed ballots rule out 7",
          );
          assert.equal(await colourOf(grace.locator(".ring-anonymity")), COLOURS.red);
          assert.match(
            (await grace.locator(".ring-warning").textContent())!,
            /^Not anonymous: the public record shows that only one key can have cast this ballot/,
          );
          assert.equal(await colourOf(grace.locator(".ring-warning")), COLOURS.red);

          const ada = line(names[1]);
          await ada.waitFor();
          assert.equal(await ada.getAttribute("data-effective-anonymity"), "8");
          assert.equal(
            await ada.locator(".ring-hidden").textContent(),
            `Hidden among 8 keys: you, ${names[2]} and 6 keys of voters not on this page`,
          );
          assert.equal(await ada.locator(".ring-warning").count(), 0);
          assert.notEqual(await colourOf(ada.locator(".ring-anonymity")), COLOURS.red);
          await line(names[2]).waitFor();

          // One analysis for the whole page: every sealed block's votes were read once, not once per
          // panel.
          assert.equal(new Set(blockReads).size, blockReads.length, blockReads.join("\n"));
          await screenshots(page, "anonymity-panel", async () => {
            await grace.scrollIntoViewIfNeeded();
          });
        },
      );

      const section = page.locator('[data-section="anonymity"]');
      const row = (voteId: string) => section.locator(`[data-vote-id="${voteId}"]`);

      await t.step("the board lists every sealed ballot, lowest anonymity first", async () => {
        await page.goto(new URL("board", server.url).href);
        await section.locator(`[data-vote-id][data-effective-anonymity]`).nth(ballots - 1)
          .waitFor();
        const listed = await section.locator("[data-vote-id]").evaluateAll((els) =>
          els.map((el) => ({
            id: el.getAttribute("data-vote-id")!,
            n: Number(el.getAttribute("data-effective-anonymity")),
          }))
        );
        assert.equal(listed.length, ballots);
        assert.deepEqual(listed[0], { id: exposed.voteId, n: 1 });
        assert.ok(listed.slice(1).every((b) => b.n === 8), JSON.stringify(listed));
        const bars = await section.locator(".histogram-row").evaluateAll((els) =>
          els.map((el) => [el.getAttribute("data-anonymity"), el.getAttribute("data-ballots")])
        );
        assert.deepEqual(bars[0], ["1", "1"]);
        assert.deepEqual(bars[7], ["8", String(ballots - 1)]);
        const p = Number(await section.locator(".decoy-use").getAttribute("data-p-value"));
        assert.ok(p >= 0 && p <= 1);
        // Every key seen in a ring, most used first: 8 at first, then the rest on request.
        const decoyRows = section.locator(".decoy-table tbody tr");
        assert.equal(await decoyRows.count(), 8);
        await section.getByRole("button", { name: "Show more keys" }).click();
        assert.equal(await decoyRows.count(), 25);
        const counts = await decoyRows.evaluateAll((els) =>
          els.map((el) => Number(el.getAttribute("data-count")))
        );
        assert.deepEqual(counts, [...counts].sort((x, y) => y - x));
        assert.equal(counts.reduce((x, y) => x + y, 0), 8 * ballots);
        // The chain group's rings hold only keys registered just before their newest (ids 10…25,
        // none of the older half below it): far from an honest client's draw.
        assert.ok(p < 0.01, `the test ledger's rings lean to new keys, p = ${p}`);
        assert.match(
          (await section.locator(".decoy-use .summary-bad").textContent())!,
          /ring members lean towards newer keys far more than chance allows/,
        );
        const expected = await decoyRows.evaluateAll((els) =>
          els.map((el) => Number(el.getAttribute("data-expected")))
        );
        const fairDraws = expected.reduce((x, y) => x + y, 0);
        assert.ok(Math.abs(fairDraws - 8 * ballots) < 1e-6, `fair draws add up to ${fairDraws}`);
        await screenshots(page, "anonymity-board-decoy", async () => {
          await section.locator(".decoy-use").scrollIntoViewIfNeeded();
        });
      });

      await t.step("the ring picture says why each member is ruled out", async () => {
        await row(exposed.voteId).getByRole("button").click();
        const members = section.locator(
          `.ring-picture[data-ballot="${exposed.voteId}"] .ring-members li`,
        );
        await members.first().waitFor();
        assert.equal(await members.count(), 8);
        const possible = section.locator('.ring-members li[data-possible="true"]');
        assert.equal(await possible.count(), 1);
        assert.equal(await possible.getAttribute("data-key"), exposed.voter.key);
        const ruledOut = section.locator(
          '.ring-members li[data-possible="false"] .member-reason',
        );
        for (const reason of await ruledOut.allTextContents()) {
          assert.equal(reason, "✗ certainly cast one of 8 other ballots");
        }
        // The voters of this browser are named beside their keys.
        assert.equal(
          await section.locator(`.ring-members li[data-key="${exposed.voter.key}"] .member-name`)
            .textContent(),
          names[0],
        );
        await screenshots(page, "anonymity-board-closed-set", async () => {
          await section.scrollIntoViewIfNeeded();
        });
      });

      await t.step("revealing one signer sets off a chain reaction", async () => {
        await row(revealedBallot.voteId).getByRole("button").click();
        const member = section.locator(
          `.ring-picture[data-ballot="${revealedBallot.voteId}"] li[data-key="${revealedBallot.voter.key}"]`,
        );
        await member.getByRole("button", { name: "Reveal: this key cast it" }).click();
        await row(exposedByReveal.voteId).and(page.locator('[data-effective-anonymity="1"]'))
          .waitFor();
        for (const cast of chain.slice(0, 7)) {
          assert.equal(await row(cast.voteId).getAttribute("data-effective-anonymity"), "7");
        }
        const cost = section.locator(".reveal-cost");
        assert.equal(await cost.getAttribute("data-lost"), "8");
        assert.equal(
          await cost.textContent(),
          "8 other ballots lose anonymity: 1 now has a single possible signer; " +
            "7 go from 8 to 7 possible signers. They are marked in the list below.",
        );
        const weakRow = row(exposedByReveal.voteId);
        assert.match((await weakRow.getAttribute("class"))!, /ballot-weak/);
        assert.equal(await colourOf(weakRow.locator(".ballot-anonymity")), "rgb(198, 40, 40)");
        await row(exposedByReveal.voteId).getByRole("button").click();
        const reasons = await section.locator(
          `.ring-picture[data-ballot="${exposedByReveal.voteId}"] li[data-possible="false"] .member-reason`,
        ).allTextContents();
        assert.equal(reasons.length, 7);
        await screenshots(page, "anonymity-board-reveal", async () => {
          await section.locator(".reveals").scrollIntoViewIfNeeded();
        });
        await section.getByRole("button", { name: "Forget" }).click();
        await row(exposedByReveal.voteId).and(page.locator('[data-effective-anonymity="8"]'))
          .waitFor();
      });

      await t.step("a new block updates the figures without reloading", async () => {
        const late = makeVoters(1)[0];
        const res = await call(server.url, "POST", "/api/pki/key", { key: late.key });
        ids.set(late.key, res.body.id);
        const [cast] = await castAll(server.url, [
          { voter: late, ring: [late, ...n], payload: "Choice A" },
        ], ids);
        await row(cast.voteId).waitFor();
        assert.equal(await section.locator("[data-vote-id]").count(), ballots + 1);
      });

      await t.step("beyond 200 ballots the list comes in pages", async () => {
        // 200 more ballots over rings of 2 (cheap to sign), each over its signer and the next.
        const crowd = makeVoters(201);
        for (const voter of crowd) {
          const res = await call(server.url, "POST", "/api/pki/key", { key: voter.key });
          ids.set(voter.key, res.body.id);
        }
        await castAll(
          server.url,
          crowd.slice(0, 200).map((voter, i) => ({
            voter,
            ring: [voter, crowd[i + 1]],
            payload: "Choice B",
          })),
          ids,
        );
        const total = ballots + 1 + 200;
        const pages = section.locator(".anonymity-pages");
        await pages.getByText(`Ballots 1–200 of ${total}`).waitFor({ timeout: 30_000 });
        assert.equal(await section.locator("[data-vote-id]").count(), 200);
        await pages.getByRole("button", { name: "Next 200" }).click();
        await pages.getByText(`Ballots 201–${total} of ${total}`).waitFor();
        assert.equal(await section.locator("[data-vote-id]").count(), total - 200);
        // Lowest first across pages: the last page ends with ballots that keep their whole ring.
        const last = await section.locator("[data-vote-id]").last().getAttribute(
          "data-effective-anonymity",
        );
        assert.equal(last, "8");
        assert.deepEqual(pageErrors, []);
      });

      await t.step("a vote cast on the page shows the figure the record gives", async () => {
        await page.goto(server.url);
        await page.locator('.voting-page[data-ready="true"]').waitFor();
        await page.getByRole("button", { name: "Generate A new Voter" }).click();
        const panel = page.locator("section.voter").nth(names.length);
        await panel.waitFor();
        await panel.getByRole("button", { name: "Generate new keys" }).click();
        await panel.locator('[data-kind="key"][data-status="unregistered"]').waitFor();
        await panel.getByRole("button", { name: "Register A Key" }).click();
        await panel.locator('[data-kind="key"][data-status="registered"]').waitFor();
        await panel.getByPlaceholder("Vote Content").fill("Choice C");
        await panel.getByRole("button", { name: "Submit Vote" }).click();
        const line = panel.locator('[data-kind="ring"][data-effective-anonymity]');
        await line.waitFor({ timeout: 30_000 });
        const voteId = await page.evaluate(() => {
          const name = localStorage.getItem("voters")!.split(",").pop();
          return localStorage.getItem(`${name}:voteId`);
        });
        // The same figure, worked out here from the record as the API serves it.
        const record = [];
        for (let h = 1; h <= await height(server.url); h++) {
          for (let offset = 0;; offset += 100) {
            const page = (await call(
              server.url,
              "GET",
              `/api/block/id/${h}/votes?offset=${offset}&limit=100`,
            )).body;
            for (const v of page.votes) record.push({ id: v.voteId, ring: v.vote.publicKeys });
            if (offset + 100 >= page.total) break;
          }
        }
        const analysis = analyseAnonymity(record);
        assert.ok(analysis.consistent);
        const expected = analysis.ballots.find((b) => b.id === voteId)!.effectiveAnonymity;
        assert.equal(await line.getAttribute("data-effective-anonymity"), String(expected));
        assert.match(
          (await line.locator(".ring-hidden").textContent())!,
          /^Hidden among 8 keys: you/,
        );
        assert.deepEqual(pageErrors, []);
      });
      await context.close();
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
