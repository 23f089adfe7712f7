// The page's one choice of how its calls travel (protocol §7): straight without a relay; with one,
// the registration straight after the key check, everything after it through the relay and never
// straight again; a vote held for its send window; a ballot read held after a load.
import assert from "node:assert/strict";
import { holdsRegisteredKey } from "../../../islands/hooks/registered_key.ts";
import type { Transport } from "../../../lib/client/api_client.ts";
import { keyConfigHash, type RelayPin } from "../../../lib/client/relay/fragment.ts";
import {
  callKind,
  createPageTransport,
  type PageTransportDeps,
  roundOfPath,
  type Wait,
} from "../../../lib/client/relay/page_transport.ts";
import { type KeyCheck, RelayError } from "../../../lib/client/relay/relayed_transport.ts";

const PIN: RelayPin = {
  relay: "http://relay.example:8788",
  ohttp: keyConfigHash(new Uint8Array(1)),
};
const LOADED = 1_800_000_000_000;
const W = 30_000;

/** A page with a recording network straight to the server and through the relay. */
function page(
  { pin = PIN, check = { kind: "ok" } as KeyCheck, registered = false, openedAt = LOADED } = {},
) {
  const sent: string[] = [];
  const waits: (Wait | null)[] = [];
  const alerts: KeyCheck[] = [];
  const slept: number[] = [];
  const state = {
    registered,
    now: LOADED,
    draws: [0.5, 0.5, 0.5],
    relayFails: false,
    refuse: false,
  };
  const answer = (status = 200) => new Response("{}", { status });
  const direct: Transport = (url, init) => {
    sent.push(`direct ${init.method} ${url}`);
    return answer(url.endsWith("/pki/key") && state.refuse ? 409 : 200);
  };
  const relayed: Transport = (url, init) => {
    if (state.relayFails) throw new RelayError("relay-unreachable", "down");
    sent.push(`relay ${init.method} ${url}`);
    return answer();
  };
  const deps: PageTransportDeps = {
    direct,
    pin: () => pin,
    registered: () => state.registered === true,
    markRegistered: () => (state.registered = true),
    keyCheck: () => Promise.resolve(check),
    relayed: () => Promise.resolve(relayed),
    timing: () => Promise.resolve({ openedAt, intervalMs: 15_000 }),
    now: () => state.now,
    sleep: (ms) => {
      slept.push(ms);
      state.now += ms;
      return Promise.resolve();
    },
    random: () => state.draws.shift() ?? 0,
    loadedAt: LOADED,
    onAlert: (c) => alerts.push(c),
    onWait: (w) => waits.push(w),
  };
  const transport = createPageTransport(deps);
  const call = (method: string, path: string) =>
    Promise.resolve(transport(path, { method, body: method === "POST" ? "{}" : undefined }));
  return { call, transport, sent, waits, alerts, slept, state, deps };
}

Deno.test("calls are told apart by what they name", () => {
  assert.equal(callKind("POST", "/api/rounds/3/pki/key"), "registration");
  assert.equal(callKind("POST", "/api/rounds/3/vote"), "vote");
  assert.equal(callKind("GET", "/api/rounds/3/tag/ab12"), "ballot");
  assert.equal(callKind("GET", "/api/rounds/3/block/id/4/vote/v9"), "ballot");
  assert.equal(callKind("GET", "/api/rounds/3/block/hash/id/3"), "ballot");
  assert.equal(callKind("GET", "/api/rounds/3/pki/key/id/4"), "other");
  assert.equal(callKind("GET", "/api/rounds/3/block/status"), "other");
  assert.equal(callKind("GET", "/api/rounds/3/vote"), "other");
  assert.equal(roundOfPath("/api/rounds"), "list");
  assert.equal(roundOfPath("/api/rounds/3/groups"), 3);
  assert.equal(roundOfPath("/api/rounds/1/tally"), null, "round 1 is the election");
  assert.equal(roundOfPath("/api/vote"), null);
  assert.equal(roundOfPath("/api/lab/vote"), null);
});

Deno.test("without a relay pinned every call goes straight to the server", async () => {
  const p = page({ pin: null as unknown as RelayPin });
  await p.call("POST", "/api/rounds/3/pki/key");
  await p.call("GET", "/api/rounds/3/groups");
  await p.call("POST", "/api/rounds/3/vote");
  assert.deepEqual(p.sent.map((s) => s.split(" ")[0]), ["direct", "direct", "direct"]);
  assert.deepEqual(p.waits, []);
});

