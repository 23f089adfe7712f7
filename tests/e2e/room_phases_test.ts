// A staggered room in a round with phases (page §14.5, protocol §2.8), in real Chromium against the
// real server: the presenter starts a round with late joiners on; 16 phones at 390×844 arrive one
// at a time, each joins and presses a choice at once, and waits; a waiting phone survives a
// reload; the presenter opens voting and all 16 turn green; 8 more phones arrive, form a late group
// and turn green. Every ballot's possible signers, by the project's lens and by an independent
// matching, are its whole group; every ring is a group; `deno task audit URL --round 2` passes;
// the board shows the groups; a late key left short is told why in the next round, where the demo
// round runs alone and opens voting itself.
// The same room under the specified ring rule is worked out too: the "before" table.
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { build } from "../../scripts/build.ts";
import { analyseAnonymity } from "../../lib/client/anonymity/anonymity.ts";
import { cryptoRandomIndex } from "../../lib/client/voter/voters.ts";
import { startServer } from "../helpers/server_process.ts";
import { COLOURS, launchChromium, openPhone, skipWithoutChromium } from "./browser.ts";
import {
  anonymityTable,
  exactSigners,
  type RecordBallot,
  specifiedRuleRoom,
} from "./exact_signers.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
const ROOT = new URL("../../", import.meta.url);
const TOKEN = "room-phases-presenter-0123456789";
const CHOICES = ["Yes", "No"];
const ON_TIME = 16;
const LATE = 8;
const PROJECTOR = { width: 1920, height: 1080 };

/** GET `path` of the server as JSON. */
async function json(url: string, path: string) {
  const res = await fetch(`${url}${path}`);
  assert.equal(res.status, 200, path);
  return await res.json();
}

/** Every ballot of round `round` as the public record serves it: id and ring. */
async function roundBallots(url: string, round: number): Promise<RecordBallot[]> {
  const { height } = await json(url, `api/rounds/${round}/block/status`);
  const ballots: RecordBallot[] = [];
  for (let h = 1; h <= height; h++) {
    for (let offset = 0;; offset += 100) {
      const page = await json(
        url,
        `api/rounds/${round}/block/id/${h}/votes?offset=${offset}&limit=100`,
      );
      for (const v of page.votes) ballots.push({ id: v.voteId, ring: v.vote.publicKeys });
      if (offset + 100 >= page.total) break;
    }
  }
  return ballots;
}

