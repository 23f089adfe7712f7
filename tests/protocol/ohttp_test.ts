// RFC 9458: key configurations, and the Appendix A exchange reproduced byte for byte (the request
// with its ephemeral key, the response with its nonce); failures come back as typed results.
import assert from "node:assert/strict";
import { bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import { decodeRequest, decodeResponse, encodeRequest } from "../../lib/protocol/bhttp.ts";
import {
  decapsulateRequest,
  decapsulateResponse,
  encapsulateRequest,
  encapsulateResponse,
  encodeKeyConfig,
  encodeKeyConfigs,
  type GatewayKey,
  generateGatewayKey,
  keyConfigsHash,
  OhttpError,
  parseKeyConfig,
  parseKeyConfigs,
} from "../../lib/protocol/ohttp.ts";

// RFC 9458 Appendix A.
const A = {
  skR: "3c168975674b2fa8e465970b79c8dcf09f1c741626480bd4c6162fc5b6a98e1a",
  config:
    "01002031e1f05a740102115220e9af918f738674aec95f54db6e04eb705aae8e79815500080001000100010003",
  request: "00034745540568747470730b6578616d706c652e636f6d012f",
  skE: "bc51d5e930bda26589890ac7032f70ad12e4ecb37abb1b65b1256c9c48999c73",
  pkE: "4b28f881333e7c164ffc499ad9796f877f4e1051ee6d31bad19dec96c208b472",
  encapsulatedRequest: "010020000100014b28f881333e7c164ffc499ad9796f877f4e1051ee6d31bad1" +
    "9dec96c208b4726374e469135906992e1268c594d2a10c695d858c40a026e7965e7d86b83dd440b2c0185204b4d63525",
  response: "0140c8",
  responseNonce: "c789e7151fcba46158ca84b04464910d",
  encapsulatedResponse: "c789e7151fcba46158ca84b04464910d86f9013e404feea014e7be4a441f234f857fbd",
};
const h = (hex: string) => hexToBytes(hex);
const gatewayKey: GatewayKey = { config: parseKeyConfig(h(A.config)), privateKey: h(A.skR) };

Deno.test("RFC 9458 Appendix A: the key configuration parses and encodes to the same bytes", () => {
  const config = parseKeyConfig(h(A.config));
  assert.equal(config.keyId, 1);
  assert.equal(config.kemId, 0x0020);
  assert.deepEqual(config.suites, [{ kdfId: 1, aeadId: 1 }, { kdfId: 1, aeadId: 3 }]);
  assert.equal(bytesToHex(encodeKeyConfig(config)), A.config);
  const list = encodeKeyConfigs([config]);
  assert.equal(bytesToHex(list), "002d" + A.config);
  assert.deepEqual(parseKeyConfigs(list), [config]);
});

Deno.test("RFC 9458 Appendix A: the request and response Binary HTTP messages", () => {
  const request = decodeRequest(h(A.request));
  assert.deepEqual(
    [request.method, request.scheme, request.authority, request.path],
    ["GET", "https", "example.com", "/"],
  );
  assert.equal(bytesToHex(encodeRequest(request)), A.request);
  assert.equal(decodeResponse(h(A.response)).status, 200);
});

Deno.test("RFC 9458 Appendix A: encapsulation with the vector's ephemeral key, byte for byte", async () => {
  const { encapsulated, context } = await encapsulateRequest(gatewayKey.config, h(A.request), {
    privateKey: h(A.skE),
    publicKey: h(A.pkE),
  });
  assert.equal(bytesToHex(encapsulated), A.encapsulatedRequest);
  const opened = await decapsulateRequest(gatewayKey, encapsulated);
  assert.equal(bytesToHex(opened.request), A.request);
  assert.deepEqual(opened.context, context);
  const sealed = await encapsulateResponse(opened.context, h(A.response), h(A.responseNonce));
  assert.equal(bytesToHex(sealed), A.encapsulatedResponse);
  assert.equal(
    bytesToHex(await decapsulateResponse(context, h(A.encapsulatedResponse))),
    A.response,
  );
});

Deno.test("the gateway opens the vector's encapsulated request with skR alone", async () => {
  const { request } = await decapsulateRequest(gatewayKey, h(A.encapsulatedRequest));
  assert.equal(bytesToHex(request), A.request);
});

Deno.test("refusals are typed: key id, suite, length, tampering", async () => {
  const kind = async (bytes: Uint8Array, key = gatewayKey) => {
    try {
      await decapsulateRequest(key, bytes);
      return "opened";
    } catch (error) {
      assert.ok(error instanceof OhttpError);
      return error.kind;
    }
  };
  const good = h(A.encapsulatedRequest);
  const otherId = good.slice();
  otherId[0] = 2;
  assert.equal(await kind(otherId), "key-id");
  const otherAead = good.slice();
  otherAead[6] = 3;
  assert.equal(await kind(otherAead), "suite");
  assert.equal(await kind(good.slice(0, 40)), "malformed");
  for (const at of [10, 45, good.length - 1]) {
    const flipped = good.slice();
    flipped[at] ^= 1;
    assert.equal(await kind(flipped), "decrypt", `byte ${at}`);
  }
  const other = await generateGatewayKey(1);
  assert.equal(await kind(good, other), "decrypt");
  const { context } = await decapsulateRequest(gatewayKey, good);
  const response = h(A.encapsulatedResponse);
  response[response.length - 1] ^= 1;
  await assert.rejects(decapsulateResponse(context, response), OhttpError);
});

Deno.test("a fresh key round-trips a request and a response, each with fresh randomness", async () => {
  const key = await generateGatewayKey(7);
  const message = new TextEncoder().encode("hello");
  const a = await encapsulateRequest(key.config, message);
  const b = await encapsulateRequest(key.config, message);
  assert.notDeepEqual(a.encapsulated, b.encapsulated);
  const opened = await decapsulateRequest(key, a.encapsulated);
  assert.deepEqual(opened.request, message);
  const sealed = await encapsulateResponse(opened.context, message);
  assert.deepEqual(await decapsulateResponse(a.context, sealed), message);
  await assert.rejects(decapsulateResponse(b.context, sealed), OhttpError);
});

Deno.test("key configuration lists refuse what is not exact, and hash to base64url", () => {
  assert.throws(() => parseKeyConfigs(new Uint8Array(0)), RangeError);
  assert.throws(() => parseKeyConfigs(h("002d" + A.config + "00")), RangeError);
  assert.throws(() => parseKeyConfigs(h("002e" + A.config)), RangeError);
  assert.throws(() => parseKeyConfig(h(A.config.replace(/^010020/, "010010"))), RangeError);
  assert.match(keyConfigsHash(h(A.config)), /^[A-Za-z0-9_-]{43}$/);
});
