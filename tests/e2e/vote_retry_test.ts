// A phone's kept choice that the server refuses "voting not open" once the phone has its group
// (page §14.2): in real Chromium at 390×844, against the real server behind a proxy that answers
// the first vote 409 `voting_not_open`, the phone tries again by itself and turns green, with no
// reload and no second press.
import assert from "node:assert/strict";
import { build } from "../../scripts/build.ts";
import { makeVoters } from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";
import { startTamperingProxy } from "../helpers/tampering_proxy.ts";
import { COLOURS, launchChromium, openPhone, skipWithoutChromium } from "./browser.ts";

const TOKEN = "vote-retry-presenter-0123456789";

/** A presenter's call to the server. */
async function presenterPost(url: string, path: string, body: unknown) {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.ok(res.ok, `${path}: ${res.status} ${await res.text()}`);
}

Deno.test({
  name: "a kept choice refused 'voting not open' after the opening is sent again by itself",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { ADMIN_TOKEN: TOKEN, BLOCK_INTERVAL_MS: "1000" } });
    const votes: number[] = [];
    const proxy = startTamperingProxy(server.url, {
      answer({ path, method }) {
        if (method !== "POST" || path !== "/api/rounds/2/vote") return null;
        votes.push(votes.length);
        if (votes.length > 1) return null;
        return Response.json(
          { error: { code: "voting_not_open", message: "Voting is not open in round 2 yet" } },
          { status: 409 },
        );
      },
    });
    const browser = await launchChromium();
    const pageErrors: string[] = [];
    try {
      await presenterPost(server.url, "api/rounds", { question: "Again?", choices: ["Yes", "No"] });
      for (const { key } of makeVoters(7)) {
        const res = await fetch(`${server.url}api/rounds/2/pki/key`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ key }),
        });
        assert.equal(res.status, 201, await res.text());
      }
      const { page } = await openPhone(browser);
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      await page.goto(proxy.url);
      await page.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor();
      await page.locator('[data-action="join"]').click();
      await page.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
      await page.locator('[data-choice="Yes"]').click();

      await presenterPost(server.url, "api/rounds/2/voting", {});
      const voted = page.locator('[data-kind="vote"][data-status="voted"]');
      await voted.waitFor({ timeout: 60_000 });
      assert.equal(await voted.evaluate((el) => getComputedStyle(el).color), COLOURS.green);
      assert.equal(votes.length, 2, "refused once, then sent again and taken");
      const tally = await (await fetch(`${server.url}api/rounds/2/tally`)).json();
      assert.deepEqual(tally.results, [{ payload: "Yes", count: 1 }]);
      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
      await proxy.close();
      await server.stop();
    }
  },
});
