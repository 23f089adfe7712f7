// When a phone sends its vote through the relay (protocol §7): at openedAt + 5 s + U[0, W] with W
// two sealing intervals, whatever the press time; after the press when the draw fell before it or
// the press came after the window; and a fresh wait after a reload, never at once.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  planResume,
  planVoteSend,
  SEND_DELAY_MS,
  sendWindow,
  windowMs,
} from "../../../lib/client/relay/send_window.ts";

const OPENED = 1_800_000_000_000;
const INTERVAL = 15_000;
const W = 30_000;
const fixed = (...values: number[]) => () => {
  const next = values.shift();
  if (next === undefined) throw new Error("the plan drew more numbers than expected");
  return next;
};

Deno.test("the window is two sealing intervals, 5 s after voting opens", () => {
  assert.equal(windowMs(INTERVAL), W);
  assert.deepEqual(sendWindow(OPENED, INTERVAL), {
    start: OPENED + SEND_DELAY_MS,
    end: OPENED + SEND_DELAY_MS + W,
  });
  assert.throws(() => windowMs(0), RangeError);
  assert.throws(() => windowMs(Number.NaN), RangeError);
});

Deno.test("a vote pressed before voting opens goes at openedAt + 5 s + U·W", () => {
  for (const u of [0, 0.25, 0.999]) {
    assert.deepEqual(
      planVoteSend(
        { openedAt: OPENED, pressedAt: OPENED - 60_000, intervalMs: INTERVAL },
        fixed(u),
      ),
      { at: OPENED + 5_000 + u * W, reason: "window" },
    );
  }
});

Deno.test("a vote pressed in the window keeps a later draw, else waits U·W from its press", () => {
  const pressedAt = OPENED + 5_000 + W / 2;
  assert.deepEqual(
    planVoteSend({ openedAt: OPENED, pressedAt, intervalMs: INTERVAL }, fixed(0.75)),
    { at: OPENED + 5_000 + 0.75 * W, reason: "window" },
  );
  assert.deepEqual(
    planVoteSend({ openedAt: OPENED, pressedAt, intervalMs: INTERVAL }, fixed(0.25, 0.5)),
    { at: pressedAt + 0.5 * W, reason: "after-press" },
  );
});

Deno.test("a vote pressed after the window waits U·W from the press, one draw", () => {
  const pressedAt = OPENED + 5_000 + W + 1;
  assert.deepEqual(
    planVoteSend({ openedAt: OPENED, pressedAt, intervalMs: INTERVAL }, fixed(0.1)),
    { at: pressedAt + 0.1 * W, reason: "after-press" },
  );
});

Deno.test("a late group's window starts at its forming time", () => {
  const formedAt = OPENED + 120_000;
  assert.deepEqual(
    planVoteSend({ openedAt: formedAt, pressedAt: OPENED + 1_000, intervalMs: INTERVAL }, fixed(0)),
    { at: formedAt + 5_000, reason: "window" },
  );
});

Deno.test("a vote queued or in doubt at load waits a fresh draw, never sent at the load", () => {
  const after = OPENED + 10 * W;
  assert.deepEqual(
    planResume({ openedAt: OPENED, loadedAt: after, intervalMs: INTERVAL }, fixed(0.4)),
    { at: after + 0.4 * W, reason: "resume" },
  );
  // Reloaded before voting opened: the shared window, as if pressed at the load.
  assert.deepEqual(
    planResume({ openedAt: OPENED, loadedAt: OPENED - 1, intervalMs: INTERVAL }, fixed(0.2)),
    { at: OPENED + 5_000 + 0.2 * W, reason: "resume" },
  );
});

Deno.test("a random source outside [0, 1) is refused", () => {
  for (const bad of [1, -0.1, Number.NaN]) {
    assert.throws(
      () => planVoteSend({ openedAt: OPENED, pressedAt: OPENED, intervalMs: INTERVAL }, () => bad),
      RangeError,
    );
  }
});

Deno.test("property: a vote is sent after its press and never more than 5 s + 2W after it", () => {
  fc.assert(fc.property(
    fc.integer({ min: -120_000, max: 200_000 }),
    fc.integer({ min: 1_000, max: 60_000 }),
    fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
      minLength: 2,
      maxLength: 2,
    }),
    (offset, intervalMs, draws) => {
      const pressedAt = OPENED + offset;
      const { at, reason } = planVoteSend(
        { openedAt: OPENED, pressedAt, intervalMs },
        fixed(...draws),
      );
      const w = windowMs(intervalMs);
      const { start, end } = sendWindow(OPENED, intervalMs);
      assert.ok(at >= pressedAt);
      if (reason === "window") assert.ok(at > pressedAt && at >= start && at <= end);
      else assert.ok(at <= pressedAt + w);
      assert.ok(at <= Math.max(end, pressedAt + w));
    },
  ));
});

Deno.test("property: the send times of votes pressed before the window spread over all of it", () => {
  // Press times say nothing: with the same draws, any two presses before the window send alike.
  fc.assert(fc.property(
    fc.integer({ min: -600_000, max: 4_999 }),
    fc.integer({ min: -600_000, max: 4_999 }),
    fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
    (a, b, u) => {
      const plan = (p: number) =>
        planVoteSend({ openedAt: OPENED, pressedAt: OPENED + p, intervalMs: INTERVAL }, fixed(u));
      assert.deepEqual(plan(a), plan(b));
    },
  ));
});