Deno.test("with a relay, the registration goes straight and everything after it through the relay", async () => {
  const p = page();
  await p.call("GET", "/api/rounds");
  await p.call("POST", "/api/rounds/3/pki/key");
  assert.equal(p.state.registered, true);
  for (const path of ["/api/rounds", "/api/rounds/3/groups", "/api/rounds/3/log/checkpoint"]) {
    await p.call("GET", path);
  }
  assert.deepEqual(p.sent, [
    "direct GET /api/rounds",
    "direct POST /api/rounds/3/pki/key",
    "relay GET /api/rounds",
    "relay GET /api/rounds/3/groups",
    "relay GET /api/rounds/3/log/checkpoint",
  ]);
  // The election and the lab keep their specified calls.
  await p.call("GET", "/api/tally");
  await p.call("GET", "/api/lab/tally");
  assert.deepEqual(p.sent.slice(-2), ["direct GET /api/tally", "direct GET /api/lab/tally"]);
  // The presenter's calls carry its token: the relay could not carry it, and it names them anyway.
  await p.transport("/api/rounds/3/voting", {
    method: "POST",
    headers: { authorization: "Bearer t" },
  });
  assert.equal(p.sent.at(-1), "direct POST /api/rounds/3/voting");
});

Deno.test("a key configuration that is not the pinned one: the alert, and nothing sent", async () => {
  const mismatch: KeyCheck = { kind: "mismatch", expected: PIN.ohttp, served: "x".repeat(43) };
  const p = page({ check: mismatch });
  const failed = await p.call("POST", "/api/rounds/3/pki/key").catch((e) => e);
  assert.ok(failed instanceof RelayError && failed.kind === "key-mismatch");
  assert.match(failed.message, /nothing was sent/);
  assert.deepEqual(p.alerts, [mismatch]);
  assert.deepEqual(p.sent, []);
  assert.equal(p.state.registered, false);

  const down = page({ check: { kind: "unavailable", reason: "the relay did not answer" } });
  const unreached = await down.call("POST", "/api/rounds/3/pki/key").catch((e) => e);
  assert.equal(unreached.kind, "relay-unreachable");
  assert.deepEqual(down.sent, []);
});

Deno.test("a relay that fails is never stepped around", async () => {
  const p = page({ registered: true });
  p.state.relayFails = true;
  const failed = await p.call("GET", "/api/rounds/3/groups").catch((e) => e);
  assert.ok(failed instanceof RelayError);
  assert.deepEqual(p.sent, []);
});

Deno.test("a vote waits for its send window, whenever it was pressed", async () => {
  const p = page({ registered: true, openedAt: LOADED });
  p.state.now = LOADED + 1_000;
  p.state.draws = [0.25];
  await p.call("POST", "/api/rounds/3/vote");
  assert.deepEqual(p.waits, [{ kind: "vote", until: LOADED + 5_000 + 0.25 * W }, null]);
  assert.deepEqual(p.slept, [4_000 + 0.25 * W]);
  assert.deepEqual(p.sent, ["relay POST /api/rounds/3/vote"]);
});

Deno.test("a ballot read soon after a load waits a fresh draw; later reads do not", async () => {
  const p = page({ registered: true, openedAt: LOADED - 10 * W });
  p.state.draws = [0.5];
  await p.call("GET", "/api/rounds/3/tag/ab");
  assert.deepEqual(p.slept, [0.5 * W]);
  await p.call("GET", "/api/rounds/3/block/id/2/vote/v1");
  assert.deepEqual(p.slept, [0.5 * W], "one draw a page");
  assert.deepEqual(p.sent, [
    "relay GET /api/rounds/3/tag/ab",
    "relay GET /api/rounds/3/block/id/2/vote/v1",
  ]);
});

Deno.test("a registration the server refuses does not turn the relay on", async () => {
  const p = page();
  p.state.refuse = true;
  const response = await p.call("POST", "/api/rounds/3/pki/key");
  assert.equal(response.status, 409);
  assert.equal(p.state.registered, false);
  await p.call("GET", "/api/rounds/3/groups");
  assert.equal(p.sent.at(-1), "direct GET /api/rounds/3/groups");
});

Deno.test("no straight call reaches the server after the registration has left", async () => {
  const p = page();
  const order: string[] = [];
  let release!: () => void;
  const slow = new Promise<void>((resolve) => (release = resolve));
  let first = true;
  const transport = createPageTransport({
    ...p.deps,
    direct: async (url, init) => {
      order.push(`start ${init.method} ${url}`);
      if (first) {
        first = false;
        await slow;
      }
      order.push(`end ${init.method} ${url}`);
      return new Response("{}");
    },
    relayed: () =>
      Promise.resolve((url: string, init: RequestInit) => {
        order.push(`relay ${init.method} ${url}`);
        return new Response("{}");
      }),
  });
  const poll = transport("/api/rounds/3/block/open", { method: "GET" });
  const registration = transport("/api/rounds/3/pki/key", { method: "POST", body: "{}" });
  await new Promise((resolve) => setTimeout(resolve, 0));
  const during = transport("/api/rounds/3/groups", { method: "GET" });
  await during;
  release();
  await Promise.all([poll, registration]);
  assert.deepEqual(order, [
    "start GET /api/rounds/3/block/open",
    "relay GET /api/rounds/3/groups",
    "end GET /api/rounds/3/block/open",
    "start POST /api/rounds/3/pki/key",
    "end POST /api/rounds/3/pki/key",
  ]);
});

