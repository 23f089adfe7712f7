// Every error answer of protocol §4 comes out of one path, the app's error handler: an unknown
// route, an unknown built file, a body over the limit, each refusal code and a 500 carry the same
// headers and the same body shape, `{"error": {"code", "message"}}`.
import assert from "node:assert/strict";
import { ErrorBody } from "../../lib/protocol/schemas.ts";
import { createApp } from "../../server/app.ts";
import { ApiError, busy, ERROR_STATUS, type ErrorCode } from "../../server/errors.ts";
import { createStore } from "../../server/store/mod.ts";
import { createInProcessVerifier } from "../../server/verifier/in_process.ts";
import { makeVoters, ringFor, signedVote } from "../helpers/ledger_fixtures.ts";

const JSON_TYPE = { "content-type": "application/json" };
const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: JSON_TYPE,
  body: JSON.stringify(body),
});

/**
 * Header names and values of `res`, without the length, which follows the message, and `Vary`,
 * which the compression of page and bundle URLs adds whatever answers there.
 */
function headersOf(res: Response): [string, string][] {
  return [...res.headers].filter(([name]) => name !== "content-length" && name !== "vary").sort();
}

Deno.test("every error answer has the same headers and shape as the error type's own", async () => {
  const kv = await Deno.openKv(":memory:");
  const broken = await Deno.openKv(":memory:");
  try {
    const app = createApp({ store: await createStore(kv) });
    const brokenApp = createApp({ store: await createStore(broken) });
    broken.close();
    const [a, b, c, outsider] = makeVoters(4);
    for (const v of [a, b, c]) {
      assert.equal((await app.request("/api/pki/key", json({ key: v.key }))).status, 201);
    }
    const vote = signedVote(a, ringFor(a, [a, b, c], 3), "Yes");
    const accepted = await app.request("/api/vote", json(vote));
    assert.equal(accepted.status, 202);
    const { voteId } = await accepted.json();
    const unsent = signedVote(b, ringFor(b, [a, b, c], 3), "Yes");

    const cases: [string, number, string, string, RequestInit?][] = [
      ["unknown route", 404, "not_found", "/api/nothing"],
      ["unknown built file", 404, "not_found", "/static/build/none.js"],
      ["body over 64 KiB", 413, "body_too_large", "/api/vote", json("x".repeat(70_000))],
      ["body not JSON", 400, "invalid_request", "/api/vote", {
        method: "POST",
        headers: JSON_TYPE,
        body: "{",
      }],
      ["body not sent as JSON", 415, "unsupported_media_type", "/api/vote", {
        method: "POST",
        body: JSON.stringify(vote),
      }],
      ["bad key", 400, "invalid_key", "/api/pki/key", json({ key: "zz" })],
      ["key again", 409, "duplicate_key", "/api/pki/key", json({ key: a.key })],
      ["no such key id", 404, "unknown_key", "/api/pki/key/id/99"],
      ["no such block", 404, "unknown_block", "/api/block/hash/id/9"],
      ["no such vote", 404, "unknown_vote", "/api/block/id/1/vote/AAAAAAAAAAAAAAAAAAAAAA"],
      ["vote not sealed", 404, "block_not_sealed", `/api/block/id/1/vote/${voteId}`],
      ["no such tag", 404, "unknown_tag", `/api/tag/${"0".repeat(64)}`],
      ["no such lie of the lens", 404, "unknown_lie", "/api/lens/nothing/block/status"],
      // b has not voted: its signature over another payload reaches the ring check.
      [
        "changed payload",
        400,
        "invalid_signature",
        "/api/vote",
        json({ ...unsent, payload: "No" }),
      ],
      [
        "unregistered ring member",
        403,
        "unregistered_key",
        "/api/vote",
        json(signedVote(outsider, ringFor(outsider, [a, b, outsider], 3), "Yes")),
      ],
      ["replayed vote", 409, "duplicate_tag", "/api/vote", json(vote)],
      [
        "payload too long",
        413,
        "payload_too_large",
        "/api/vote",
        json({ ...vote, payload: "x".repeat(1001) }),
      ],
    ];
    const reference = headersOf(new ApiError(404, "not_found", "Reference").getResponse());
    const answers: [string, Response][] = [];
    for (const [what, status, code, path, init] of cases) {
      const res = await app.request(path, init);
      const body = await res.clone().json();
      assert.equal(res.status, status, `${what}: ${JSON.stringify(body)}`);
      assert.equal(body.error.code, code, what);
      answers.push([what, res]);
    }
    const original = console.error;
    console.error = () => {};
    try {
      answers.push(["unexpected failure", await brokenApp.request("/api/tally")]);
    } finally {
      console.error = original;
    }

    const first = headersOf(answers[0][1]);
    for (const [what, res] of answers) {
      const headers = headersOf(res);
      assert.deepEqual(headers, first, `${what}: the same headers as every other error`);
      assert.equal(res.headers.get("content-type"), "application/json", what);
      for (const [name, value] of reference) {
        assert.equal(res.headers.get(name), value, `${what}: ${name} as the error type sets it`);
      }
      const body = await res.json();
      assert.ok(ErrorBody.safeParse(body).success, what);
      const fields = Object.keys(body.error).sort();
      const expected = body.error.code === "duplicate_key"
        ? ["code", "id", "message"]
        : ["code", "message"];
      assert.deepEqual(Object.keys(body), ["error"], what);
      assert.equal(res.status, ERROR_STATUS[body.error.code as ErrorCode], `${what}: status`);
      assert.deepEqual(fields, expected, what);
      assert.doesNotMatch(body.error.message, /\.$/, `${what}: no trailing period`);
    }
  } finally {
    kv.close();
  }
});

Deno.test("503 busy carries Retry-After, through the same error handler", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    // A verifier that registers keys as usual but is saturated when a vote arrives.
    const verifier = createInProcessVerifier();
    verifier.verify = () => Promise.reject(busy(2));
    const app = createApp({ store: await createStore(kv), verifier });
    const [a, b] = makeVoters(2);
    for (const v of [a, b]) await app.request("/api/pki/key", json({ key: v.key }));
    const res = await app.request("/api/vote", json(signedVote(a, [a, b], "Yes")));
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("retry-after"), "2");
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.deepEqual((await res.json()).error.code, "busy");
  } finally {
    kv.close();
  }
});
