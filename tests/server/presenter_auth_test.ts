// The presenter's calls (protocol §4.9): wrong tokens are counted per address, and past ten in a
// minute every presenter call from that address is 429 `too_many_attempts` with `Retry-After`,
// right token or not; other addresses and the window's end are unaffected. Through the whole app,
// over a real HTTP server on loopback and with the peer address injected as Deno.serve gives it.
import assert from "node:assert/strict";
import { createApp } from "../../server/app.ts";
import {
  MAX_TRACKED_ADDRESSES,
  PRESENTER_FAILURES_PER_WINDOW,
  PRESENTER_WINDOW_MS,
  presenterOnly,
} from "../../server/presenter_auth.ts";
import { createStore } from "../../server/store/mod.ts";
import { createRounds } from "../../server/store/rounds.ts";
import { Hono } from "hono";
import { startServer } from "../helpers/server_process.ts";
import { testVerifier } from "../helpers/test_verifier.ts";
import { fullApp } from "../helpers/app_fixture.ts";

const ADMIN_TOKEN = "presenter-token-0123456789";

/** The connection info `Deno.serve` hands the app, for a request from `hostname`. */
function fromPeer(hostname: string): Deno.ServeHandlerInfo<Deno.NetAddr> {
  return { remoteAddr: { transport: "tcp", hostname, port: 50000 }, completed: Promise.resolve() };
}

/** `GET /api/presenter` with `token` from `peer`. */
function check(app: Hono, token: string, peer: string) {
  return app.request("/api/presenter", {
    headers: { authorization: `Bearer ${token}` },
  }, fromPeer(peer));
}

Deno.test("wrong presenter tokens: ten per minute per address, then 429 with Retry-After", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    const rounds = await createRounds(kv, {
      election: store,
      electionIntervalMs: 250,
      adminToken: ADMIN_TOKEN,
    });
    const app = createApp({ store, rounds, verifier: testVerifier });
    for (let i = 0; i < PRESENTER_FAILURES_PER_WINDOW; i++) {
      const res = await check(app, `wrong-${i}`, "192.0.2.7");
      assert.equal(res.status, 401, `guess ${i}`);
      await res.body?.cancel();
    }
    for (const token of ["wrong-again", ADMIN_TOKEN]) {
      const res = await check(app, token, "192.0.2.7");
      assert.equal(res.status, 429, token);
      const retry = Number(res.headers.get("retry-after"));
      assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
      assert.equal((await res.json()).error.code, "too_many_attempts");
    }
    // Starting a round is a presenter call too: refused the same way.
    const start = await app.request("/api/rounds", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ question: "Q?", choices: [] }),
    }, fromPeer("192.0.2.7"));
    assert.equal(start.status, 429);
    await start.body?.cancel();
    // Another address is counted on its own.
    assert.equal((await check(app, ADMIN_TOKEN, "192.0.2.8")).status, 204);
    // Over real HTTP on loopback, the connection's own address is the one counted.
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
    try {
      const url = `http://127.0.0.1:${server.addr.port}/api/presenter`;
      const statuses = [];
      for (let i = 0; i <= PRESENTER_FAILURES_PER_WINDOW; i++) {
        const res = await fetch(url, { headers: { authorization: "Bearer nope" } });
        statuses.push(res.status);
        await res.body?.cancel();
      }
      assert.deepEqual(statuses, [...Array(PRESENTER_FAILURES_PER_WINDOW).fill(401), 429]);
    } finally {
      await server.shutdown();
    }
  } finally {
    kv.close();
  }
});

Deno.test("with TRUST_PROXY, a proxy's clients are counted apart by the address it appends", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { app } = await fullApp(kv, { electionIntervalMs: 250, config: { trustProxy: true } });
    // Every request comes from the proxy's one address; the client's is the last value it appended
    // (a client may send its own X-Forwarded-For first: that value is not the one counted).
    const viaProxy = (token: string, forwarded: string) =>
      app.request("/api/presenter", {
        headers: { authorization: `Bearer ${token}`, "x-forwarded-for": forwarded },
      }, fromPeer("10.0.0.2"));
    for (let i = 0; i <= PRESENTER_FAILURES_PER_WINDOW; i++) {
      const res = await viaProxy(`wrong-${i}`, `203.0.113.${i}, 198.51.100.9`);
      assert.equal(res.status, i < PRESENTER_FAILURES_PER_WINDOW ? 401 : 429, `guess ${i}`);
      await res.body?.cancel();
    }
    // The presenter, behind the same proxy, is not locked out by a stranger's guesses.
    const presenter = await viaProxy(ADMIN_TOKEN, "198.51.100.20");
    assert.equal(presenter.status, 204);
  } finally {
    kv.close();
  }
});

