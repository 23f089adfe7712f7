// The attack lab in real Chromium against the real server: the lab prepares its voters and honest
// votes on its practice ledger, every attack is sent from the page and refused with its status,
// every lie of the lens is caught by the check it names — the split view by the projector's
// witness only, a newcomer alone accepting it (green) beside one requiring the witness refusing it
// (red) — the practice ledger is unchanged
// afterwards, and the election under way — its board's tally, its key total, its blocks — is
// exactly what it was before the lab ran, and the auditor passes it. A second browser finds the
// practice ledger full (LAB_MAX_KEYS) and starts a fresh one from the page. The page runs under
// the server's Content-Security-Policy, and screenshots are saved for a look.
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { checkForkEvidence } from "../../lib/protocol/head.ts";
import { ATTACKS } from "../../lib/client/lab/attacks.ts";
import { LIES } from "../../lib/client/lab/lies.ts";
import { build } from "../../scripts/build.ts";
import { call, makeVoters, signedVote } from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";
import { checkAxeAtWidths } from "./axe.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

const ARTIFACTS = new URL("../artifacts/", import.meta.url);
const ROOT = new URL("../../", import.meta.url);

/** The practice ledger's height and tally. */
async function ledger(url: string) {
  const [status, tally] = await Promise.all([
    call(url, "GET", "/api/lab/block/status"),
    call(url, "GET", "/api/lab/tally"),
  ]);
  return { height: status.body.height, tally: tally.body };
}

/** What the election's ledger answers, as text: tally, key total, blocks. */
async function election(url: string): Promise<string[]> {
  const paths = ["/api/tally", "/api/pki/key/offset/0/limit/1", "/api/blocks"];
  return await Promise.all(paths.map(async (p) => await (await fetch(new URL(p, url))).text()));
}

/** The payloads of the tally rows the board at `path` shows, once it has read the chain. */
async function boardRows(page: Page, path: string): Promise<string[]> {
  await page.goto(path);
  await page.locator('.bulletin[data-ready="true"]').waitFor();
  await page.locator(".tally-row").first().waitFor();
  return await page.locator(".tally-row").evaluateAll((rows) =>
    rows.map((row) => row.getAttribute("data-payload") ?? "")
  );
}

