/**
 * A hall's send window, vote retries and poll schedule (lib/client/relay/send_window.ts,
 * vote_retry.ts, poll_schedule.ts): W from the values fixed at the opening, a late phone's draw
 * over what is left of the window, never at once; busy and lost votes sent again with the same
 * bytes within a cap; polls jittered, fewer once proven, and never more than 20 in any 60 s.
 * @module
 */
import assert from "node:assert/strict";
import {
  checkWindow,
  planHallSend,
  REDRAW_LEAST,
  SEND_DELAY_MS,
  sendWindowMs,
} from "../../../lib/client/relay/send_window.ts";
import {
  classifyVoteAnswer,
  MAX_VOTE_SENDS,
  nextVoteStep,
  tagCheckStep,
} from "../../../lib/client/relay/vote_retry.ts";
import {
  checkpointDue,
  nextPollDelay,
  type PollStage,
  RequestBudget,
} from "../../../lib/client/relay/poll_schedule.ts";

/** A seeded source in [0, 1). */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

Deno.test("W: two sealing intervals, or the verifier's time for the opening's keys, 30–120 s", () => {
  assert.equal(sendWindowMs({ keysAtOpen: 24, intervalMs: 15_000, verifyRate: 25 }), 30_000);
  assert.equal(sendWindowMs({ keysAtOpen: 1000, intervalMs: 15_000, verifyRate: 25 }), 40_000);
  assert.equal(sendWindowMs({ keysAtOpen: 1000, intervalMs: 15_000, verifyRate: 5 }), 120_000);
  assert.equal(sendWindowMs({ keysAtOpen: 8, intervalMs: 1_000, verifyRate: 25 }), 30_000);
  assert.equal(sendWindowMs({ keysAtOpen: 8, intervalMs: 40_000, verifyRate: 25 }), 80_000);
  assert.throws(() => sendWindowMs({ keysAtOpen: 8, intervalMs: 15_000, verifyRate: 0 }));
  assert.deepEqual(checkWindow(40_000, 40_000), { windowMs: 40_000, differs: false });
  assert.deepEqual(checkWindow(40_000, 90_000), { windowMs: 40_000, differs: true });
  assert.deepEqual(checkWindow(40_000, null), { windowMs: 40_000, differs: false });
});

Deno.test("a send time is in the window, and after the phone was ready: never at once", () => {
  const random = seeded(7);
  const openedAt = 1_000_000;
  const windowMs = 40_000;
  const end = openedAt + SEND_DELAY_MS + windowMs;
  for (let i = 0; i < 2000; i++) {
    const readyAt = openedAt + random() * 60_000;
    const plan = planHallSend({ openedAt, readyAt, windowMs }, random);
    assert.ok(plan.at > readyAt, `sent at ${plan.at}, ready at ${readyAt}`);
    if (end - readyAt >= windowMs / REDRAW_LEAST) {
      assert.ok(plan.at >= openedAt + SEND_DELAY_MS && plan.at <= end, plan.reason);
    } else if (plan.reason !== "window") {
      assert.equal(plan.reason, "after-window");
      assert.ok(plan.at <= readyAt + windowMs);
    }
  }
  // Ready after a draw that fell early: drawn again over what is left, not sent at once.
  const late = planHallSend({ openedAt, readyAt: end - 10_000, windowMs }, () => 0);
  assert.equal(late.reason, "redrawn");
  assert.ok(late.at > end - 10_000 && late.at <= end);
  // Ready in the window's last sliver: drawn as after the window, not a few ms from now.
  const sliver = planHallSend({ openedAt, readyAt: end - 1, windowMs }, () => 0.5);
  assert.equal(sliver.reason, "after-window");
  assert.equal(sliver.at, end - 1 + 0.5 * windowMs);
  // An opening said to come later than the phone was ready holds nothing back past one window.
  const ready = openedAt + 1_000;
  const future = planHallSend(
    { openedAt: openedAt + 3_600_000, readyAt: ready, windowMs },
    () => 0.999,
  );
  assert.ok(future.at <= ready + SEND_DELAY_MS + windowMs, `${future.at - ready} ms`);
});

