// The work watch (protocol §5.3 "Work"): the stamp another process moved is seen at the next poll,
// not before WORK_POLL_MS unless the poll is forced (a seal tick a minute apart forces it, so a
// vote another process took before that tick is sealed on it).
import assert from "node:assert/strict";
import { ledgerKeys } from "../../server/store/layout.ts";
import { landed, setWork, WORK_STAMP_KEY } from "../../server/store/work.ts";
import { createWorkWatch } from "../../server/work_watch.ts";

Deno.test("a forced poll sees another process's vote at once; an unforced one waits its turn", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const watch = createWorkWatch(kv, { pollMs: 15_000 });
    await watch.poll(0);
    assert.equal(watch.take("election"), true, "a fresh process looks once");
    assert.equal(watch.take("election"), false, "then only when there is work");
    // Another process's vote moves the stamp.
    await kv.set(WORK_STAMP_KEY, { ledger: "election" });
    await watch.poll(1_000);
    assert.equal(watch.take("election"), false, "not read again within the poll interval");
    await watch.poll(1_000, true);
    assert.equal(watch.take("election"), true, "a forced poll reads it");
    assert.equal(watch.take("election"), false);
    await kv.set(WORK_STAMP_KEY, { ledger: "election" });
    await watch.poll(16_000);
    assert.equal(watch.take("election"), true, "and so does the next poll in turn");
  } finally {
    kv.close();
  }
});

Deno.test("votes of this process whose replies come back out of order never look like another process's", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const watch = createWorkWatch(kv, { pollMs: 0 });
    await watch.poll(0);
    assert.equal(watch.take("lab"), true, "a fresh process looks once");
    // Two vote commits of this process; the later one's reply is taken first.
    const ledger = { kv, keys: ledgerKeys([]) };
    const first = await setWork(kv.atomic(), ledger, 1).commit();
    const second = await setWork(kv.atomic(), ledger, 1).commit();
    assert.ok(first.ok && second.ok);
    landed(ledger, null, second.versionstamp);
    landed(ledger, null, first.versionstamp);
    await watch.poll(1);
    assert.equal(watch.take("lab"), false, "the stamp is this process's latest vote");
    // Another process's vote moves it.
    await kv.set(WORK_STAMP_KEY, { ledger: "election" });
    await watch.poll(2);
    assert.equal(watch.take("lab"), true);
  } finally {
    kv.close();
  }
});
