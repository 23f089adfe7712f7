// The relayed transport (protocol §7) against a relay served over real HTTP: every call goes to
// the relay as a sealed envelope and comes back as the inner answer; the key configuration is
// held to the pin and a mismatch sends nothing; a relay that is down, refuses, times out or
// answers what does not open is a typed failure, never a direct call to the server.
import assert from "node:assert/strict";
import { ApiCallError, createApiClient, type Transport } from "../../../lib/client/api_client.ts";
import { keyConfigHash } from "../../../lib/client/relay/fragment.ts";
import {
  checkPinnedKeys,
  createRelayedTransport,
  type EncapsulatorFactory,
  type InnerRequest,
  type KeyCheck,
  RelayError,
  servedKeyHash,
} from "../../../lib/client/relay/relayed_transport.ts";
import { mismatchText } from "../../../lib/client/relay/page_transport.ts";

const ORIGIN = "http://vote.example:8000";
const CONFIG: Uint8Array<ArrayBuffer> = new Uint8Array([0, 41, 1, 0, 32, 9, 9, 9]);
const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const unb64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/**
 * A stand-in for OHTTP with the same shape: the envelope is the inner request as JSON under a
 * per-request id, and the answer opens only with that id. It shows what reaches the gateway.
 */
const toyEncapsulation: EncapsulatorFactory = (keys) => {
  assert.deepEqual(keys, CONFIG, "the encapsulator is built from the configuration served");
  return (inner) => {
    const id = crypto.randomUUID();
    const request = { id, ...inner, body: inner.body && b64(inner.body) };
    return Promise.resolve({
      request: new TextEncoder().encode(JSON.stringify(request)),
      open(response: Uint8Array) {
        const answer = JSON.parse(new TextDecoder().decode(response));
        if (answer.id !== id) throw new Error("not this request's answer");
        return Promise.resolve({ ...answer, body: unb64(answer.body) });
      },
    });
  };
};

type Gateway = (inner: InnerRequest) => { status: number; body: string };

/** Serves a relay on a free port: its configuration, `POST /`, and the gateway behind it. */
function serveRelay(
  { config = CONFIG, gateway, outer }: {
    config?: Uint8Array<ArrayBuffer>;
    gateway?: Gateway;
    outer?: (request: Request) => Response | null | Promise<Response | null>;
  } = {},
) {
  const seen: string[] = [];
  const inners: InnerRequest[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    const { pathname } = new URL(request.url);
    seen.push(`${request.method} ${pathname} ${request.headers.get("content-type") ?? ""}`);
    const special = await outer?.(request);
    if (special) return special;
    if (request.method === "GET" && pathname === "/.well-known/ohttp-gateway") {
      return new Response(config, { headers: { "content-type": "application/ohttp-keys" } });
    }
    const { id, body, ...fields } = JSON.parse(await request.text());
    const inner: InnerRequest = body === undefined ? fields : { ...fields, body: unb64(body) };
    inners.push(inner);
    const answer = (gateway ?? echo)(inner);
    const answerBody = b64(new TextEncoder().encode(answer.body));
    return new Response(
      JSON.stringify({
        id,
        status: answer.status,
        headers: [["content-type", "application/json"]],
        body: answerBody,
      }),
      { headers: { "content-type": "message/ohttp-res" } },
    );
  });
  const relay = `http://127.0.0.1:${server.addr.port}`;
  return { relay, seen, inners, close: () => server.shutdown() };
}

const echo: Gateway = (inner) => ({
  status: 200,
  body: JSON.stringify({ path: inner.path, method: inner.method }),
});

/** The network as the page has it, recording every address it is asked for. */
function recordingFetch(): { fetch: Transport; urls: string[] } {
  const urls: string[] = [];
  return { urls, fetch: (url, init) => (urls.push(url), fetch(url, init)) };
}

function relayed(relay: string, net: Transport, ohttp = keyConfigHash(CONFIG), timeoutMs?: number) {
  return createRelayedTransport({
    pin: { relay, ohttp },
    origin: ORIGIN,
    fetch: net,
    encapsulator: toyEncapsulation,
    timeoutMs,
  });
}

Deno.test("a call goes to the relay sealed and comes back as the inner answer", async () => {
  const served = serveRelay();
  try {
    const net = recordingFetch();
    const { transport } = relayed(served.relay, net.fetch);
    const response = await transport("/api/rounds?x=1", {
      method: "GET",
      headers: { accept: "application/json" },
    });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { path: "/api/rounds?x=1", method: "GET" });
    assert.deepEqual(served.inners, [{
      method: "GET",
      scheme: "http",
      authority: "vote.example:8000",
      path: "/api/rounds?x=1",
    }], "no accept header, no content type, no body: nothing to tell one phone from another");
    assert.deepEqual(served.seen, [
      "GET /.well-known/ohttp-gateway ",
      "POST / message/ohttp-req",
    ]);
    assert.ok(net.urls.every((url) => url.startsWith(served.relay)), "only the relay is called");
  } finally {
    await served.close();
  }
});

