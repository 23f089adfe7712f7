// The board's audit of a carded round whose server lied (protocol §2.11, §4.6), in real Chromium:
// a key slipped into the directory without a card, and one whose card key is not in the set, are
// each shown as a failure of their own kind, in the red of every other failure, and the full report
// carries the cards line.
import assert from "node:assert/strict";
import { findingText } from "../../lib/client/audit/report_text.ts";
import { build } from "../../scripts/build.ts";
import { fullApp, PRESENTER_TOKEN } from "../helpers/app_fixture.ts";
import { call } from "../helpers/ledger_fixtures.ts";
import { cardBody, makeCards, setOf, voterKey } from "../helpers/cards.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

Deno.test({
  name: "the board shows a carded round's card findings in red",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await build({ ifNeeded: true });
    using kv = await Deno.openKv(":memory:");
    const { app } = await fullApp(kv, { currentTtlMs: 0 });
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
    const url = `http://127.0.0.1:${server.addr.port}/`;
    const browser = await launchChromium();
    try {
      const presenter = (path: string, body: unknown) =>
        app.request(path, {
          method: "POST",
          headers: {
            authorization: `Bearer ${PRESENTER_TOKEN}`,
            "content-type": "application/json",
          },
          body: JSON.stringify(body),
        });
      const cards = makeCards(12);
      const set = setOf(cards);
      await presenter("/api/cards", { keys: cards.map((c) => c.key) });
      await presenter("/api/rounds", {
        question: "Members?",
        choices: ["Yes", "No"],
        cards: set.set,
      });
      for (const card of cards.slice(0, 8)) {
        const res = await call(
          app,
          "POST",
          "/api/rounds/2/pki/key",
          cardBody(card, set.sha256, 2, voterKey()),
        );
        assert.equal(res.status, 201);
      }
      // The server writes two keys of its own, past its checks.
      const bare = voterKey();
      const minted = voterKey();
      const mintedCard = cardBody(makeCards(1, 66)[0], set.sha256, 2, minted).card;
      await kv.atomic()
        .set(["round", 2, "key", 9], { key: bare })
        .set(["round", 2, "keyid", bare], { id: 9 })
        .set(["round", 2, "key", 10], { key: minted, card: mintedCard })
        .set(["round", 2, "keyid", minted], { id: 10 })
        .set(["round", 2, "cfg", "keys"], { total: 10 })
        .commit();

      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${url}board?round=2`);
      await page.locator('.bulletin[data-ready="true"]').waitFor({ timeout: 60_000 });
      await page.locator('[data-action="audit"]').click();
      const verdict = page.locator("[data-audit-verdict]");
      await verdict.waitFor({ timeout: 120_000 });
      assert.equal(await verdict.getAttribute("data-audit-verdict"), "fail");
      const problems = page.locator("[data-audit-problem]");
      const kinds = await problems.evaluateAll((els) =>
        els.map((el) => el.getAttribute("data-audit-problem"))
      );
      assert.deepEqual(kinds, ["card_missing", "card_not_in_set"]);
      assert.deepEqual(await problems.allTextContents(), [
        findingText({ kind: "card_missing", id: 9, key: bare }),
        findingText({ kind: "card_not_in_set", id: 10, key: minted, card: mintedCard.key }),
      ]);
      const colours = await problems.evaluateAll((els) =>
        els.map((el) => getComputedStyle(el).color)
      );
      const failColour = await page.locator(".audit-fail .audit-verdict").evaluate((el) =>
        getComputedStyle(el).color
      );
      for (const colour of colours) assert.equal(colour, failColour);
      const report = await page.locator("[data-audit-report]").textContent() ?? "";
      assert.match(report, /cards {13}10 keys from 8 distinct cards of 12/);
    } finally {
      await browser.close();
      await server.shutdown();
    }
  },
});
