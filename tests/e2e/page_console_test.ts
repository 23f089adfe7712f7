// Both pages load in real Chromium without a single console error: no missing icon, no refused
// script or style, no failed read. The icon the page names is fetched and allowed by the
// Content-Security-Policy (img-src 'self').
import assert from "node:assert/strict";
import { build } from "../../scripts/build.ts";
import { startServer } from "../helpers/server_process.ts";
import { launchChromium, skipWithoutChromium } from "./browser.ts";

Deno.test({
  name: "loading / and /board logs no console error, the icon included",
  ignore: skipWithoutChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await build({ ifNeeded: true });
    const server = await startServer();
    const browser = await launchChromium();
    try {
      for (const [path, ready] of [["/", ".voting-page"], ["/board", ".bulletin"]]) {
        await t.step(`${path}: no console error, the icon answered`, async () => {
          const page = await (await browser.newContext()).newPage();
          const errors: string[] = [];
          page.on("console", (m) => {
            if (m.type() === "error") errors.push(`${m.text()} (${m.location().url})`);
          });
          page.on("pageerror", (error) => errors.push(String(error)));
          await page.goto(new URL(path, server.url).href);
          await page.locator(`${ready}[data-ready="true"]`).waitFor();
          // The icon request and console messages arrive asynchronously: let them land.
          await page.waitForTimeout(1000);
          assert.deepEqual(errors, []);
          const icon = await page.evaluate(async () => {
            const href = document.querySelector('link[rel="icon"]')?.getAttribute("href");
            if (!href) return null;
            const res = await fetch(href);
            return { href, status: res.status, type: res.headers.get("content-type") };
          });
          assert.deepEqual(icon, { href: "/favicon.svg", status: 200, type: "image/svg+xml" });
          await page.context().close();
        });
      }
    } finally {
      await browser.close();
      await server.stop();
    }
  },
});