Deno.test("the API client's writes and refusals keep their meaning through the relay", async () => {
  const served = serveRelay({
    gateway: (inner) =>
      inner.path.endsWith("/vote")
        ? {
          status: 409,
          body: JSON.stringify({ error: { code: "voting_not_open", message: "Not yet" } }),
        }
        : echo(inner),
  });
  try {
    const { transport } = relayed(served.relay, fetch);
    const api = createApiClient({ fetch: transport, ledger: { round: 3 } });
    const vote = { payload: "p", signature: "s", publicKeys: ["k"] };
    const refused = await api.submitVote(vote as never).catch((error) => error);
    assert.ok(refused instanceof ApiCallError);
    assert.equal(refused.status, 409);
    assert.equal(refused.code, "voting_not_open");
    const write = served.inners.at(-1)!;
    assert.equal(write.method, "POST");
    assert.equal(write.path, "/api/rounds/3/vote");
    assert.equal(write.contentType, "application/json");
    assert.deepEqual(JSON.parse(new TextDecoder().decode(write.body)), vote);
  } finally {
    await served.close();
  }
});

Deno.test("a key configuration that is not the pinned one sends nothing, ever", async () => {
  const served = serveRelay({ config: new Uint8Array([0, 41, 2]) });
  try {
    const net = recordingFetch();
    const { transport, keyCheck } = relayed(served.relay, net.fetch);
    const check = await keyCheck();
    assert.equal(check.kind, "mismatch");
    if (check.kind === "mismatch") {
      assert.equal(check.served, keyConfigHash(new Uint8Array([0, 41, 2])));
      assert.equal(check.expected, keyConfigHash(CONFIG));
    }
    for (let i = 0; i < 2; i++) {
      const failed = await Promise.resolve(transport("/api/vote", { method: "POST", body: "{}" }))
        .catch((error) => error);
      assert.ok(failed instanceof RelayError && failed.kind === "key-mismatch", String(failed));
      assert.match(failed.message, /nothing was sent/);
    }
    assert.deepEqual(served.seen, ["GET /.well-known/ohttp-gateway "], "read once, then nothing");
    assert.equal(served.inners.length, 0);
  } finally {
    await served.close();
  }
});

Deno.test("a relay that is down is a typed failure and no direct call is made", async () => {
  const served = serveRelay();
  await served.close();
  const net = recordingFetch();
  const { transport, keyCheck } = relayed(served.relay, net.fetch);
  const failed = await Promise.resolve(transport("/api/rounds", { method: "GET" }))
    .catch((error) => error);
  assert.ok(failed instanceof RelayError);
  assert.equal(failed.kind, "relay-unreachable");
  assert.equal((await keyCheck()).kind, "unavailable");
  assert.ok(net.urls.length >= 2);
  assert.ok(net.urls.every((url) => url.startsWith(served.relay)), net.urls.join(" "));
});

Deno.test("a relay's 504 and other refusals are typed; a failed key read is tried again", async () => {
  let configReads = 0;
  let status = 504;
  const served = serveRelay({
    outer: (request) => {
      if (request.method === "GET") {
        configReads++;
        return configReads === 1 ? new Response("later", { status: 503 }) : null;
      }
      return new Response("", { status });
    },
  });
  try {
    const { transport } = relayed(served.relay, fetch);
    const call = () =>
      Promise.resolve(transport("/api/rounds", { method: "GET" })).catch((error) => error);
    const first = await call();
    assert.equal(first.kind, "relay-refused");
    assert.equal(first.status, 503);
    const timedOut = await call();
    assert.equal(timedOut.kind, "gateway-timeout");
    assert.equal(timedOut.status, 504);
    status = 502;
    const refused = await call();
    assert.equal(refused.kind, "relay-refused");
    assert.equal(refused.status, 502);
    assert.equal(configReads, 2, "the configuration is read again after a failure, then kept");
  } finally {
    await served.close();
  }
});

Deno.test("a relay that never answers fails the call at its deadline", async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const served = serveRelay({
    outer: async (request) => {
      if (request.method !== "POST") return null;
      await held;
      return new Response("", { status: 502 });
    },
  });
  try {
    const { transport } = relayed(served.relay, fetch, keyConfigHash(CONFIG), 300);
    const failed = await Promise.resolve(transport("/api/rounds", { method: "GET" }))
      .catch((error) => error);
    assert.ok(failed instanceof RelayError);
    assert.equal(failed.kind, "timeout");
  } finally {
    release();
    await served.close();
  }
});

Deno.test("an answer that does not open, or is not an OHTTP response, is refused", async () => {
  let kind = "other-id";
  const served = serveRelay({
    outer: (request) => {
      if (request.method !== "POST") return null;
      return kind === "other-id"
        ? new Response(JSON.stringify({ id: "x", status: 200, headers: [], body: "" }), {
          headers: { "content-type": "message/ohttp-res" },
        })
        : new Response("{}", { headers: { "content-type": "application/json" } });
    },
  });
  try {
    const { transport } = relayed(served.relay, fetch);
    const call = () =>
      Promise.resolve(transport("/api/rounds", { method: "GET" })).catch((error) => error);
    const unopened = await call();
    assert.equal(unopened.kind, "malformed-answer");
    assert.match(unopened.message, /does not open/);
    kind = "json";
    const wrongType = await call();
    assert.equal(wrongType.kind, "malformed-answer");
    assert.match(wrongType.message, /not message\/ohttp-res/);
  } finally {
    await served.close();
  }
});

