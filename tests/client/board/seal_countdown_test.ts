/**
 * The open block in words (lib/client/board/seal_countdown.ts): seconds rounded up and kept within
 * one interval, the waiting votes counted as served, and a wait named a seal, not a block, when
 * nothing waits.
 * @module
 */
import assert from "node:assert/strict";
import {
  formatWait,
  sealCountdown,
  sealCountdownText,
} from "../../../lib/client/board/seal_countdown.ts";

const open = (votes: number, nextSealAt: number, intervalMs = 5000) => ({
  height: 3,
  votes,
  intervalMs,
  nextSealAt,
});

Deno.test("sealCountdown rounds the time left up to whole seconds", () => {
  assert.deepEqual(sealCountdown(open(3, 10_000), 6_001), {
    seconds: 4,
    waiting: 3,
    atLeast: false,
  });
  assert.equal(sealCountdown(open(3, 10_000), 6_000).seconds, 4);
  assert.equal(sealCountdown(open(3, 10_000), 9_999).seconds, 1);
});

Deno.test("sealCountdown is 0 once the tick is due, and never more than one interval", () => {
  assert.equal(sealCountdown(open(1, 10_000), 10_000).seconds, 0);
  assert.equal(sealCountdown(open(1, 10_000), 12_500).seconds, 0);
  assert.equal(sealCountdown(open(1000, 10_000), 12_500).seconds, 0);
  // A browser clock 20 s behind the server's.
  assert.equal(sealCountdown(open(1, 30_000, 5000), 10_000).seconds, 5);
});

Deno.test("with no vote waiting, a passed tick is followed by the next one", () => {
  // Ticks every 5 s at 10 s, 15 s, 20 s…
  assert.equal(sealCountdown(open(0, 10_000), 10_000).seconds, 5);
  assert.equal(sealCountdown(open(0, 10_000), 12_500).seconds, 3);
  assert.equal(sealCountdown(open(0, 10_000), 16_001).seconds, 4);
});

Deno.test("sealCountdown marks a count the server stopped at", () => {
  assert.equal(sealCountdown(open(999, 1), 0).atLeast, false);
  assert.equal(sealCountdown(open(1000, 1), 0).atLeast, true);
});

Deno.test("the countdown's words", async (t) => {
  const text = (votes: number, left: number, intervalMs = 5000) =>
    sealCountdownText(sealCountdown(open(votes, 100_000 + left, intervalMs), 100_000));
  await t.step("votes waiting: a block is sealed", () => {
    assert.equal(text(3, 4000), "Next block sealed in 4 s · 3 votes waiting");
    assert.equal(text(1, 400), "Next block sealed in 1 s · 1 vote waiting");
    assert.equal(text(2, 0), "Sealing the next block now · 2 votes waiting");
    assert.equal(text(1000, 3000), "Next block sealed in 3 s · 1000 or more votes waiting");
  });
  await t.step("nothing waiting: only a seal tick", () => {
    assert.equal(text(0, 4000), "Next seal in 4 s · no votes waiting");
    assert.equal(text(0, -1000), "Next seal in 4 s · no votes waiting");
  });
  await t.step("long intervals in minutes", () => {
    assert.equal(text(2, 65_000, 60_000), "Next block sealed in 1 min · 2 votes waiting");
    assert.equal(text(2, 59_500, 60_000), "Next block sealed in 1 min · 2 votes waiting");
    assert.equal(text(2, 61_000, 120_000), "Next block sealed in 1 min 1 s · 2 votes waiting");
  });
});

Deno.test("formatWait writes seconds, then minutes and seconds", () => {
  assert.equal(formatWait(0), "0 s");
  assert.equal(formatWait(59), "59 s");
  assert.equal(formatWait(60), "1 min");
  assert.equal(formatWait(125), "2 min 5 s");
  assert.equal(formatWait(3600), "60 min");
});
