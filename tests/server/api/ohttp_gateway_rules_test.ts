// The gateway's rules beside its answers (protocol §4.11): an encapsulated request's body within
// the deadline of direct writes (408 `body_timeout`), its key looked up once the body is in (a
// request sealed to a key replaced meanwhile gets `ohttp_key`), the key read from KV once per
// process and key id, and no key replacement while a relayed round is voting (409 `round_voting`).
import assert from "node:assert/strict";
import { type GatewayTarget, sealCall } from "../../../lib/client/relay/ohttp_client.ts";
import { BODY_DEADLINE_MS } from "../../../server/api/body_deadline.ts";
import { GATEWAY_KEY, KEY_KEEP_MS } from "../../../server/store/ohttp_key.ts";
import { GATEWAY_ORIGIN, gatewayApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { makeVoters } from "../../helpers/ledger_fixtures.ts";
import { withKv } from "../../helpers/kv.ts";
import { Hono } from "hono";
import { createGatewayApp } from "../../../server/api/ohttp.ts";
import { createGatewayKeys } from "../../../server/store/ohttp_key.ts";
import { toApiError } from "../../../server/errors.ts";

const PRESENTER = {
  "content-type": "application/json",
  authorization: `Bearer ${PRESENTER_TOKEN}`,
};

type Parts = Awaited<ReturnType<typeof gatewayApp>>;

/** A client's target: the gateway's key configuration as served now. */
async function target(parts: Parts): Promise<GatewayTarget> {
  return { config: await parts.config(), scheme: "http", authority: "localhost" };
}

/** The presenter's POST of `path` (JSON `body`, if any): status and parsed answer. */
async function asPresenter(parts: Parts, path: string, body?: unknown) {
  const res = await parts.app.request(`${GATEWAY_ORIGIN}${path}`, {
    method: "POST",
    headers: PRESENTER,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

/**
 * Sends `path` a POST of `type` over a plain TCP connection: its headers, announcing 200 bytes, and
 * 50 of them, then nothing; answers the status line and the body the server wrote back.
 */
async function stalledPost(port: number, path: string, type: string) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
      `Content-Type: ${type}\r\nContent-Length: 200\r\n\r\n`;
    const bytes = new Uint8Array([...new TextEncoder().encode(head), ...new Uint8Array(50)]);
    await conn.write(bytes);
    let text = "";
    const buffer = new Uint8Array(4096);
    while (text.length < 32_768) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
      const end = text.indexOf("\r\n\r\n");
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? NaN);
      if (end >= 0 && text.length >= end + 4 + length) break;
    }
    const [status] = text.split("\r\n", 1);
    return { status, body: JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) };
  } finally {
    conn.close();
  }
}

Deno.test("an encapsulated request whose body never ends: 408 body_timeout at the default 10 s", async () => {
  assert.equal(BODY_DEADLINE_MS, 10_000);
  const kv = await Deno.openKv(":memory:");
  const parts = await gatewayApp(kv);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, parts.app.fetch);
  try {
    const res = await stalledPost(server.addr.port, "/api/ohttp", "message/ohttp-req");
    assert.match(res.status, /^HTTP\/1\.1 408 /, JSON.stringify(res));
    assert.equal(res.body.error.code, "body_timeout");
    assert.match(res.body.error.message, /did not arrive within 10 s/);
  } finally {
    await server.shutdown();
    kv.close();
  }
});

Deno.test(
  "a request whose body arrives after a key replacement gets ohttp_key",
  withKv(async (kv) => {
    const parts = await gatewayApp(kv);
    const sealed = await sealCall(await target(parts), { method: "GET", path: "/api/rounds" });
    const bytes = sealed.encapsulated;
    const reading = Promise.withResolvers<void>();
    const rest = Promise.withResolvers<void>();
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (pulls++ === 0) return controller.enqueue(bytes.slice(0, 16));
        reading.resolve();
        await rest.promise;
        controller.enqueue(bytes.slice(16));
        controller.close();
      },
    });
    const answer = parts.app.request(`${GATEWAY_ORIGIN}/api/ohttp`, {
      method: "POST",
      // Its length announced, as a relay sends it: the body is read by the handler, not buffered.
      headers: { "content-type": "message/ohttp-req", "content-length": String(bytes.length) },
      body,
      duplex: "half",
    } as RequestInit);
    // The gateway is reading the body: its first bytes are in, the rest is on the way.
    await reading.promise;
    assert.equal((await asPresenter(parts, "/api/ohttp/key")).status, 200);
    rest.resolve();
    const res = await answer;
    assert.equal(res.status, 400);
    const refused = await res.json();
    assert.equal(refused.error.code, "ohttp_key");
    assert.equal(refused.error.keyId, (await parts.config()).keyId);
  }),
);