Deno.test("a call to another origin is refused before anything is sent", async () => {
  const net = recordingFetch();
  const { transport } = relayed("http://127.0.0.1:9", net.fetch);
  await assert.rejects(
    () => Promise.resolve(transport("http://elsewhere.example/api/rounds", { method: "GET" })),
    TypeError,
  );
  assert.deepEqual(net.urls, []);
  assert.throws(
    () =>
      createRelayedTransport({
        pin: { relay: "http://r", ohttp: keyConfigHash(CONFIG) },
        origin: ORIGIN,
        fetch,
        encapsulator: toyEncapsulation,
        timeoutMs: 0,
      }),
    RangeError,
  );
});

Deno.test("the key check alone reads the configuration and holds it to the pin", async () => {
  const served = serveRelay();
  try {
    const pin = (ohttp: string) => ({ relay: served.relay, ohttp });
    assert.deepEqual(await checkPinnedKeys({ pin: pin(keyConfigHash(CONFIG)), fetch }), {
      kind: "ok",
    });
    const other = keyConfigHash(new Uint8Array([7]));
    assert.deepEqual(await checkPinnedKeys({ pin: pin(other), fetch }), {
      kind: "mismatch",
      expected: other,
      served: keyConfigHash(CONFIG),
      by: "relay",
    });
    assert.deepEqual(served.seen, [
      "GET /.well-known/ohttp-gateway ",
      "GET /.well-known/ohttp-gateway ",
    ]);
  } finally {
    await served.close();
  }
  const down = await checkPinnedKeys({
    pin: { relay: served.relay, ohttp: keyConfigHash(CONFIG) },
    fetch,
  });
  assert.equal(down.kind, "unavailable");
});

Deno.test("the presenter's pin is the relay's configuration only when the server publishes the same", async () => {
  const relay = serveRelay();
  const same = serveRelay();
  const own = serveRelay({ config: new Uint8Array([0, 41, 1, 0, 32, 7, 7, 7]) });
  try {
    const hash = await servedKeyHash({ relay: relay.relay, origin: same.relay, fetch });
    assert.equal(hash, keyConfigHash(CONFIG));
    // A relay serving a key of its own could open every call it forwards: no code is drawn.
    const failed = await servedKeyHash({ relay: relay.relay, origin: own.relay, fetch })
      .catch((e) => e);
    assert.ok(failed instanceof RelayError, String(failed));
    assert.equal(failed.kind, "key-mismatch");
    assert.match(failed.message, /not the one the server publishes/);
    assert.deepEqual(own.seen, ["GET /.well-known/ohttp-gateway "]);
  } finally {
    await Promise.all([relay.close(), same.close(), own.close()]);
  }
});

Deno.test("before its registration a phone holds the server's published configuration to its pin too", async () => {
  // A code made by someone else names their relay and the hash of their own key: the relay serves
  // that key, so only the server's own configuration tells them apart.
  const theirs = new Uint8Array([0, 41, 1, 0, 32, 6, 6, 6]);
  const relay = serveRelay({ config: theirs });
  const server = serveRelay();
  const honest = serveRelay();
  try {
    const pin = { relay: relay.relay, ohttp: keyConfigHash(theirs) };
    assert.deepEqual(
      await checkPinnedKeys({ pin, fetch }),
      { kind: "ok" },
      "the relay alone agrees",
    );
    const check = await checkPinnedKeys({ pin, fetch, origin: server.relay });
    assert.deepEqual(check, {
      kind: "mismatch",
      expected: keyConfigHash(theirs),
      served: keyConfigHash(CONFIG),
      by: "server",
    });
    assert.deepEqual(server.seen, ["GET /.well-known/ohttp-gateway "]);
    assert.equal(
      mismatchText(pin, check as KeyCheck & { kind: "mismatch" }),
      `The server publishes key configuration ${keyConfigHash(CONFIG).slice(0, 8)}, not ` +
        `${keyConfigHash(theirs).slice(0, 8)} as the presenter's code says: the relay ` +
        `${relay.relay} could read every call it forwards. Nothing was sent. Scan the ` +
        "presenter's code again.",
    );
    // The honest code: relay and server serve the pinned configuration.
    const fair = { relay: honest.relay, ohttp: keyConfigHash(CONFIG) };
    assert.deepEqual(await checkPinnedKeys({ pin: fair, fetch, origin: server.relay }), {
      kind: "ok",
    });
  } finally {
    await Promise.all([relay.close(), server.close(), honest.close()]);
  }
  // A server that cannot be read leaves the check undecided: nothing is sent.
  const check = await checkPinnedKeys({
    pin: { relay: honest.relay, ohttp: keyConfigHash(CONFIG) },
    fetch,
    origin: server.relay,
  });
  assert.equal(check.kind, "unavailable");
});
