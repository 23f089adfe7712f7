// Another election's record on the board (page §10.8), in real Chromium against the real app: a
// record is audited under its own header key — another election's passes, with a line, which fails
// nothing, saying its key is not the one this browser remembers for this server; this server's
// own record says it is — and a hostile file of 20 MB of nested `[` fails at its first line,
// refused before it is parsed, the page answering throughout.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { Page } from "playwright-core";
import { createApiClient } from "../../lib/client/api_client.ts";
import { writeRecord } from "../../lib/client/audit/election_record.ts";
import { build } from "../../scripts/build.ts";
import { createApp } from "../../server/app.ts";
import { createStore } from "../../server/store/mod.ts";
import { buildLedger } from "../helpers/ledger_builder.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

/** A ledger of `votes` votes behind the real app over in-memory KV, and its record's text. */
async function election(votes: number) {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const app = createApp({ store });
  await buildLedger(store, { votes, perBlock: 4, ringSize: 3 });
  const parts: string[] = [];
  await writeRecord(createApiClient({ fetch: app.request }), {
    write: (text) => void parts.push(text),
    restart: () => void (parts.length = 0),
  });
  const key = (await createApiClient({ fetch: app.request }).serverKey()).key;
  return { kv, app, key, record: parts.join("") };
}

/**
 * Chooses a file named `name` on the board, holding `bytes` (or the file at `path`, for one too
 * large to hand over otherwise); answers the record audit's result.
 */
async function auditFile(page: Page, name: string, file: { bytes: Uint8Array } | { path: string }) {
  await page.locator('input[type="file"][data-action="audit-file"]').setInputFiles(
    "path" in file
      ? file.path
      : { name, mimeType: "application/x-ndjson", buffer: Buffer.from(file.bytes) },
  );
  const result = page.locator(
    `[data-audit-source="record"]:has(.audit-summary:has-text("of the election record ${name}"))`,
  );
  await result.waitFor({ timeout: 120_000 });
  const keyLine = result.locator("[data-record-key]");
  return {
    verdict: await result.getAttribute("data-audit-verdict"),
    checked: Number(await result.getAttribute("data-votes-checked")),
    recordKey: await keyLine.count() === 0 ? null : await keyLine.getAttribute("data-record-key"),
    keyText: await keyLine.count() === 0 ? "" : await keyLine.textContent() ?? "",
    problems: await result.locator("[data-audit-problem]").allTextContents(),
    report: await result.locator("[data-audit-report]").textContent() ?? "",
  };
}

Deno.test({
  name: "another election's record audits on the board under its own key; a hostile file fails",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const here = await election(6);
    const other = await election(5);
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, here.app.fetch);
    const url = `http://127.0.0.1:${server.addr.port}/`;
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(new URL("board", url).href);
      await page.locator('.bulletin[data-ready="true"]').waitFor();
      // The board remembers this server's key once it has checked a head (page §12).
      await page.waitForFunction(
        (key) => Object.values(localStorage).some((v) => v.includes(key)),
        here.key,
      );
      const encode = (text: string) => ({ bytes: new TextEncoder().encode(text) });

      await t.step("another election's record passes under its own key, said apart", async () => {
        const audit = await auditFile(page, "other.ndjson", encode(other.record));
        assert.equal(audit.verdict, "pass", audit.report);
        assert.equal(audit.checked, 5);
        assert.match(audit.report, new RegExp(`server key {8}${other.key} \\(not pinned`));
        assert.equal(audit.recordKey, "other");
        assert.ok(audit.keyText.includes(other.key) && audit.keyText.includes(here.key));
      });
      await t.step("this server's own record says its key is the remembered one", async () => {
        const audit = await auditFile(page, "here.ndjson", encode(here.record));
        assert.equal(audit.verdict, "pass", audit.report);
        assert.equal(audit.recordKey, "same");
      });
      await t.step("20 MB of nested [ fail at line 1, refused before parsing", async () => {
        const hostile = new Uint8Array(20_000_001).fill(0x5b);
        hostile[hostile.length - 1] = 0x0a;
        const dir = await Deno.makeTempDir({ prefix: "ringvote-hostile-" });
        const path = `${dir}/hostile.ndjson`;
        await Deno.writeFile(path, hostile);
        const chosen = performance.now();
        const audit = await auditFile(page, "hostile.ndjson", { path });
        await Deno.remove(dir, { recursive: true });
        const took = performance.now() - chosen;
        assert.equal(audit.verdict, "fail");
        assert.deepEqual(audit.problems.length, 1);
        assert.match(
          audit.problems[0],
          /record line 1: nested deeper than 3 levels of arrays and objects \(at character 4\)/,
        );
        // The page answers: a round trip to its main thread (reported, not judged).
        const asked = performance.now();
        assert.equal(await page.evaluate(() => 1 + 1), 2);
        console.log(
          `hostile file: verdict ${took.toFixed(0)} ms after choosing it (upload included), ` +
            `then a page round trip in ${(performance.now() - asked).toFixed(0)} ms`,
        );
      });
      assert.deepEqual(errors, []);
      await context.close();
    } finally {
      await browser.close();
      await server.shutdown();
      here.kv.close();
      other.kv.close();
    }
  },
});