Deno.test(
  "the gateway reads its key from KV once per process and key id, not once per request",
  withKv(async (kv) => {
    let reads = 0;
    const counting = new Proxy(kv, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (name === "get") {
          return (key: Deno.KvKey, ...rest: unknown[]) => {
            if (JSON.stringify(key) === JSON.stringify(GATEWAY_KEY)) reads++;
            return target.get(key, ...(rest as []));
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    let clock = 0;
    const parts = await gatewayApp(counting, { gatewayNow: () => clock });
    const to = await target(parts); // the key configuration's answer reads KV, as ever
    const read = async () => {
      const sealed = await sealCall(to, { method: "GET", path: "/api/rounds" });
      const res = await parts.post(sealed.encapsulated);
      assert.equal(res.status, 200);
      assert.equal((await sealed.open(new Uint8Array(await res.arrayBuffer()))).status, 200);
    };
    reads = 0;
    for (let i = 0; i < 10; i++) await read();
    assert.equal(reads, 0, "ten relayed reads, no read of the key");
    // Past the time a process keeps its key: one read, then none again.
    clock += KEY_KEEP_MS;
    await Promise.all(Array.from({ length: 5 }, read));
    for (let i = 0; i < 5; i++) await read();
    assert.equal(reads, 1, "one read after the key's keeping time, shared by the requests");
    // A replacement in this process is kept at once: the next request needs no read.
    const replaced = await asPresenter(parts, "/api/ohttp/key");
    assert.equal(replaced.status, 200);
    reads = 0;
    const fresh = await target(parts);
    reads = 0;
    const sealed = await sealCall(fresh, { method: "GET", path: "/api/rounds" });
    assert.equal((await parts.post(sealed.encapsulated)).status, 200);
    assert.equal(reads, 0);
  }),
);

Deno.test(
  "a key replacement while a relayed round is voting: 409 round_voting; between rounds as ever",
  withKv(async (kv) => {
    const parts = await gatewayApp(kv, { currentTtlMs: 0 });
    const before = await parts.config();
    assert.equal(
      (await asPresenter(parts, "/api/rounds", { question: "Q?", choices: ["A", "B"] }))
        .body.id,
      2,
    );
    assert.equal((await asPresenter(parts, "/api/rounds/2/relay", { relayed: true })).status, 200);
    for (const voter of makeVoters(8)) {
      const res = await parts.app.request(`${GATEWAY_ORIGIN}/api/rounds/2/pki/key`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(voter),
      });
      assert.equal(res.status, 201);
    }
    // The join phase: replaced as today.
    const joining = await asPresenter(parts, "/api/ohttp/key");
    assert.equal(joining.status, 200);
    const joined = await parts.config();
    assert.notDeepEqual(joined, before);
    assert.equal((await asPresenter(parts, "/api/rounds/2/voting", {})).status, 200);
    const voting = await asPresenter(parts, "/api/ohttp/key");
    assert.equal(voting.status, 409);
    assert.equal(voting.body.error.code, "round_voting");
    assert.equal(voting.body.error.round, 2);
    assert.match(voting.body.error.message, /Round 2 is voting through the relay/);
    assert.deepEqual(await parts.config(), joined, "the key is unchanged");
    // The next round closes round 2: replaced as today.
    assert.equal(
      (await asPresenter(parts, "/api/rounds", { question: "R?", choices: ["A", "B"] }))
        .body.id,
      3,
    );
    assert.equal((await asPresenter(parts, "/api/ohttp/key")).status, 200);
    assert.notDeepEqual(await parts.config(), joined);
  }),
);

Deno.test(
  "a key replacement when the rounds cannot be read: 503 busy, the key kept (fails closed)",
  withKv(async (kv) => {
    const keys = await createGatewayKeys(kv);
    const before = (await keys.current()).keys;
    const app = new Hono();
    app.onError((error) => toApiError(error).getResponse());
    app.route(
      "/",
      createGatewayApp({
        keys,
        serve: () => new Response("{}", { status: 500 }),
        presenter: async (_c, next) => await next(),
      }),
    );
    const res = await app.request("http://localhost/api/ohttp/key", {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    assert.equal(res.status, 503);
    assert.equal((await res.json()).error.code, "busy");
    assert.equal(res.headers.get("retry-after"), "1");
    assert.deepEqual((await keys.current()).keys, before, "the key is unchanged");
  }),
);
