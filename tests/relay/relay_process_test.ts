// The relay as its own process (`deno task relay`) in front of a real server process: it pins and
// serves the gateway's key configuration, forwards sealed calls, answers CORS preflights, counts,
// refuses another key id, stops forwarding once the gateway's key is replaced, and gets a client a
// 504 from a gateway that does not answer in time.
import assert from "node:assert/strict";
import { createApiClient } from "../../lib/client/api_client.ts";
import { type GatewayTarget, sealCall } from "../../lib/client/relay/ohttp_client.ts";
import { createRelayedTransport } from "../../lib/client/relay/relayed_transport.ts";
import { sealingEncapsulator } from "../../lib/client/relay/sealing.ts";
import { keyConfigsHash, KEYS_PATH, parseKeyConfigs } from "../../lib/protocol/ohttp.ts";
import { PRESENTER_TOKEN } from "../helpers/app_fixture.ts";
import { startServer } from "../helpers/server_process.ts";
import { startRelay } from "./relay_process.ts";

const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer());

/** The gateway target a phone builds from what the relay serves. */
async function targetVia(relay: string, server: string): Promise<GatewayTarget> {
  const keys = await bytesOf(await fetch(new URL(KEYS_PATH, relay)));
  return { config: parseKeyConfigs(keys)[0], scheme: "http", authority: new URL(server).host };
}

async function post(relay: string, body: Uint8Array, headers: Record<string, string> = {}) {
  return await fetch(relay, {
    method: "POST",
    headers: { "content-type": "message/ohttp-req", ...headers },
    body: body.slice(),
  });
}

