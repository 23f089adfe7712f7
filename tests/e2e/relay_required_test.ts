// No downgrade (protocol §7.4, page §14.6), in real Chromium against the real server started with
// OHTTP_RELAY: the presenter's relay field is filled with it, and a phone that opened the plain
// address, with no relay pinned, is asked to scan the presenter's code, while one that opened the
// code's address is not. Without OHTTP_RELAY, a round the presenter's page declares relayed (its
// relay named and read) asks the same of a page with none pinned, and that page sends no vote.
import assert from "node:assert/strict";
import { signIn, startRelayedRound } from "./relay_presenter.ts";
import { build } from "../../scripts/build.ts";
import { keyConfigHash } from "../../lib/client/relay/fragment.ts";
import { makeVoters } from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";
import { startRelay } from "../relay/relay_process.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

const TOKEN = "relay-required-presenter-0123456789";
const RELAY = "http://127.0.0.1:9/";

Deno.test({
  name: "where the server declares a relay, a page with none pinned asks to scan the code",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { ADMIN_TOKEN: TOKEN, OHTTP_RELAY: RELAY } });
    const browser = await launchChromium();
    try {
      const presenter = await browser.newPage();
      await presenter.goto(`${server.url}?admin=${TOKEN}`);
      await presenter.locator('[data-section="presenter"]').waitFor({ timeout: 20_000 });
      assert.equal(
        await presenter.locator("[data-relay-address]").inputValue(),
        RELAY.replace(/\/$/, ""),
        "OHTTP_RELAY fills the presenter's relay field",
      );

      const plain = await browser.newPage();
      await plain.goto(server.url);
      const asked = plain.locator('[data-relay-required="declared"]');
      await asked.waitFor({ timeout: 20_000 });
      assert.match((await asked.textContent())!, /scan the presenter's QR code/);

      const pinned = await (await browser.newContext()).newPage();
      const hash = keyConfigHash(new Uint8Array(8));
      await pinned.goto(`${server.url}#relay=${encodeURIComponent(RELAY)}&ohttp=${hash}`);
      await pinned.locator("[data-relay-notice]").waitFor({ timeout: 20_000 });
      assert.equal(await pinned.locator("[data-relay-required]").count(), 0);
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});

Deno.test({
  name: "a round the presenter declares relayed asks a page with no relay to scan the code",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { ADMIN_TOKEN: TOKEN } });
    const relay = await startRelay(server.url);
    const browser = await launchChromium();
    try {
      const presenter = await (await browser.newContext()).newPage();
      await signIn(presenter, server.url, TOKEN);
      await startRelayedRound(presenter, {
        relay: relay.url,
        question: "Relayed?",
        choices: ["Yes", "No"],
        round: 2,
      });
      const listed = async () =>
        (await (await fetch(`${server.url}api/rounds`)).json()).rounds.map((
          r: { relayed: boolean },
        ) => r.relayed);
      for (let i = 0; i < 40 && (await listed())[1] !== true; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      assert.deepEqual(await listed(), [false, true], "the round is declared relayed");

      const plain = await (await browser.newContext()).newPage();
      const votes: string[] = [];
      plain.on("request", (r) => {
        if (r.method() === "POST" && r.url().endsWith("/vote")) votes.push(r.url());
      });
      await plain.goto(server.url);
      await plain.locator('.voting-page[data-ready="true"][data-round="2"]').waitFor({
        timeout: 30_000,
      });
      const asked = plain.locator("[data-relay-required]");
      await asked.waitFor({ timeout: 20_000 });
      assert.match((await asked.textContent())!, /scan the presenter's QR code/);
      await plain.locator('[data-action="join"]').click();
      await plain.locator('[data-join-status="joined"]').waitFor({ timeout: 60_000 });
      await plain.locator('[data-choice="Yes"]').click();
      // Seven more keys join and voting opens: the page has a group to sign over, and still sends
      // nothing without a relay pinned.
      for (const voter of makeVoters(7)) {
        const joined = await fetch(`${server.url}api/rounds/2/pki/key`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ key: voter.key }),
        });
        assert.equal(joined.status, 201, await joined.text());
      }
      const opened = await fetch(`${server.url}api/rounds/2/voting`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(opened.status, 200, await opened.text());
      await plain.locator("[data-group-fingerprint]").waitFor({ timeout: 60_000 });
      // Whatever the page would send once it has its group, it sends at once: a few polls later
      // there is still no vote, and the page still asks for the code.
      await plain.waitForTimeout(5_000);
      assert.deepEqual(votes, [], "no vote sent");
      assert.equal(await plain.locator("[data-relay-required]").count(), 1);
      assert.equal((await (await fetch(`${server.url}api/rounds/2/tally`)).json()).total, 0);
    } finally {
      await browser.close();
      await relay.stop();
      await server.stop();
    }
  },
});