Deno.test("a ballot's answer, once read through the relay, is kept and never asked again", async () => {
  const p = page({ registered: true, openedAt: LOADED - 10 * W });
  const store = new Map<string, { type: string; body: string }>();
  const transport = createPageTransport({
    ...p.deps,
    kept: { get: (path) => store.get(path) ?? null, set: (path, a) => store.set(path, a) },
  });
  const read = (path: string) => Promise.resolve(transport(path, { method: "GET" }));
  await read("/api/rounds/3/tag/ab");
  assert.deepEqual(p.sent, ["relay GET /api/rounds/3/tag/ab"]);
  assert.deepEqual([...store.keys()], ["/api/rounds/3/tag/ab"]);
  // A later page (a reload) answers from what it kept: no request, no wait.
  const reloaded = createPageTransport({
    ...p.deps,
    kept: { get: (path) => store.get(path) ?? null, set: (path, a) => store.set(path, a) },
  });
  const slept = p.slept.length;
  const again = await Promise.resolve(reloaded("/api/rounds/3/tag/ab", { method: "GET" }));
  assert.equal(again.status, 200);
  assert.equal(await again.text(), "{}");
  assert.equal(p.sent.length, 1, "not asked again");
  assert.equal(p.slept.length, slept, "no wait");
  // Other reads and refusals are never kept.
  await read("/api/rounds/3/groups");
  assert.equal(store.size, 1);
});

Deno.test("with a relay pinned, a vote and its ballot reads never go straight, registered here or not", async () => {
  // A phone whose key was registered before it held the pin (or whose registration was refused
  // as already made) has no registration mark: its vote still goes only through the relay.
  const p = page({ registered: false, openedAt: LOADED - 10 * W });
  await p.call("GET", "/api/rounds/3/groups");
  await p.call("POST", "/api/rounds/3/vote");
  await p.call("GET", "/api/rounds/3/tag/ab");
  await p.call("GET", "/api/rounds/3/block/open");
  assert.deepEqual(p.sent, [
    "direct GET /api/rounds/3/groups",
    "relay POST /api/rounds/3/vote",
    "relay GET /api/rounds/3/tag/ab",
    "relay GET /api/rounds/3/block/open",
  ]);
  assert.equal(p.state.registered, true, "a vote sent marks the phone as joined");
});

Deno.test("a registration refused as made already turns the relay on: the key is registered", async () => {
  const p = page();
  const transport = createPageTransport({
    ...p.deps,
    direct: (url, init) => {
      p.sent.push(`direct ${init.method} ${url}`);
      const body = { error: { code: "duplicate_key", message: "registered already" }, id: 4 };
      return new Response(JSON.stringify(body), { status: 409 });
    },
  });
  const response = await Promise.resolve(
    transport("/api/rounds/3/pki/key", { method: "POST", body: "{}" }),
  );
  assert.equal(response.status, 409);
  assert.equal((await response.json()).error.code, "duplicate_key", "the page still reads it");
  assert.equal(p.state.registered, true);
  await Promise.resolve(transport("/api/rounds/3/groups", { method: "GET" }));
  assert.deepEqual(p.sent, [
    "direct POST /api/rounds/3/pki/key",
    "relay GET /api/rounds/3/groups",
  ]);
});

Deno.test("a phone whose key of the round was registered before it held the pin calls only through the relay", async () => {
  const entries = new Map<string, string>([
    ["round/3/voters", "Ada Byron"],
    ["round/3/Ada Byron:keyId", "4"],
    ["round/4/voters", "Alan Turing"],
  ]);
  const storage = { getItem: (key: string) => entries.get(key) ?? null };
  assert.equal(holdsRegisteredKey(storage, 3), true);
  assert.equal(holdsRegisteredKey(storage, 4), false, "a voter without a key id");
  assert.equal(holdsRegisteredKey(storage, 5), false, "a round with no voter");
  const p = page();
  const transport = createPageTransport({
    ...p.deps,
    registered: (round) => typeof round === "number" && holdsRegisteredKey(storage, round),
  });
  await Promise.resolve(transport("/api/rounds/3/groups", { method: "GET" }));
  await Promise.resolve(transport("/api/rounds/4/groups", { method: "GET" }));
  assert.deepEqual(p.sent, ["relay GET /api/rounds/3/groups", "direct GET /api/rounds/4/groups"]);
});