Deno.test("the presenter throttle forgets a window once it ends, and stays bounded", async () => {
  let clock = 1_700_000_000_000;
  const app = new Hono();
  app.get("/p", presenterOnly(ADMIN_TOKEN, { now: () => clock }), (c) => c.body(null, 204));
  app.onError((error) => (error as { getResponse(): Response }).getResponse());
  const get = (token: string, peer: string) =>
    app.request("/p", { headers: { authorization: `Bearer ${token}` } }, fromPeer(peer));
  for (let i = 0; i < PRESENTER_FAILURES_PER_WINDOW; i++) await get("x", "198.51.100.1");
  assert.equal((await get(ADMIN_TOKEN, "198.51.100.1")).status, 429);
  clock += PRESENTER_WINDOW_MS;
  assert.equal((await get(ADMIN_TOKEN, "198.51.100.1")).status, 204, "a new window");
  // The table is bounded: once it is full, the oldest address is forgotten for a new one.
  for (let i = 0; i < PRESENTER_FAILURES_PER_WINDOW; i++) await get("x", "198.51.100.2");
  assert.equal((await get(ADMIN_TOKEN, "198.51.100.2")).status, 429);
  for (let i = 0; i < MAX_TRACKED_ADDRESSES; i++) {
    await get("x", `10.${i >> 16}.${i >> 8 & 255}.${i & 255}`);
  }
  assert.equal((await get(ADMIN_TOKEN, "198.51.100.2")).status, 204, "forgotten for newer ones");
});

Deno.test("main.ts prints the sign-in link with the token in the fragment, and refuses a weak token", async () => {
  const server = await startServer({ env: { ADMIN_TOKEN } });
  try {
    // The line is printed once listening: the status answered, so it is out.
    for (let i = 0; i < 100 && !server.output().includes("Presenter sign-in"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await server.stop();
  }
  const line = server.output().split("\n").find((l) => l.startsWith("Presenter sign-in"));
  assert.equal(line, `Presenter sign-in: ${server.url}#admin=${ADMIN_TOKEN}`);
  assert.doesNotMatch(server.output(), /\?admin=/);
  await assert.rejects(
    startServer({ env: { ADMIN_TOKEN: "a".repeat(20) } }),
    /ADMIN_TOKEN is too easy to guess/,
  );
});

Deno.test("an IPv6 client is counted by its /64: walking through its addresses buys no guesses", async () => {
  const app = new Hono();
  app.get("/p", presenterOnly(ADMIN_TOKEN), (c) => c.body(null, 204));
  app.onError((error) => (error as { getResponse(): Response }).getResponse());
  const get = (token: string, peer: string) =>
    app.request("/p", { headers: { authorization: `Bearer ${token}` } }, fromPeer(peer));
  for (let i = 0; i < PRESENTER_FAILURES_PER_WINDOW; i++) {
    const res = await get("x", `2001:db8:1:2:${(i + 1).toString(16)}::${i + 7}`);
    assert.equal(res.status, 401);
  }
  assert.equal((await get("x", "2001:db8:1:2:ffff:1:2:3")).status, 429, "the same /64");
  assert.equal((await get(ADMIN_TOKEN, "2001:0db8:0001:0002::1")).status, 429, "spelled longer");
  assert.equal((await get(ADMIN_TOKEN, "2001:db8:1:3::1")).status, 204, "another /64");
  // An IPv4 client is its address, mapped into IPv6 or not.
  for (let i = 0; i < PRESENTER_FAILURES_PER_WINDOW; i++) await get("x", "::ffff:192.0.2.9");
  assert.equal((await get(ADMIN_TOKEN, "192.0.2.9")).status, 429);
  assert.equal((await get(ADMIN_TOKEN, "192.0.2.10")).status, 204);
});
