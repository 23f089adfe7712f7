// axe-core in the browser tests: the violations on a page, and the check at a projector's and a
// phone's width that nothing is violated and nothing scrolls sideways on the phone.
import assert from "node:assert/strict";
import axe from "axe-core";
import type { Page } from "playwright-core";

/** axe-core's violations on `page`, one line per rule and element, with what to fix. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, so the page's policy (no inline script) stays on.
  await page.evaluate(axe.source);
  return await page.evaluate(async () => {
    type Result = { id: string; nodes: { target: string[]; failureSummary?: string }[] };
    const run = (globalThis as unknown as {
      axe: { run(context: Document): Promise<{ violations: Result[] }> };
    }).axe.run;
    const { violations } = await run(document);
    return violations.flatMap((v) =>
      v.nodes.map((n) => `${v.id} at ${n.target.join(" ")}: ${n.failureSummary ?? ""}`)
    );
  });
}

/**
 * Checks `page` at 1280 and 390 px wide (`height` tall): no axe violation, and at 390 px no
 * sideways scrolling; leaves the page at `restore` size.
 */
export async function checkAxeAtWidths(
  page: Page,
  { label, height = 900, restore }: {
    label: string;
    height?: number;
    restore: {
      width: number;
      height: number;
    };
  },
): Promise<void> {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height });
    assert.deepEqual(await axeViolations(page), [], `${label} at ${width} px`);
    if (width === 390) {
      const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(scrollWidth <= 390, `${label} scrolls sideways at 390 px: ${scrollWidth}`);
    }
  }
  await page.setViewportSize(restore);
}
