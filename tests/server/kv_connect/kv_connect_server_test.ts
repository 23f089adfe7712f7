// The KV Connect server the KV Connect suites run on (tests/helpers/kv_connect_server.ts), checked
// through the real Deno client: `Deno.openKv` over h2c, denokv's limits, one round trip counted
// per data-path request, a lost reply after a landed write, and a server that goes down and comes
// back on the same port with the same data.
import assert from "node:assert/strict";
import { startKvConnectServer } from "../../helpers/kv_connect_server.ts";

Deno.test("Deno.openKv works end to end: reads, lists, checked atomics", async () => {
  const server = await startKvConnectServer();
  const kv = await server.openKv();
  try {
    await kv.set(["a"], { n: 1 });
    assert.deepEqual((await kv.get(["a"])).value, { n: 1 });
    const first = await kv.atomic().check({ key: ["b"], versionstamp: null }).set(["b"], 2)
      .commit();
    assert.equal(first.ok, true);
    const again = await kv.atomic().check({ key: ["b"], versionstamp: null }).set(["b"], 3)
      .commit();
    assert.equal(again.ok, false, "a failed check is ok:false, as on a local file");
    const op = kv.atomic();
    for (let i = 0; i < 250; i++) op.set(["l", i], i);
    assert.ok((await op.commit()).ok);
    const listed = await Array.fromAsync(kv.list<number>({ prefix: ["l"] }));
    assert.deepEqual(listed.map((e) => e.value), Array.from({ length: 250 }, (_, i) => i));
  } finally {
    kv.close();
    await server.close();
  }
});

Deno.test("databases of one server are apart, and a second server is another database", async () => {
  const server = await startKvConnectServer();
  const other = await startKvConnectServer();
  const [a, b, c] = [await server.openKv(), await server.openKv("b"), await other.openKv()];
  try {
    await a.set(["x"], "a");
    await b.set(["x"], "b");
    assert.equal((await a.get(["x"])).value, "a");
    assert.equal((await b.get(["x"])).value, "b");
    assert.equal((await c.get(["x"])).value, null);
  } finally {
    for (const kv of [a, b, c]) kv.close();
    await Promise.all([server.close(), other.close()]);
  }
});

Deno.test("denokv's limits hold: 10 checks pass, 11 are refused; 1,000 mutations pass", async () => {
  const server = await startKvConnectServer();
  const kv = await server.openKv();
  try {
    const checks = (n: number) => {
      const op = kv.atomic();
      for (let i = 0; i < n; i++) op.check({ key: ["c", i], versionstamp: null });
      return op.set(["c", "done", n], true).commit();
    };
    assert.equal((await checks(10)).ok, true);
    await assert.rejects(checks(11), /TooManyChecks/);
    const op = kv.atomic();
    for (let i = 0; i < 1000; i++) op.set(["m", i], i);
    assert.equal((await op.commit()).ok, true);
  } finally {
    kv.close();
    await server.close();
  }
});

Deno.test("each data-path request is one round trip; a list fetches as many as its batch", async () => {
  const server = await startKvConnectServer();
  const kv = await server.openKv();
  const trips = async (work: () => Promise<unknown>) => {
    const before = server.counts();
    await work();
    const after = server.counts();
    return { reads: after.reads - before.reads, writes: after.writes - before.writes };
  };
  try {
    assert.deepEqual(await trips(() => kv.set(["k"], 1)), { reads: 0, writes: 1 });
    assert.deepEqual(await trips(() => kv.get(["k"])), { reads: 1, writes: 0 });
    assert.deepEqual(
      await trips(() => kv.getMany(Array.from({ length: 10 }, (_, i) => ["k", i]))),
      { reads: 1, writes: 0 },
    );
    const op = kv.atomic();
    for (let i = 0; i < 100; i++) op.set(["p", i], i);
    await op.commit();
    const list = (options?: Deno.KvListOptions) => () =>
      Array.fromAsync(kv.list({ prefix: ["p"] }, options));
    // Without a batch size the client asks for 100 and needs one more trip to see the end.
    assert.equal((await trips(list())).reads, 2);
    assert.equal((await trips(list({ limit: 100 }))).reads, 1);
    assert.equal((await trips(list({ batchSize: 101 }))).reads, 1);
  } finally {
    kv.close();
    await server.close();
  }
});

Deno.test("each round trip is held delayMs: sequential calls take their number of delays", async () => {
  const server = await startKvConnectServer();
  const kv = await server.openKv();
  try {
    const timed = async (calls: number) => {
      const started = performance.now();
      for (let i = 0; i < calls; i++) await kv.get(["d", i]);
      return performance.now() - started;
    };
    await timed(1);
    server.delayMs = 60;
    // The quickest of three, so that one pause of the machine does not count as a round trip.
    const one = Math.min(await timed(1), await timed(1), await timed(1));
    const four = await timed(4);
    assert.ok(four / one > 2.5, `four delayed trips took ${four} ms, one ${one} ms`);
  } finally {
    kv.close();
    await server.close();
  }
});

Deno.test("a dropped reply: the write landed, the client sends it again, its checks then fail", async () => {
  const server = await startKvConnectServer();
  const kv = await server.openKv();
  try {
    const dropped = server.dropWriteReplies(1);
    const res = await kv.atomic().check({ key: ["w"], versionstamp: null }).set(["w"], 1).commit();
    await dropped;
    assert.equal(res.ok, false, "the resend fails the check against the landed write");
    assert.equal((await kv.get(["w"])).value, 1, "the write landed once");
    assert.equal(server.counts().writes, 2);
  } finally {
    kv.close();
    await server.close();
  }
});

for (const mode of ["refuse", "stall"] as const) {
  Deno.test(`down (${mode}) and up: calls wait, then finish on the same port and data`, async () => {
    const server = await startKvConnectServer();
    const kv = await server.openKv();
    try {
      await kv.set(["kept"], "yes");
      const { port } = server;
      await server.down(mode);
      assert.equal(server.isDown, true);
      let settled = false;
      const read = kv.get(["kept"]).finally(() => settled = true);
      const write = kv.set(["during"], 1);
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.equal(settled, false, "nothing is answered while down");
      await server.up();
      assert.equal(server.port, port);
      assert.equal((await read).value, "yes");
      await write;
      assert.equal((await kv.get(["during"])).value, 1);
    } finally {
      kv.close();
      await server.close();
    }
  });
}
