// RFC 9292 known-length messages: the RFC's Figure 8 request, truncation and padding (§3.8), and
// the strict refusals of what Ringvote never sends.
import assert from "node:assert/strict";
import { bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import {
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  MAX_FIELDS,
  pad,
  PAD_BLOCK,
} from "../../lib/protocol/bhttp.ts";

// RFC 9292 §5.1 Figure 8: GET https:///hello.txt with three header fields, known length.
const FIG8 =
  "0003474554056874747073000a2f68656c6c6f2e747874406c0a757365722d6167656e74346375726c2f37" +
  "2e31362e33206c69626375726c2f372e31362e33204f70656e53534c2f302e392e376c207a6c69622f312e322e33" +
  "04686f73740f7777772e6578616d706c652e636f6d0f6163636570742d6c616e677561676506656e2c206d690000";
// Figure 9: the same request, indeterminate-length.
const FIG9_START = "0203474554056874747073000a2f68656c6c6f2e747874";

Deno.test("RFC 9292 Figure 8 decodes, and encodes again with its empty tail truncated", () => {
  const request = decodeRequest(hexToBytes(FIG8));
  assert.deepEqual(
    [request.method, request.scheme, request.authority, request.path],
    ["GET", "https", "", "/hello.txt"],
  );
  assert.deepEqual(request.headers, [
    ["user-agent", "curl/7.16.3 libcurl/7.16.3 OpenSSL/0.9.7l zlib/1.2.3"],
    ["host", "www.example.com"],
    ["accept-language", "en, mi"],
  ]);
  assert.equal(request.content.length, 0);
  // §3.8: empty content and trailers may be left out; padding's zeros read as them.
  assert.equal(bytesToHex(encodeRequest(request)), FIG8.slice(0, -4));
  assert.deepEqual(decodeRequest(pad(encodeRequest(request))), request);
});

Deno.test("indeterminate-length messages are refused", () => {
  assert.throws(() => decodeRequest(hexToBytes(FIG9_START)), /indeterminate/);
  assert.throws(() => decodeResponse(hexToBytes("03")), /indeterminate/);
  assert.throws(() => decodeResponse(hexToBytes(FIG8)), /framing indicator 0/);
});

Deno.test("a request with content round-trips through padding to a multiple of 1,024", () => {
  const content = new TextEncoder().encode(JSON.stringify({ key: "ab".repeat(32) }));
  const request = {
    method: "POST",
    scheme: "http",
    authority: "127.0.0.1:8000",
    path: "/api/pki/key",
    headers: [["content-type", "application/json"]] as const,
    content,
  };
  for (const minLength of [0, 3000]) {
    const padded = pad(encodeRequest(request), PAD_BLOCK, minLength);
    assert.equal(padded.length, minLength === 0 ? 1024 : 3072);
    assert.deepEqual(decodeRequest(padded), request);
  }
  const big = { ...request, content: new Uint8Array(1500) };
  assert.equal(pad(encodeRequest(big)).length, 2048);
  const response = {
    status: 404,
    headers: [["content-type", "application/json"]] as const,
    content,
  };
  const sealed = pad(encodeResponse(response));
  assert.equal(sealed.length, 1024);
  assert.deepEqual(decodeResponse(sealed), response);
  assert.equal(
    bytesToHex(encodeResponse({ status: 200, headers: [], content: new Uint8Array() })),
    "0140c8",
  );
});

Deno.test("strict decoding: padding, lengths, field names, statuses, trailers", () => {
  const good = pad(encodeRequest({
    method: "GET",
    scheme: "https",
    authority: "a",
    path: "/",
    headers: [],
    content: new Uint8Array(),
  }));
  const dirty = good.slice();
  dirty[good.length - 1] = 1;
  assert.throws(() => decodeRequest(dirty), /non-zero/);
  // A field cut short, a length beyond the message, a lower-case method.
  assert.throws(() => decodeRequest(hexToBytes("0003474554")), /ends inside/);
  assert.throws(() => decodeRequest(hexToBytes("0003474554056874747073000a2f")), /ends inside/);
  assert.throws(() => decodeRequest(hexToBytes("000367657400000000")), /upper-case/);
  // Upper-case field name "Host".
  assert.throws(
    () => decodeRequest(hexToBytes("0003474554000000" + "07" + "04486f7374" + "0161")),
    /lower case/,
  );
  assert.throws(() => encodeResponse({ status: 101, headers: [], content: new Uint8Array() }));
  assert.throws(() => decodeResponse(hexToBytes("014064")), /not final/);
  // A trailer field is refused.
  assert.throws(() => decodeResponse(hexToBytes("0140c800000401610162")), /trailer/);
  const many = Array.from({ length: MAX_FIELDS + 1 }, (_, i) => [`x${i}`, "v"] as const);
  const tooMany = encodeResponse({ status: 200, headers: many, content: new Uint8Array() });
  assert.throws(() => decodeResponse(tooMany), /field lines/);
  assert.throws(() => decodeRequest(new Uint8Array(200 * 1024)), /longer than/);
});
