// The relay's handler (relay/app.ts) in front of a gateway of the test's own, over real HTTP: what
// a client can make the relay do to its gateway.
import assert from "node:assert/strict";
import { encodeKeyConfigs, generateGatewayKey, KEYS_PATH } from "../../lib/protocol/ohttp.ts";
import { createRelay, type Relay, type RelayOptions } from "../../relay/app.ts";
import { fetchKeys, PinError } from "../../relay/pin.ts";

/** A gateway that publishes one key configuration and refuses every request 400 `ohttp_key`. */
async function refusingGateway() {
  const key = await generateGatewayKey(7);
  const keys = encodeKeyConfigs([key.config]);
  const counts = { keyReads: 0, posts: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.body?.cancel();
    if (new URL(req.url).pathname === KEYS_PATH) {
      counts.keyReads++;
      return new Response(keys.slice(), { headers: { "content-type": "application/ohttp-keys" } });
    }
    counts.posts++;
    return Response.json({ error: { code: "ohttp_key", message: "another key" } }, { status: 400 });
  });
  const url = new URL(`http://127.0.0.1:${server.addr.port}`);
  return { url, counts, keyId: key.config.keyId, stop: () => server.shutdown() };
}

type RefusingGateway = Awaited<ReturnType<typeof refusingGateway>>;

/**
 * Runs `test` with a relay pinned to a {@link refusingGateway} (`options` over a 5 s deadline, on
 * the same machine), and stops both after it.
 */
async function withRelay(
  options: Partial<RelayOptions>,
  test: (relay: Relay, gateway: RefusingGateway) => Promise<void>,
): Promise<void> {
  const gateway = await refusingGateway();
  const client = Deno.createHttpClient({});
  try {
    const pinned = await fetchKeys(gateway.url, { client, deadlineMs: 5_000 });
    const relay = createRelay({
      gateway: gateway.url,
      pinned,
      client,
      deadlineMs: 5_000,
      sameMachine: true,
      ...options,
    });
    await test(relay, gateway);
  } finally {
    client.close();
    await gateway.stop();
  }
}

/** An encapsulated request to the relay, `body` as sent (a stream or bytes). */
function relayPost(body: BodyInit): Request {
  return new Request("http://relay.test/", {
    method: "POST",
    headers: { "content-type": "message/ohttp-req" },
    body,
  });
}

/** The connection of a client at `hostname`. */
function from(hostname: string): Deno.ServeHandlerInfo<Deno.NetAddr> {
  return { remoteAddr: { transport: "tcp", hostname, port: 4000 } } as Deno.ServeHandlerInfo<
    Deno.NetAddr
  >;
}

Deno.test("a client's refused requests make the relay read the gateway's keys once, not once each", () =>
  // The clock stands still: every refusal falls in one spacing.
  withRelay({ now: () => 1_000_000 }, async (relay, gateway) => {
    const body = new Uint8Array(80);
    body[0] = gateway.keyId;
    const send = () => relay.handler(relayPost(body.slice()), from("192.0.2.1"));
    const before = gateway.counts.keyReads;
    const answers = await Promise.all(Array.from({ length: 20 }, send));
    for (let i = 0; i < 20; i++) answers.push(await send());
    for (const res of answers) {
      assert.equal(res.status, 400);
      await res.body?.cancel();
    }
    assert.equal(gateway.counts.posts, 40);
    // Let any read set off by the refusals arrive (a bounded wait, not a timed assertion).
    for (let i = 0; i < 50 && gateway.counts.keyReads === before; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    await relay.recheck();
    // One read set off by the refusals, one asked for just now; unchanged keys keep it forwarding.
    assert.ok(gateway.counts.keyReads - before <= 2, `${gateway.counts.keyReads - before} reads`);
    assert.equal(relay.stopped(), null);
  }));

Deno.test("a client that sends its body slowly gets a 408 at the deadline, not a held request", () =>
  withRelay({ deadlineMs: 200 }, async (relay, gateway) => {
    // One byte, then nothing: the body never ends.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array([gateway.keyId]));
      },
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const held = new Promise<"held">((resolve) =>
      timer = setTimeout(() => resolve("held"), 10_000)
    );
    const res = await Promise.race([relay.handler(relayPost(body), from("192.0.2.1")), held]);
    clearTimeout(timer);
    assert.notEqual(res, "held", "the relay held the request past its deadline");
    const answer = res as Response;
    assert.equal(answer.status, 408);
    assert.equal((await answer.json()).error.code, "request_timeout");
    assert.equal(gateway.counts.posts, 0);
  }));

Deno.test("distinct client addresses are counted up to a bound, never held without one", () =>
  withRelay({ maxClients: 5 }, async (relay, gateway) => {
    for (let i = 0; i < 12; i++) {
      const body = new Uint8Array([(gateway.keyId + 1) % 256]);
      const res = await relay.handler(relayPost(body), from(`2001:db8::${i}`));
      await res.body?.cancel();
    }
    assert.equal(relay.stats().clients, 5);
  }));

Deno.test("the relay follows no redirect: a gateway cannot send it, or its clients' bodies, elsewhere", async () => {
  const key = await generateGatewayKey(9);
  const keys = encodeKeyConfigs([key.config]);
  let elsewhere = 0;
  const other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.body?.cancel();
    elsewhere++;
    return new Response("internal answer", { headers: { "content-type": "text/plain" } });
  });
  const redirecting = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.body?.cancel();
    if (new URL(req.url).pathname === KEYS_PATH) {
      return new Response(keys.slice(), { headers: { "content-type": "application/ohttp-keys" } });
    }
    return new Response(null, {
      status: 307,
      headers: { location: `http://127.0.0.1:${other.addr.port}/internal` },
    });
  });
  const client = Deno.createHttpClient({});
  try {
    const gateway = new URL(`http://127.0.0.1:${redirecting.addr.port}`);
    const pinned = await fetchKeys(gateway, { client, deadlineMs: 5_000 });
    const relay = createRelay({ gateway, pinned, client, deadlineMs: 5_000, sameMachine: true });
    const body = new Uint8Array(80);
    body[0] = key.config.keyId;
    const res = await relay.handler(relayPost(body), from("192.0.2.1"));
    assert.equal(res.status, 502);
    assert.doesNotMatch(await res.text(), /internal answer/);
    assert.equal(elsewhere, 0);
  } finally {
    client.close();
    await redirecting.shutdown();
    await other.shutdown();
  }
});

Deno.test("a gateway's endless key configuration is refused once past the bound, not read to the deadline", async () => {
  const gateway = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((r) => setTimeout(r, 10));
        if (sent++ < 10_000) controller.enqueue(new Uint8Array(1024));
        else controller.close();
      },
    });
    return new Response(endless, { headers: { "content-type": "application/ohttp-keys" } });
  });
  const client = Deno.createHttpClient({});
  try {
    const url = new URL(`http://127.0.0.1:${gateway.addr.port}`);
    await assert.rejects(
      () => fetchKeys(url, { client, deadlineMs: 2_000 }),
      (error: Error) => error instanceof PinError && /too long/.test(error.message),
    );
  } finally {
    client.close();
    await gateway.shutdown();
  }
});
