// The voting panel catches a lying server (page §5, protocol §3): Chromium talks to the real
// server through a proxy that rewrites, one at a time, the stored payload, the signature, the
// ring's order, one path element, the block hash, the previous block's hash and the reported
// height. The vote line turns red (invalid) — or stays pending for a lowered height — and never
// shows green while the lie is told. The page runs under the server's Content-Security-Policy throughout,
// and no policy violation is reported.
import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import { build } from "../../scripts/build.ts";
import { call, makeVoters, signedVote } from "../helpers/ledger_fixtures.ts";
import { startServer } from "../helpers/server_process.ts";
import { type Rewrite, startTamperingProxy } from "../helpers/tampering_proxy.ts";
import { COLOURS, launchChromium, skipWithoutChromium } from "./browser.ts";

/** The hex string with its last digit changed. */
function flip(hex: string): string {
  return hex.slice(0, -1) + (hex.endsWith("0") ? "1" : "0");
}

function voteLine(page: Page): Locator {
  return page.locator("section.voter").first().locator('[data-kind="vote"]');
}

/** Reloads the page and waits for the vote line to reach `status`; answers every status seen. */
async function reloadUntil(page: Page, status: string): Promise<string[]> {
  await page.reload();
  await page.locator('.voting-page[data-ready="true"]').waitFor();
  const line = voteLine(page);
  await line.and(page.locator(`[data-status="${status}"]`)).waitFor({ timeout: 30_000 });
  return await page.evaluate(() => (globalThis as unknown as { seen: string[] }).seen);
}

Deno.test({
  name: "the voting panel turns red for every lie of a tampering server, never green",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const server = await startServer({ env: { BLOCK_INTERVAL_MS: "2500", RING_SIZE: "2" } });
    const proxy = startTamperingProxy(server.url);
    const browser = await launchChromium();
    try {
      const others = makeVoters(3);
      for (const v of others) {
        assert.equal((await call(server.url, "POST", "/api/pki/key", { key: v.key })).status, 201);
      }
      const page = await (await browser.newContext()).newPage();
      const violations: string[] = [];
      const logged: string[] = [];
      page.on("console", (m) => {
        logged.push(m.text());
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.context().addInitScript(() => {
        const seen: string[] = [];
        (globalThis as unknown as { seen: string[] }).seen = seen;
        new MutationObserver(() => {
          const status = document.querySelector('[data-kind="vote"]')?.getAttribute("data-status");
          if (status && seen.at(-1) !== status) seen.push(status);
        }).observe(document, { subtree: true, childList: true, attributes: true });
      });
      await page.goto(proxy.url);
      await page.locator('.voting-page[data-ready="true"]').waitFor();

      let blockId = 0;
      await t.step("an honest server: the vote turns green", async () => {
        await page.getByRole("button", { name: "Generate A new Voter" }).click();
        const panel = page.locator("section.voter").first();
        await panel.getByRole("button", { name: "Generate new keys" }).click();
        await panel.getByRole("button", { name: "Register A Key" }).click();
        await panel.locator('[data-kind="key"][data-status="registered"]').waitFor();
        await panel.getByPlaceholder("Vote Content").fill("Choice A");
        // Another vote just before the panel's and one just after, so the panel's block holds at
        // least two votes and its proof has a path to tamper with, unless two seals fall between
        // them (the blocks are sealed 2.5 s apart).
        const otherVote = async (signer: number, payload: string) => {
          const answer = await call(
            server.url,
            "POST",
            "/api/vote",
            signedVote(others[signer], others, payload),
          );
          assert.equal(answer.status, 202);
          return answer.body.blockId as number;
        };
        const before = await otherVote(0, "Choice B");
        const answered = page.waitForResponse((r) => r.url().endsWith("/api/vote"));
        await panel.getByRole("button", { name: "Submit Vote" }).click();
        const own = await (await answered).json();
        blockId = own.blockId;
        const after = await otherVote(1, "Choice C");
        assert.ok(
          before === blockId || after === blockId,
          `the panel's block ${blockId} holds another vote (others in ${before} and ${after})`,
        );
        await voteLine(page).and(page.locator('[data-status="voted"]')).waitFor({
          timeout: 30_000,
        });
        assert.equal(
          await voteLine(page).evaluate((el) => getComputedStyle(el).color),
          COLOURS.green,
        );
      });

      const proofPath = () => new RegExp(`^/api/block/id/${blockId}/vote/`);
      const lies: { desc: string; lie: Rewrite; status: string; log?: string }[] = [
        {
          desc: "the stored payload",
          lie: (p, b) => proofPath().test(p) && (b.vote.payload = "Choice Z"),
          status: "invalid",
        },
        {
          desc: "the signature",
          lie: (p, b) => {
            if (!proofPath().test(p)) return;
            const sig = JSON.parse(b.vote.signature);
            sig.c0 = flip(sig.c0);
            b.vote.signature = JSON.stringify(sig);
          },
          status: "invalid",
        },
        {
          // The leaf hashes the ring sorted, so root and block hash still match: only the
          // comparison with the ring inside the stored signature catches it.
          desc: "the ring's order",
          lie: (p, b) => proofPath().test(p) && b.vote.publicKeys.reverse(),
          status: "invalid",
          log: "Vote ring mismatch",
        },
        {
          desc: "one path element",
          lie: (p, b) => {
            if (!proofPath().test(p)) return;
            assert.ok(b.path.length > 0, "the proof has a path");
            b.path[0] = flip(b.path[0]);
          },
          status: "invalid",
        },
        {
          desc: "the block hash",
          lie: (p, b) => proofPath().test(p) && (b.block.hash = flip(b.block.hash)),
          status: "invalid",
        },
        {
          desc: "the previous block's hash",
          lie: (p, b) => p === `/api/block/hash/id/${blockId - 1}` && (b.hash = flip(b.hash)),
          status: "invalid",
        },
        {
          desc: "a lowered height",
          lie: (p, b) => p === "/api/block/status" && (b.height = blockId - 1),
          status: "pending",
        },
      ];
      for (const { desc, lie, status, log } of lies) {
        await t.step(`${desc} rewritten: ${status}, never green`, async () => {
          proxy.tell(lie);
          logged.length = 0;
          const seen = await reloadUntil(page, status);
          if (log !== undefined) assert.ok(logged.includes(log), logged.join("\n"));
          assert.ok(!seen.includes("voted"), `statuses seen: ${seen.join(", ")}`);
          const colour = await voteLine(page).evaluate((el) => getComputedStyle(el).color);
          if (status === "invalid") assert.equal(colour, COLOURS.red);
          else assert.notEqual(colour, COLOURS.green);
          proxy.tell(null);
        });
      }

      await t.step("the truth again: green, and no policy violation all along", async () => {
        const seen = await reloadUntil(page, "voted");
        assert.ok(!seen.includes("invalid"), seen.join(", "));
        assert.deepEqual(violations, []);
      });
    } finally {
      await browser.close();
      await proxy.close();
      await server.stop();
    }
  },
});