Deno.test({
  name: "a staggered room: 16 phones then 8 late ones, every ballot hidden in its whole group",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { ADMIN_TOKEN: TOKEN, BLOCK_INTERVAL_MS: "1000" } });
    const browser = await launchChromium();
    const pageErrors: string[] = [];
    const watch = (page: Page) => page.on("pageerror", (error) => pageErrors.push(String(error)));
    try {
      const desk = await browser.newContext({ viewport: PROJECTOR });
      const presenter = await desk.newPage();
      watch(presenter);

      await t.step("a link to /?admin=x does not sign the presenter out", async () => {
        await presenter.goto(`${server.url}?admin=${TOKEN}`);
        await presenter.locator('[data-section="presenter"]').waitFor();
        await presenter.goto(`${server.url}?admin=x`);
        await presenter.locator('.voting-page[data-ready="true"]').waitFor();
        await presenter.locator('[data-section="presenter"]').waitFor({ timeout: 30_000 });
        assert.equal(
          await presenter.evaluate(() => localStorage.getItem("ringvote/admin-token")),
          TOKEN,
        );
      });

      await t.step("round 1's QR code offers to start a round with phases first", async () => {
        await presenter.locator('[data-action="present"]').click();
        await presenter.locator("[data-present-offer]").waitFor();
        await presenter.locator('[data-action="start-round-first"]').click();
        await presenter.locator("[data-present]").waitFor({ state: "detached" });
      });

      await t.step("the presenter starts a round with late joiners on", async () => {
        const form = presenter.locator('[data-section="rounds"]');
        await form.locator('[name="question"]').fill("Pizza tonight?");
        await form.locator('[name="choices"]').fill(CHOICES.join("\n"));
        await form.locator('[name="interval"]').fill("1");
        await form.locator('[name="lateJoiners"]').check();
        await presenter.locator('[data-action="start-round"]').click();
        await presenter.locator('[data-round-status="started"]').waitFor();
        await presenter.locator('.voting-page[data-round="2"]').waitFor({ timeout: 30_000 });
        const round = (await json(server.url, "api/rounds")).rounds[1];
        assert.equal(round.phase, "join");
        assert.equal(round.lateJoiners, true);
        assert.equal(round.minVoters, 8);
      });

      const projector = await desk.newPage();
      watch(projector);
      await projector.goto(`${server.url}board?view=room`);
      await projector.locator('[data-room-phase="join"]').waitFor({ timeout: 45_000 });

      const phones: Page[] = [];
      /** A phone arrives, joins, presses a choice at once; answers its page. */
      const arrive = async (i: number) => {
        const { page } = await openPhone(browser);
        watch(page);
        await page.goto(server.url);
        await page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor();
        assert.equal(await page.locator(".add-voter").count(), 0, "no 'Generate A new Voter'");
        await page.locator('[data-action="join"]').click();
        await page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
        await page.locator(`[data-choice="${CHOICES[i % 2]}"]`).click();
        phones.push(page);
        return page;
      };

      await t.step("16 phones arrive one at a time, join, choose and wait", async () => {
        for (let i = 0; i < ON_TIME; i++) {
          const page = await arrive(i);
          const waiting = page.locator("[data-waiting-for]");
          await waiting.waitFor();
          assert.match(
            (await waiting.textContent())!,
            new RegExp(
              `^Voting opens when the presenter starts it\\. Your choice "${CHOICES[i % 2]}"`,
            ),
          );
          if (i === 0) {
            await page.screenshot({
              path: new URL("phases-phone-waiting-390.png", ARTIFACTS).pathname,
            });
          }
        }
        await projector.locator('[data-room-keys="16"]').waitFor({ timeout: 45_000 });
        assert.match(
          (await projector.locator("[data-room-keys]").textContent())!,
          /^16 keys joined\. Count the hands: more keys than people means someone made extra keys$/,
        );
        await projector.screenshot({
          path: new URL("phases-projector-join-1920x1080.png", ARTIFACTS).pathname,
        });
      });

      await t.step("a waiting phone survives a reload: its choice is kept", async () => {
        const page = phones[1];
        await page.reload();
        await page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor();
        await page.locator("[data-waiting-for]").waitFor();
        assert.match(
          (await page.locator("[data-waiting-for]").textContent())!,
          /Voting opens when the presenter starts it/,
        );
        assert.equal(
          await page.locator(`[data-choice="${CHOICES[1]}"]`).getAttribute("aria-pressed"),
          "true",
        );
      });

      await t.step("the presenter opens voting; all 16 turn green", async () => {
        const open = presenter.locator('[data-action="open-voting"]');
        await presenter.locator('[data-open-joined="16"]').waitFor({ timeout: 30_000 });
        await open.click();
        await presenter.locator('[data-open-status="opened"]').waitFor();
        for (const page of phones) {
          const vote = page.locator('[data-kind="vote"][data-status="voted"]');
          await vote.waitFor({ timeout: 90_000 });
          assert.equal(await vote.evaluate((el) => getComputedStyle(el).color), COLOURS.green);
          assert.equal(
            await page.locator("[data-round-anonymity]").textContent(),
            "Hidden among all 16 keys of this round: effective anonymity 16 of 16",
          );
        }
        await projector.locator('[data-room-phase="voting"]').waitFor({ timeout: 45_000 });
        await projector.locator('[data-room-voted="16"]').waitFor({ timeout: 60_000 });
        assert.equal(
          await projector.locator("[data-room-voted]").textContent(),
          "Voting: 16 of 16 voted",
        );
        const shown = await projector.locator("li[data-group-fingerprint]").getAttribute(
          "data-group-fingerprint",
        );
        assert.equal(
          await phones[0].locator("[data-group-fingerprint]").getAttribute(
            "data-group-fingerprint",
          ),
          shown,
        );
        await phones[0].screenshot({
          path: new URL("phases-phone-voted-390.png", ARTIFACTS).pathname,
        });
        await projector.screenshot({
          path: new URL("phases-projector-voting-1920x1080.png", ARTIFACTS).pathname,
        });
      });

      await t.step("8 late phones arrive, form a late group and turn green", async () => {
        const late: Page[] = [];
        for (let i = 0; i < LATE; i++) {
          const page = await arrive(ON_TIME + i);
          late.push(page);
          if (i < LATE - 1) {
            const missing = LATE - 1 - i;
            await page.locator("[data-waiting-for]").waitFor();
            await page.waitForFunction(
              (n) =>
                document.querySelector("[data-waiting-for]")?.textContent?.includes(
                  `waits for ${n} more late`,
                ) ?? false,
              missing,
              { timeout: 45_000 },
            );
            assert.match(
              (await page.locator("[data-waiting-for]").textContent())!,
              /a late group is the cheapest to fill with extra keys/,
            );
            if (i === 0) {
              await page.screenshot({
                path: new URL("phases-phone-late-390.png", ARTIFACTS).pathname,
              });
            }
          }
        }
        for (const page of late) {
          await page.locator('[data-kind="vote"][data-status="voted"]').waitFor({
            timeout: 90_000,
          });
          assert.equal(
            await page.locator("[data-round-anonymity]").textContent(),
            "Hidden among the 8 late joiners of this round: effective anonymity 8 of 8",
          );
        }
        await projector.locator('[data-room-voted="24"]').waitFor({ timeout: 60_000 });
        await projector.screenshot({
          path: new URL("phases-projector-late-1920x1080.png", ARTIFACTS).pathname,
        });
      });

      await t.step(
        "every ballot's possible signers are its whole group; every ring is a group",
        async () => {
          const groups = await json(server.url, "api/rounds/2/groups");
          assert.deepEqual(groups.groups.map((g: number[]) => g.length), [16, 8]);
          const directory = await json(server.url, "api/rounds/2/pki/key/offset/0/limit/100");
          const keyOf = new Map<number, string>(
            directory.keys.map((k: { id: number; key: string }) => [k.id, k.key]),
          );
          const groupKeys = groups.groups.map((g: number[]) => g.map((id) => keyOf.get(id)!));
          const ballots = await roundBallots(server.url, 2);
          assert.equal(ballots.length, ON_TIME + LATE);
          const lens = analyseAnonymity(ballots);
          assert.ok(lens.consistent);
          const exact = exactSigners(ballots);
          for (const ballot of ballots) {
            const group = groupKeys.find((g: string[]) => g.join() === ballot.ring.join());
            assert.ok(group !== undefined, `ballot ${ballot.id}: its ring is a group, in id order`);
            const byLens: string[] = lens.ballots.find((b) => b.id === ballot.id)!
              .possibleSigners;
            assert.deepEqual([...byLens].sort(), [...group].sort(), `lens, ballot ${ballot.id}`);
            assert.deepEqual(
              [...exact.get(ballot.id)!].sort(),
              [...group].sort(),
              `matching, ${ballot.id}`,
            );
          }
          const after = anonymityTable(ballots.map((b) => exact.get(b.id)!.length));
          const before = specifiedRuleRoom(ON_TIME + LATE, cryptoRandomIndex);
          assert.deepEqual(anonymityTable(before.lens), anonymityTable(before.exact));
          console.log("Exact analysis of the staggered room (24 phones):");
          console.table({
            "before: 8 drawn from keys so far": anonymityTable(before.exact),
            "after: groups": after,
          });
          assert.deepEqual({ min: after.min, below8: after.below8 }, { min: 8, below8: 0 });
        },
      );

      await t.step("deno task audit URL --round 2 passes", async () => {
        const run = await new Deno.Command(Deno.execPath(), {
          args: ["task", "audit", server.url, "--round", "2"],
          cwd: ROOT.pathname,
          stdout: "piped",
          stderr: "piped",
        }).output();
        const out = new TextDecoder().decode(run.stdout) + new TextDecoder().decode(run.stderr);
        assert.equal(run.code, 0, out);
      });

      await t.step("the board's anonymity section shows the round's two groups", async () => {
        const board = await desk.newPage();
        watch(board);
        await board.goto(`${server.url}board?round=2`);
        await board.locator('[data-round-groups="2"]').waitFor({ timeout: 60_000 });
        await board.locator(".anonymity-groups li[data-group-fingerprint]").nth(1).waitFor();
        const shown = await board.locator(".anonymity-groups li").allTextContents();
        assert.match(shown[0], /^Group 1: keys 1–16 \(16 keys\), fingerprint [0-9a-f]{8}$/);
        assert.match(shown[1], /^Group 2: keys 17–24 \(8 keys, late joiners\), fingerprint/);
        await board.close();
      });

      await t.step(
        "a late key left short is told why in the next round; the demo round runs alone",
        async () => {
          for (const page of phones) await page.context().close();
          await projector.close();
          const form = presenter.locator('[data-section="rounds"]');
          await form.locator('[name="question"]').fill("Demo?");
          await form.locator('[name="choices"]').fill(CHOICES.join("\n"));
          await presenter.locator('[data-action="start-round"]').click();
          await presenter.locator('.voting-page[data-ready="true"][data-round="3"]').waitFor({
            timeout: 30_000,
          });
          await presenter.locator('[data-action="demo-round"]').click();
          // A hang guard, not a timing: 8 voters sign, the round seals every 15 s, and a loaded
          // machine running other browser tests beside this one is several times slower.
          const finished = presenter.locator(
            '[data-demo-status="done"], [data-demo-status="failed"]',
          );
          await finished.waitFor({ timeout: 240_000 });
          assert.equal(
            await finished.getAttribute("data-demo-status"),
            "done",
            (await finished.textContent()) ?? "",
          );
          await presenter.waitForFunction(
            () => document.querySelectorAll('[data-kind="vote"][data-status="voted"]').length === 8,
            undefined,
            { timeout: 120_000 },
          );
          assert.equal((await json(server.url, "api/rounds/3/tally")).total, 8);
          // Run again, the round has keys: refused, with the reason on its status line.
          await presenter.locator('[data-action="demo-round"]').click();
          await presenter.locator('[data-demo-status="failed"]').waitFor();
          assert.match(
            (await presenter.locator("[data-demo-status]").textContent())!,
            /^Not started: the demo round runs only in a round of its own/,
          );
        },
      );

      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
