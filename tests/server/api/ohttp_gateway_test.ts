// The Oblivious HTTP gateway (protocol §4.11) over the real application and an in-memory KV: its
// key configuration, calls served inside encapsulations (200 outside whatever the inner status),
// every refusal a 4xx, and the presenter's key replacement that makes old ciphertexts unopenable.
import assert from "node:assert/strict";
import {
  type ApiCall,
  type GatewayTarget,
  sealCall,
  voteLength,
} from "../../../lib/client/relay/ohttp_client.ts";
import { decodeResponse, encodeRequest, pad } from "../../../lib/protocol/bhttp.ts";
import {
  decapsulateResponse,
  encapsulateRequest,
  KEYS_PATH,
  parseKeyConfigs,
} from "../../../lib/protocol/ohttp.ts";
import { GATEWAY_ORIGIN, gatewayApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { createGatewayKeys } from "../../../server/store/ohttp_key.ts";
import { makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";
import { withKv } from "../../helpers/kv.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { voteProofLength } from "../../../lib/protocol/vote_padding.ts";

const ORIGIN = GATEWAY_ORIGIN;

/** {@link gatewayApp}, with the gateway as a client targets it and one call through it. */
async function gatewayTest(kv: Deno.Kv) {
  const parts = await gatewayApp(kv);
  const { post } = parts;
  const target = async (): Promise<GatewayTarget> => ({
    config: await parts.config(),
    scheme: "http",
    authority: "localhost",
  });
  /** One call through the gateway: the outer status and the opened inner answer. */
  const through = async (call: ApiCall, voteBytes?: number) => {
    const sealed = await sealCall(await target(), call, { voteBytes });
    const outer = await post(sealed.encapsulated);
    assert.equal(outer.status, 200);
    assert.equal(outer.headers.get("content-type"), "message/ohttp-res");
    const bytes = new Uint8Array(await outer.arrayBuffer());
    const inner = await sealed.open(bytes);
    // The Binary HTTP answer's length: the sealed bytes less the nonce and the AEAD tag.
    const length = bytes.length - 32;
    return { ...inner, length, json: JSON.parse(new TextDecoder().decode(inner.body)) };
  };
  return { ...parts, target, through };
}

/** An encapsulated request of raw Binary HTTP bytes, and the opener of its answer's raw bytes. */
async function raw(target: GatewayTarget, message: Uint8Array) {
  const { encapsulated, context } = await encapsulateRequest(target.config, message);
  return { encapsulated, open: (bytes: Uint8Array) => decapsulateResponse(context, bytes) };
}

Deno.test(
  "GET /.well-known/ohttp-gateway answers one key configuration of the one suite",
  withKv(async (kv) => {
    const { app } = await gatewayTest(kv);
    const res = await app.request(`${ORIGIN}${KEYS_PATH}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/ohttp-keys");
    const configs = parseKeyConfigs(new Uint8Array(await res.arrayBuffer()));
    assert.equal(configs.length, 1);
    assert.equal(configs[0].kemId, 0x0020);
    assert.deepEqual(configs[0].suites, [{ kdfId: 1, aeadId: 1 }]);
  }),
);

Deno.test(
  "a read through the gateway answers what a direct read does, padded, 200 outside",
  withKv(async (kv) => {
    const { app, target, post, through } = await gatewayTest(kv);
    const direct = await (await app.request(`${ORIGIN}/api/rounds`)).json();
    const inner = await through({ method: "GET", path: "/api/rounds" });
    assert.equal(inner.status, 200);
    assert.deepEqual(inner.json, direct);
    assert.deepEqual(inner.headers, [["content-type", "application/json"]]);
    // The Binary HTTP answer itself is a multiple of 1,024 bytes, never compressed.
    const call = await raw(
      await target(),
      pad(encodeRequest({
        method: "GET",
        scheme: "http",
        authority: "localhost",
        path: "/api/block/status",
        headers: [],
        content: new Uint8Array(),
      })),
    );
    const outer = await post(call.encapsulated);
    const message = await call.open(new Uint8Array(await outer.arrayBuffer()));
    assert.equal(message.length % 1024, 0);
    assert.equal(decodeResponse(message).status, 200);
    // An inner 404 is still a 200 outside.
    const missing = await through({ method: "GET", path: `/api/tag/${"0".repeat(64)}` });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.error.code, "unknown_tag");
  }),
);

Deno.test(
  "a key registration and a vote through the gateway are accepted, the vote at its round's length",
  withKv(async (kv) => {
    const { target, post, through } = await gatewayTest(kv);
    const voters = makeVoters(3);
    for (const voter of voters) {
      const made = await through({
        method: "POST",
        path: "/api/pki/key",
        body: JSON.stringify({ key: voter.key }),
      });
      assert.equal(made.status, 201);
    }
    const vote = signedVote(voters[0], ringFor(voters[0], voters, 3), "Yes");
    // Round 1, the election, is free text: its votes are padded for 1,000 code points.
    const bytes = voteLength(await target(), "/api/vote", []);
    assert.equal(bytes % 1024, 0);
    assert.ok(bytes >= 9 * 1024, `a 64-member vote is over 9 KiB, got ${bytes}`);
    // Padded only to a multiple of 1,024, the vote would say its ring and choice: refused.
    const short = await sealCall(await target(), {
      method: "POST",
      path: "/api/vote",
      body: JSON.stringify(vote),
    });
    const refused = await post(short.encapsulated);
    assert.equal(refused.status, 400);
    assert.match((await refused.json()).error.message, new RegExp(`${bytes} bytes`));
    // Nor may a vote escape its round's length by another spelling of its path.
    for (const path of ["/api/vot%65", "/api/rounds/01/vote", "/api/vote?a=b"]) {
      const other = await sealCall(await target(), {
        method: "POST",
        path,
        body: JSON.stringify(vote),
      });
      const res = await post(other.encapsulated);
      assert.equal(res.status, 400, path);
    }
    const accepted = await through({
      method: "POST",
      path: "/api/vote",
      body: JSON.stringify(vote),
    }, bytes);
    assert.equal(accepted.status, 202);
    const again = await through(
      { method: "POST", path: "/api/vote", body: JSON.stringify(vote) },
      bytes,
    );
    assert.equal(again.status, 409);
  }),
);

Deno.test(
  "the answer to a read of a vote's proof has one length, whatever its ring and choice",
  withKv(async (kv) => {
    const { store, target, through } = await gatewayTest(kv);
    const voters = makeVoters(12);
    for (const voter of voters) {
      const body = JSON.stringify({ key: voter.key });
      assert.equal((await through({ method: "POST", path: "/api/pki/key", body })).status, 201);
    }
    const bytes = voteLength(await target(), "/api/vote", []);
    const cast = [
      signedVote(voters[0], ringFor(voters[0], voters, 2), "No"),
      signedVote(voters[1], ringFor(voters[1], voters, 12), "Abstain"),
      signedVote(voters[2], ringFor(voters[2], voters, 7), "x".repeat(900)),
    ];
    const ids = [];
    for (const vote of cast) {
      const body = JSON.stringify(vote);
      const res = await through({ method: "POST", path: "/api/vote", body }, bytes);
      assert.equal(res.status, 202);
      ids.push(res.json);
    }
    const lengths = new Set<number>();
    // Read before its block is sealed, the refusal has the same length.
    const early = await through({
      method: "GET",
      path: `/api/block/id/${ids[0].blockId}/vote/${ids[0].voteId}`,
    });
    assert.equal(early.status, 404);
    lengths.add(early.length);
    await sealNextBlock(store, Date.now());
    for (const { voteId, blockId } of ids) {
      const proof = await through({
        method: "GET",
        path: `/api/block/id/${blockId}/vote/${voteId}`,
      });
      assert.equal(proof.status, 200);
      lengths.add(proof.length);
    }
    assert.equal(voteProofLength(), 23_552, "the length protocol §4.11 states");
    assert.deepEqual([...lengths], [voteProofLength()], `proof answers of ${[...lengths]} bytes`);
  }),
);

Deno.test(
  "refusals are 4xx, never 5xx: key id, garbage, paths, headers, authority, padding",
  withKv(async (kv) => {
    const { target, post } = await gatewayTest(kv);
    const t = await target();
    const code = async (res: Response) => [res.status, (await res.json()).error.code];
    const request = (over: Partial<Parameters<typeof encodeRequest>[0]> = {}) =>
      pad(encodeRequest({
        method: "GET",
        scheme: "http",
        authority: "localhost",
        path: "/api/rounds",
        headers: [],
        content: new Uint8Array(),
        ...over,
      }));
    const send = async (message: Uint8Array) => post((await raw(t, message)).encapsulated);

    const otherKey = (await raw(t, request())).encapsulated;
    otherKey[0] ^= 0xff;
    assert.deepEqual(await code(await post(otherKey)), [400, "ohttp_key"]);
    const flipped = (await raw(t, request())).encapsulated;
    flipped[flipped.length - 3] ^= 1;
    assert.deepEqual(await code(await post(flipped)), [400, "bad_encapsulation"]);
    assert.deepEqual(await code(await post(new Uint8Array(5))), [400, "bad_encapsulation"]);
    assert.deepEqual(await code(await post(new Uint8Array(0))), [400, "bad_encapsulation"]);
    assert.deepEqual(await code(await post(otherKey, "application/json")), [
      415,
      "unsupported_media_type",
    ]);
    // Opens, but is not Binary HTTP, or breaks the gateway's rules.
    assert.deepEqual(await code(await send(new TextEncoder().encode("GET /api/rounds"))), [
      400,
      "invalid_request",
    ]);
    for (
      const path of [
        "/board",
        "/",
        "/api/ohttp",
        "/api/ohttp/key",
        "/api/../board",
        "/api//rounds",
        "api/rounds",
        // The router decodes percent escapes: these would name the gateway or a vote unseen.
        "/api/ohtt%70",
        "/api/ohtt%70/key",
        "/api/r%6Funds",
      ]
    ) {
      assert.deepEqual(await code(await send(request({ path }))), [400, "invalid_request"], path);
    }
    assert.deepEqual(await code(await send(request({ authority: "elsewhere.example" }))), [
      400,
      "invalid_request",
    ]);
    assert.deepEqual(await code(await send(request({ scheme: "ftp" }))), [400, "invalid_request"]);
    assert.deepEqual(await code(await send(request({ method: "DELETE" }))), [
      400,
      "invalid_request",
    ]);
    assert.deepEqual(await code(await send(request({ headers: [["cookie", "a=b"]] }))), [
      400,
      "invalid_request",
    ]);
    const write = { method: "POST", path: "/api/pki/key", content: new TextEncoder().encode("{}") };
    for (
      const headers of [
        [],
        [["content-type", "application/json"], ["x-forwarded-for", "10.0.0.7"]],
        [["content-type", "text/plain"]],
      ] as const
    ) {
      assert.deepEqual(await code(await send(request({ ...write, headers }))), [
        400,
        "invalid_request",
      ]);
    }
    const unpadded = encodeRequest({
      method: "GET",
      scheme: "http",
      authority: "localhost",
      path: "/api/rounds",
      headers: [],
      content: new Uint8Array(),
    });
    assert.deepEqual(await code(await send(unpadded)), [400, "invalid_request"]);
  }),
);

Deno.test(
  "the presenter replaces the key: the old one is deleted and its ciphertexts no longer open",
  withKv(async (kv) => {
    const { app, target, post, through } = await gatewayTest(kv);
    const before = await target();
    const { privateKey: oldPrivate } = (await createGatewayKeys(kv).then((k) => k.current())).key;
    const recorded = (await raw(
      before,
      pad(encodeRequest({
        method: "GET",
        scheme: "http",
        authority: "localhost",
        path: "/api/rounds",
        headers: [],
        content: new Uint8Array(),
      })),
    )).encapsulated;
    assert.equal((await post(recorded)).status, 200);

    const rotate = (auth?: string) =>
      app.request(`${ORIGIN}/api/ohttp/key`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(auth ? { authorization: auth } : {}) },
      });
    assert.equal((await rotate()).status, 401);
    assert.equal((await rotate("Bearer wrong-token-0123456789")).status, 401);
    const res = await rotate(`Bearer ${PRESENTER_TOKEN}`);
    assert.equal(res.status, 200);
    const answer = await res.json();
    const after = await target();
    assert.equal(answer.keyId, after.config.keyId);
    assert.notEqual(after.config.keyId, before.config.keyId);
    assert.match(answer.sha256, /^[A-Za-z0-9_-]{43}$/);

    const refused = await post(recorded);
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).error.code, "ohttp_key");
    // No entry of the database holds the old private key any more.
    const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    for await (const entry of kv.list({ prefix: [] })) {
      const value = entry.value as Record<string, unknown>;
      for (const field of Object.values(value ?? {})) {
        if (field instanceof Uint8Array) assert.notEqual(hex(field), hex(oldPrivate));
      }
    }
    assert.equal((await through({ method: "GET", path: "/api/rounds" })).status, 200);
    // Another process over the same database serves the same, new key.
    const other = await createGatewayKeys(kv);
    assert.deepEqual((await other.current()).key.config, after.config);
  }),
);