Deno.test("busy waits Retry-After and up to an interval; a lost vote checks its tag first", () => {
  const now = 2_000_000;
  const base = { now, nextSealAt: now + 7_000, intervalMs: 15_000 };
  const busy = classifyVoteAnswer({ status: 503, code: "busy", retryAfter: "1" });
  assert.deepEqual(busy, { kind: "busy", retryAfterS: 1 });
  const step = nextVoteStep({ ...base, outcome: busy, sends: 1 }, () => 0.5);
  assert.deepEqual(step, { kind: "resend", at: now + 1_000 + 7_500 });
  const lost = classifyVoteAnswer({ status: null });
  assert.equal(lost.kind, "relay-timeout");
  // A vote that may be stored is never called refused: its tag is looked up first.
  for (const status of [504, 502, 500, 408, 429]) {
    assert.equal(classifyVoteAnswer({ status }).kind, "relay-timeout", `status ${status}`);
  }
  for (const status of [400, 403, 404, 413]) {
    assert.equal(classifyVoteAnswer({ status }).kind, "refused", `status ${status}`);
  }
  const check = nextVoteStep({ ...base, outcome: lost, sends: 1 }, () => 0);
  assert.deepEqual(check, { kind: "check-tag", at: now + 7_000 + 1_000 });
  assert.deepEqual(tagCheckStep({ found: true, sends: 1, now, intervalMs: 15_000 }, () => 0), {
    kind: "done",
  });
  const again = tagCheckStep({ found: false, sends: 1, now, intervalMs: 15_000 }, () => 0.2);
  assert.equal(again.kind, "resend");
  const dup = classifyVoteAnswer({ status: 409, code: "duplicate_tag" });
  assert.equal(nextVoteStep({ ...base, outcome: dup, sends: 2 }, () => 0).kind, "check-tag");
  assert.equal(
    nextVoteStep({ ...base, outcome: classifyVoteAnswer({ status: 202 }), sends: 1 }, () => 0).kind,
    "done",
  );
  const refused = classifyVoteAnswer({ status: 400, code: "not_a_group" });
  assert.equal(nextVoteStep({ ...base, outcome: refused, sends: 1 }, () => 0).kind, "failed");
  // Capped: shown as waiting, never sent again.
  assert.equal(
    nextVoteStep({ ...base, outcome: busy, sends: MAX_VOTE_SENDS }, () => 0).kind,
    "waiting",
  );
  assert.equal(
    tagCheckStep({ found: false, sends: MAX_VOTE_SENDS, now, intervalMs: 15_000 }, () => 0).kind,
    "waiting",
  );
  // No Retry-After: 5 s.
  assert.deepEqual(classifyVoteAnswer({ status: 503, retryAfter: null }), {
    kind: "busy",
    retryAfterS: 5,
  });
});

Deno.test("polls are jittered, sparse once proven, none after the close; 20 in any 60 s at most", () => {
  const random = seeded(3);
  const delays = (stage: PollStage) =>
    Array.from({ length: 200 }, () => nextPollDelay(stage, random)!);
  const voting = delays("voting");
  assert.ok(Math.min(...voting) >= 8_000 && Math.max(...voting) <= 12_000);
  assert.ok(new Set(voting).size > 100, "jittered");
  assert.ok(Math.min(...delays("proven")) >= 25_000);
  assert.equal(nextPollDelay("closed", random), null);
  // A phone in its busiest stage, at one poll every 8 s at least, stays under 12 a minute.
  assert.ok(60_000 / 8_000 < 12);
  const budget = new RequestBudget();
  let now = 0;
  let sent = 0;
  while (now < 120_000) {
    const wait = budget.delayFor(now);
    if (wait === 0) {
      budget.record(now);
      sent++;
    }
    now += wait === 0 ? 100 : wait;
    assert.ok(budget.inLastMinute(now) <= 20);
  }
  assert.equal(sent, 40);
  assert.equal(checkpointDue({ size: 5, checkedSize: 5, checkedAt: 0, now: 1e9 }), false);
  assert.equal(checkpointDue({ size: 6, checkedSize: 5, checkedAt: 0, now: 30_000 }), false);
  assert.equal(checkpointDue({ size: 6, checkedSize: 5, checkedAt: 0, now: 60_000 }), true);
  assert.equal(
    checkpointDue({ size: 6, checkedSize: 5, checkedAt: 0, now: 1, final: true }),
    true,
  );
});
