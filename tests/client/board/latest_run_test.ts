/**
 * One run at a time for the latest value (lib/client/board/latest_run.ts): asks during a run are
 * folded into one more run for the latest of them, and a failing run does not stop the next.
 * @module
 */
import assert from "node:assert/strict";
import { latestRunner } from "../../../lib/client/board/latest_run.ts";

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

Deno.test("asks during a run become one more run, for the latest value", async () => {
  const started: number[] = [];
  let inFlight = 0;
  let most = 0;
  const gates = new Map<number, ReturnType<typeof gate>>();
  const runner = latestRunner<number>(async (value) => {
    started.push(value);
    inFlight++;
    most = Math.max(most, inFlight);
    const g = gate();
    gates.set(value, g);
    await g.opened;
    inFlight--;
  });
  runner.ask(1);
  runner.ask(2);
  runner.ask(3);
  assert.deepEqual(started, [1]);
  gates.get(1)!.open();
  while (!gates.has(3)) await Promise.resolve();
  assert.deepEqual(started, [1, 3]);
  runner.ask(4);
  gates.get(3)!.open();
  while (!gates.has(4)) await Promise.resolve();
  gates.get(4)!.open();
  await runner.idle();
  assert.deepEqual(started, [1, 3, 4]);
  assert.equal(most, 1);
});

Deno.test("an ask after a run ended starts a new run at once", async () => {
  const started: string[] = [];
  const runner = latestRunner<string>(async (value) => {
    started.push(value);
    await Promise.resolve();
  });
  runner.ask("a");
  await runner.idle();
  runner.ask("b");
  await runner.idle();
  assert.deepEqual(started, ["a", "b"]);
});

Deno.test("a run that throws is reported, and the next ask still runs", async () => {
  const errors: unknown[] = [];
  const started: number[] = [];
  const runner = latestRunner<number>(async (value) => {
    started.push(value);
    await Promise.resolve();
    if (value === 1) throw new Error("boom");
  }, { onError: (error) => errors.push(error) });
  runner.ask(1);
  runner.ask(2);
  await runner.idle();
  assert.deepEqual(started, [1, 2]);
  assert.deepEqual(errors.map((e) => (e as Error).message), ["boom"]);
});