Deno.test("the relay pins, serves and forwards, with CORS, counts and no other key", async () => {
  const server = await startServer({ env: { ADMIN_TOKEN: PRESENTER_TOKEN } });
  const relay = await startRelay(server.url).catch(async (e) => {
    await server.stop();
    throw e;
  });
  try {
    const direct = await bytesOf(await fetch(new URL(KEYS_PATH, server.url)));
    const served = await fetch(new URL(KEYS_PATH, relay.url));
    assert.equal(served.headers.get("content-type"), "application/ohttp-keys");
    assert.deepEqual(await bytesOf(served), direct);
    assert.equal(relay.sha256, keyConfigsHash(direct));

    const preflight = await fetch(relay.url, {
      method: "OPTIONS",
      headers: {
        origin: "http://phone.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    await preflight.body?.cancel();
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get("access-control-allow-origin"), "*");
    assert.match(preflight.headers.get("access-control-allow-methods") ?? "", /POST/);
    assert.match(preflight.headers.get("access-control-allow-headers") ?? "", /content-type/);

    const target = await targetVia(relay.url, server.url);
    const sealed = await sealCall(target, { method: "GET", path: "/api/rounds" });
    const res = await post(relay.url, sealed.encapsulated, {
      cookie: "session=phone-7",
      origin: "http://phone.example",
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("access-control-allow-origin"), "*");
    const inner = await sealed.open(await bytesOf(res));
    assert.equal(inner.status, 200);
    const directRounds = await (await fetch(new URL("/api/rounds", server.url))).json();
    assert.deepEqual(JSON.parse(new TextDecoder().decode(inner.body)), directRounds);

    const other = (await sealCall(target, { method: "GET", path: "/api/rounds" })).encapsulated;
    other[0] ^= 0xff;
    const refused = await post(relay.url, other);
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).error.code, "ohttp_key");
    const wrongType = await fetch(relay.url, { method: "POST", body: "x" });
    assert.equal(wrongType.status, 415);
    await wrongType.body?.cancel();
    const tooBig = await post(relay.url, new Uint8Array(70 * 1024));
    assert.equal(tooBig.status, 413);
    await tooBig.body?.cancel();

    // The API client over the relay (the page's transport) reads what it reads directly.
    const origin = new URL(server.url).origin;
    const pin = { relay: relay.url.replace(/\/$/, ""), ohttp: relay.sha256 };
    const { transport } = createRelayedTransport({
      pin,
      origin,
      fetch,
      encapsulator: sealingEncapsulator({
        ohttp: pin.ohttp,
        origin,
        choicesOf: () => Promise.resolve([]),
      }),
    });
    const relayed = createApiClient({ fetch: transport, baseUrl: server.url });
    const directApi = createApiClient({ fetch, baseUrl: server.url });
    assert.deepEqual(await relayed.serverKey(), await directApi.serverKey());
    assert.deepEqual(await relayed.rounds(), await directApi.rounds());
    // A request sealed to another key id is refused by the relay itself: 400 ohttp_key.
    const wrongTarget = { ...target, config: { ...target.config, keyId: target.config.keyId ^ 1 } };
    const wrongKey = await post(
      relay.url,
      (await sealCall(wrongTarget, { method: "GET", path: "/api/rounds" })).encapsulated,
    );
    assert.equal(wrongKey.status, 400);
    assert.equal((await wrongKey.json()).error.code, "ohttp_key");

    const stats = await (await fetch(new URL("/stats", relay.url))).json();
    assert.deepEqual(Object.keys(stats).sort(), ["bytes", "clients", "requests", "sameMachine"]);
    assert.equal(stats.requests, 3);
    assert.equal(stats.clients, 1);
    assert.ok(stats.bytes > 2 * 1024, `bytes ${stats.bytes}`);
    assert.equal(stats.sameMachine, true);
  } finally {
    await relay.stop();
    await server.stop();
  }
});

Deno.test("the relay stops forwarding once the gateway's key configuration changes", async () => {
  const server = await startServer({ env: { ADMIN_TOKEN: PRESENTER_TOKEN } });
  const relay = await startRelay(server.url, ["--recheck", "3600"]).catch(async (e) => {
    await server.stop();
    throw e;
  });
  try {
    const target = await targetVia(relay.url, server.url);
    const call = () => sealCall(target, { method: "GET", path: "/api/block/status" });
    assert.equal((await post(relay.url, (await call()).encapsulated)).status, 200);
    const rotated = await fetch(new URL("/api/ohttp/key", server.url), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${PRESENTER_TOKEN}` },
    });
    assert.equal(rotated.status, 200);
    await rotated.body?.cancel();
    // The gateway refuses the old key; that makes the relay read its configuration again.
    const first = await post(relay.url, (await call()).encapsulated);
    assert.equal(first.status, 400);
    assert.equal((await first.json()).error.code, "ohttp_key");
    let status = 0;
    for (let i = 0; i < 100 && status !== 502; i++) {
      const res = await post(relay.url, (await call()).encapsulated);
      status = res.status;
      const body = await res.json();
      if (status === 502) assert.equal(body.error.code, "gateway_changed");
      else await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(status, 502);
    // The relay still serves the configuration it pinned, never the new one.
    const served = await bytesOf(await fetch(new URL(KEYS_PATH, relay.url)));
    assert.equal(keyConfigsHash(served), relay.sha256);
  } finally {
    await relay.stop();
    await server.stop();
  }
});

Deno.test("a gateway that does not answer in time gets the client the relay's 504", async () => {
  const server = await startServer();
  // A gateway that publishes the server's key configuration and never answers a request.
  let held = 0;
  const release = Promise.withResolvers<void>();
  const slow = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (new URL(req.url).pathname !== "/api/ohttp") {
      return await fetch(new URL(KEYS_PATH, server.url));
    }
    held++;
    await release.promise;
    return new Response(null, { status: 500 });
  });
  let relay;
  try {
    relay = await startRelay(`http://127.0.0.1:${slow.addr.port}`, ["--deadline", "1"]);
    const target = await targetVia(relay.url, server.url);
    const sealed = await sealCall(target, { method: "GET", path: "/api/rounds" });
    const res = await post(relay.url, sealed.encapsulated);
    assert.equal(res.status, 504);
    assert.equal((await res.json()).error.code, "gateway_timeout");
    assert.equal(held, 1);
  } finally {
    await relay?.stop();
    release.resolve();
    await slow.shutdown();
    await server.stop();
  }
});

Deno.test("the relay exits 2 on a bad command line and 1 when the gateway cannot be pinned", async () => {
  const run = async (...args: string[]) => {
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-net",
        "--allow-sys=networkInterfaces",
        "--config",
        new URL("../../deno.json", import.meta.url).pathname,
        new URL("../../relay.ts", import.meta.url).pathname,
        ...args,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    return { code, stderr: new TextDecoder().decode(stderr) };
  };
  const refusals: [string[], RegExp][] = [
    [[], /^relay: --gateway is required\n/],
    [["--gateway", "ftp://example.org"], /^relay: --gateway must be an http or https URL\n/],
    [["--gateway=http://127.0.0.1:1", "--port", "70000"], /^relay: --port must be a port number/],
    [["--gateway", "http://127.0.0.1:1", "--deadline"], /^relay: --deadline needs a value\n/],
    [["--gateway", "http://127.0.0.1:1", "--recheck=0"], /^relay: --recheck must be a number/],
    [["--gateway", "http://127.0.0.1:1", "extra"], /^relay: unexpected argument "extra"\n/],
  ];
  for (const [args, reason] of refusals) {
    const { code, stderr } = await run(...args);
    assert.equal(code, 2, args.join(" "));
    assert.match(stderr, reason);
    assert.match(stderr, /usage: deno task relay/);
  }
  // A server with no gateway: nothing listens on the port.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  const down = await run("--gateway", `http://127.0.0.1:${port}`, "--deadline", "2");
  assert.equal(down.code, 1);
  assert.match(down.stderr, /cannot pin/);
});