Deno.test({
  name: "the lab runs every attack and every lie from the page; the ledger stays as it was",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const server = await startServer({
      env: { BLOCK_INTERVAL_MS: "700", RING_SIZE: "4", LAB_MAX_KEYS: "6" },
    });
    const browser = await launchChromium();
    try {
      // An election under way: three keys and one sealed vote.
      const voters = makeVoters(3);
      for (const v of voters) await call(server.url, "POST", "/api/pki/key", { key: v.key });
      await call(server.url, "POST", "/api/vote", signedVote(voters[0], voters, "Yes"));
      while ((await call(server.url, "GET", "/api/block/status")).body.height < 1) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const electionBefore = await election(server.url);
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const violations: string[] = [];
      page.on("console", (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });

      await t.step("the voting page and the board link to the lab", async () => {
        for (const path of ["", "board"]) {
          await page.goto(server.url + path);
          assert.equal(await page.locator('a[href="/lab"]').count(), 1, `/${path}`);
        }
      });

      await t.step("the lab prepares its own voters and honest votes", async () => {
        await page.goto(`${server.url}lab`);
        await page.locator('.lab[data-ready="true"]').waitFor({ timeout: 60_000 });
        assert.match(await page.locator(".lab-prep").innerText(), /Ready: 6 lab voters/);
        assert.equal(await page.evaluate(() => localStorage.getItem("voters")), null);
      });

      await t.step("the page says it runs on a practice ledger and links its chain", async () => {
        const note = page.locator(".lab-practice");
        assert.match(await note.innerText(), /practice ledger of its own/);
        assert.match(await note.innerText(), /Nothing done here touches the real election/);
        assert.equal(await note.locator('a[href="/board?ledger=lab"]').count(), 1);
      });
      const before = await ledger(server.url);
      assert.equal(before.tally.total, 2, "the lab's two honest votes are sealed");

      for (const attack of ATTACKS) {
        await t.step(`attack ${attack.id}: refused with ${attack.status}`, async () => {
          await page.locator(`[data-attack="${attack.id}"]`).click();
          const result = page.locator(`[data-attack-result="${attack.id}"]`);
          await result.waitFor({ timeout: 30_000 });
          assert.equal(await result.getAttribute("data-outcome"), "refused");
          assert.equal(await result.getAttribute("data-status"), String(attack.status));
          assert.equal(
            await result.locator(".ledger-compare caption").innerText(),
            "Ledger unchanged",
          );
          assert.match(await result.locator(".lab-answer").innerText(), new RegExp(attack.code));
        });
      }

      for (const lie of LIES) {
        await t.step(`lie ${lie.id}: caught as ${lie.caughtBy}`, async () => {
          await page.locator(`[data-lie="${lie.id}"]`).click();
          const result = page.locator(`[data-lie-result="${lie.id}"]`);
          await result.waitFor({ timeout: 30_000 });
          assert.equal(await result.getAttribute("data-detected"), "true");
          const failed = (await result.getAttribute("data-failed"))!.split(",");
          assert.ok(failed.includes(lie.caughtBy), failed.join(", "));
        });
      }

      await t.step(
        "the split view: alone a newcomer accepts it (green), with the projector's witness it refuses it (red)",
        async () => {
          const result = page.locator('[data-lie-result="split-view"]');
          const alone = result.locator('[data-newcomer="alone"]');
          const witnessed = result.locator('[data-newcomer="witnessed"]');
          assert.equal(await alone.getAttribute("data-verdict"), "accepted");
          assert.equal(await alone.getAttribute("data-colour"), "green");
          assert.equal(await alone.getAttribute("data-witness"), "none");
          assert.equal(await witnessed.getAttribute("data-verdict"), "refused");
          assert.equal(await witnessed.getAttribute("data-colour"), "red");
          assert.equal(await witnessed.getAttribute("data-witness"), "unwitnessed");
          // The colours as drawn: --check-ok and --check-bad.
          const edge = (side: typeof alone) =>
            side.evaluate((element) => getComputedStyle(element).borderLeftColor);
          assert.equal(await edge(alone), "rgb(46, 125, 50)");
          assert.equal(await edge(witnessed), "rgb(198, 40, 40)");
          assert.match(await alone.innerText(), /nothing to compare it with/);
          assert.match(await witnessed.innerText(), /No witness vouches for what the server shows/);
          assert.match(await result.innerText(), /Asked to cosign the forked history, it refuses/);
          await checkAxeAtWidths(page, {
            label: "/lab with every result shown",
            restore: { width: 1280, height: 800 },
          });
        },
      );

      await t.step("the fork's evidence is offered as a JSON download", async () => {
        const card = page.locator('[data-lie-result="fork-chain"]');
        const [download] = await Promise.all([
          page.waitForEvent("download"),
          card.locator(".fork-download").click(),
        ]);
        const text = await Deno.readTextFile(await download.path());
        const evidence = JSON.parse(text);
        assert.equal(evidence.kind, "ringvote/v1/fork-evidence");
        // Proven under the lens's own key, never the server's (protocol §4.7).
        const lensKey = await call(server.url, "GET", "/api/lab/lens/honest/server-key");
        const labKey = await call(server.url, "GET", "/api/lab/server-key");
        const key = await call(server.url, "GET", "/api/server-key");
        assert.equal(evidence.key, lensKey.body.key);
        assert.notEqual(evidence.key, labKey.body.key);
        assert.notEqual(evidence.key, key.body.key);
        assert.equal(checkForkEvidence(evidence).ok, true);
        assert.match(await card.locator(".fork-alert").innerText(), /lab lens's key/);
      });

      await t.step("the practice ledger is unchanged, the election untouched", async () => {
        assert.deepEqual(await ledger(server.url), before);
        assert.deepEqual(await election(server.url), electionBefore);
      });

      await t.step("the election's board has no lab row; the practice board has them", async () => {
        const board = await context.newPage();
        assert.deepEqual(await boardRows(board, `${server.url}board`), ["Yes"]);
        const practice = await boardRows(board, `${server.url}board?ledger=lab`);
        assert.deepEqual(practice.sort(), ["Lab: honest vote", "Lab: second honest vote"]);
        assert.equal(
          await board.locator("h1").innerText(),
          "Practice ledger of the attack lab",
        );
        await board.close();
      });

      await t.step("the auditor passes the election's record", async () => {
        const audit = await new Deno.Command(Deno.execPath(), {
          args: ["run", "--allow-net", "audit.ts", server.url],
          cwd: ROOT.pathname,
          stdout: "piped",
          stderr: "piped",
        }).output();
        const out = new TextDecoder().decode(audit.stdout);
        assert.equal(audit.code, 0, out);
        assert.match(out, /VERDICT: the record is consistent/);
      });

      await t.step("a full practice ledger is started afresh from the page", async () => {
        const other = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        const page = await other.newPage();
        await page.goto(`${server.url}lab`);
        const full = page.locator(".lab-full");
        await full.waitFor({ timeout: 60_000 });
        assert.match(await full.innerText(), /practice ledger is full: it holds at most 6 keys/);
        await full.getByRole("button", { name: "Start a fresh practice ledger" }).click();
        await page.locator('.lab[data-ready="true"]').waitFor({ timeout: 60_000 });
        // The two honest votes are sealed in one block or two, as the timer falls.
        const { height } = (await call(server.url, "GET", "/api/lab/block/status")).body;
        assert.ok(height === 1 || height === 2, `height ${height}`);
        assert.equal((await call(server.url, "GET", "/api/lab/tally")).body.total, 2);
        assert.deepEqual(await election(server.url), electionBefore);
        await other.close();
      });

      await t.step("no policy violation, and screenshots saved", async () => {
        assert.deepEqual(violations, []);
        await Deno.mkdir(ARTIFACTS, { recursive: true });
        await page.evaluate(() => scrollTo(0, 0));
        await page.screenshot({ path: new URL("lab-1280x800.png", ARTIFACTS).pathname });
        await page.locator('[data-card="torsion-tag"]').scrollIntoViewIfNeeded();
        await page.screenshot({ path: new URL("lab-attacks-1280x800.png", ARTIFACTS).pathname });
        await page.setViewportSize({ width: 1920, height: 1080 });
        await page.evaluate(() => scrollTo(0, 0));
        await page.screenshot({ path: new URL("lab-1920x1080.png", ARTIFACTS).pathname });
        await page.locator('[data-card="fork-chain"]').scrollIntoViewIfNeeded();
        await page.screenshot({ path: new URL("lab-lies-1920x1080.png", ARTIFACTS).pathname });
        await page.locator('[data-card="split-view"]').screenshot({
          path: new URL("lab-split-view-1920x1080.png", ARTIFACTS).pathname,
        });
        await page.screenshot({
          path: new URL("lab-full-1920.png", ARTIFACTS).pathname,
          fullPage: true,
        });
      });
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
