// The attack corpus through HTTP (protocol §2 and §4): case-changed hex for used tags and
// registered keys, replays, wrong types in every field, malformed and oversized bodies, valid
// writes without the JSON content type (as a cross-site page would send them), hostile path
// parameters. Each answer carries its 4xx code, the security headers and no stack trace,
// and leaves every KV entry exactly as it was. The per-check verifier rejections are in
// tests/server/api/vote_test.ts; this file covers what reaches the server around them.
import assert from "node:assert/strict";
import type { VoteSubmission } from "../../lib/protocol/schemas.ts";
import { createApp } from "../../server/app.ts";
import { testVerifier } from "../helpers/test_verifier.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from "../../server/security.ts";
import { createStore } from "../../server/store/mod.ts";
import {
  call,
  dumpKv,
  makeVoters,
  ringFor,
  signedVote,
  type TestVoter,
} from "../helpers/ledger_fixtures.ts";

/** A ledger with block 1 sealed (one vote) and one vote waiting in open block 2. */
async function ledger() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const app = createApp({ store, verifier: testVerifier });
  const voters = makeVoters(5);
  for (const v of voters) await store.registerKey(v.key);
  const sealedVote = signedVote(voters[0], ringFor(voters[0], voters, 3), "Yes");
  const sealed = await call(app, "POST", "/api/vote", sealedVote);
  assert.equal(sealed.status, 202);
  await sealNextBlock(store, Date.now());
  const pendingVote = signedVote(voters[1], ringFor(voters[1], voters, 3), "No");
  const pending = await call(app, "POST", "/api/vote", pendingVote);
  assert.equal(pending.status, 202);
  assert.equal(pending.body.blockId, 2);
  return {
    kv,
    app,
    voters,
    sealedVote,
    pendingVote,
    sealedId: sealed.body.voteId as string,
    pendingId: pending.body.voteId as string,
  };
}

/** Flips the case of every other hex letter: mixed case, same bytes. */
function mixedCase(hex: string): string {
  let n = 0;
  return hex.replace(/[a-f]/g, (c) => (n++ % 2 === 0 ? c.toUpperCase() : c));
}

/** Asserts what every answer must show: the security headers and no trace of the server's code. */
function assertHygiene(res: Response, text: string, what: string) {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    assert.equal(res.headers.get(name), value, `${what}: header ${name}`);
  }
  assert.doesNotMatch(text, /\bat .*:\d+:\d+|file:\/\/|\.ts:\d+|Error:/, `${what}: ${text}`);
}

type Case = {
  desc: string;
  method: string;
  path: string;
  body?: unknown;
  /** The Content-Type of a request with a body: `application/json` unless given; null for none. */
  type?: string | null;
  status: number;
  code: string;
};

/** The Content-Type of every write the tests mean to be taken. */
const JSON_TYPE = { "content-type": "application/json" };

function voteCases(
  voters: TestVoter[],
  sealedVote: VoteSubmission,
  pendingVote: VoteSubmission,
): Case[] {
  const [v0, v1, v2] = voters;
  const vote = (desc: string, body: unknown, status: number, code: string): Case => ({
    desc,
    method: "POST",
    path: "/api/vote",
    body,
    status,
    code,
  });
  const revote = signedVote(v0, ringFor(v0, voters, 4, 2), "No, after all");
  // A ring other than the two on the ledger (v2, v3, v4).
  const fresh = signedVote(v2, ringFor(v2, voters, 3, 2), "Maybe");
  const wire = JSON.parse(fresh.signature);
  const upperWire = JSON.stringify({
    c0: wire.c0.toUpperCase(),
    r: wire.r,
    I: wire.I,
    ring: wire.ring,
  });
  const [stranger] = makeVoters(1);
  const bigRing = makeVoters(200).map((v) => v.key);
  const fields = ["publicKeys", "signature", "tag", "payload"] as const;
  const wrongValues: unknown[] = [null, 0, -1, 1.5, true, [], {}, "x", [1], [null]];
  return [
    vote("a replay of the sealed vote", sealedVote, 409, "duplicate_tag"),
    vote("a replay of the pending vote", pendingVote, 409, "duplicate_tag"),
    vote("a re-vote: new ring (4), new payload", revote, 409, "duplicate_tag"),
    vote(
      "the used tag in uppercase",
      { ...revote, tag: revote.tag.toUpperCase() },
      400,
      "invalid_request",
    ),
    vote(
      "the used tag in mixed case",
      { ...revote, tag: mixedCase(revote.tag) },
      400,
      "invalid_request",
    ),
    vote(
      "registered ring keys in uppercase",
      { ...fresh, publicKeys: fresh.publicKeys.map((k) => k.toUpperCase()) },
      400,
      "invalid_request",
    ),
    vote(
      "a signature scalar in uppercase hex",
      { ...fresh, signature: upperWire },
      400,
      "invalid_signature",
    ),
    vote(
      "publicKeys another ring than signature.ring",
      { ...fresh, publicKeys: sealedVote.publicKeys },
      400,
      "invalid_request",
    ),
    vote(
      "publicKeys reversed",
      { ...fresh, publicKeys: [...fresh.publicKeys].reverse() },
      400,
      "invalid_request",
    ),
    vote(
      "tag of another vote than signature.I",
      { ...fresh, tag: sealedVote.tag },
      400,
      "invalid_request",
    ),
    vote(
      "a ring with an unregistered key",
      signedVote(v2, [v0, v1, stranger, v2], "Maybe"),
      403,
      "unregistered_key",
    ),
    vote(
      "a ring signed entirely by strangers",
      signedVote(stranger, [stranger, ...makeVoters(2)], "Maybe"),
      403,
      "unregistered_key",
    ),
    vote(
      "a ring of 200 members (protocol §2 allows 64)",
      {
        ...fresh,
        publicKeys: bigRing,
        signature: JSON.stringify({ ...wire, r: bigRing, ring: bigRing }),
      },
      400,
      "invalid_signature",
    ),
    vote(
      "a ring of 1,000 members: over the body limit",
      { ...fresh, publicKeys: Array(1000).fill(fresh.publicKeys[0]) },
      413,
      "body_too_large",
    ),
    vote(
      "a payload of 5,000 characters",
      { ...fresh, payload: "x".repeat(5000) },
      413,
      "payload_too_large",
    ),
    vote(
      "a payload of 64 KiB + 1",
      { ...fresh, payload: "x".repeat(64 * 1024 + 1) },
      413,
      "body_too_large",
    ),
    vote("an empty body", "", 400, "invalid_request"),
    vote("a JSON array", "[]", 400, "invalid_request"),
    vote("a JSON string", '"vote"', 400, "invalid_request"),
    vote("a JSON number", "202", 400, "invalid_request"),
    vote("truncated JSON", JSON.stringify(fresh).slice(0, -1), 400, "invalid_request"),
    vote("JSON with a trailing comma", '{"tag": "00",}', 400, "invalid_request"),
    vote("a NUL byte", "\u0000", 400, "invalid_request"),
    vote("20,000 nested arrays", "[".repeat(20_000) + "]".repeat(20_000), 400, "invalid_request"),
    vote("__proto__ smuggling", `{"__proto__": ${JSON.stringify(fresh)}}`, 400, "invalid_request"),
    ...fields.flatMap((field) =>
      wrongValues.map((value) =>
        vote(
          `${field} = ${JSON.stringify(value)}`,
          { ...fresh, [field]: value },
          400,
          // A string of the right type reaches the verifier: not the wire form, or not signed.
          typeof value === "string" && (field === "signature" || field === "payload")
            ? "invalid_signature"
            : "invalid_request",
        )
      )
    ),
    ...fields.map((field) => {
      const { [field]: _, ...rest } = fresh;
      return vote(`${field} missing`, rest, 400, "invalid_request");
    }),
    vote(
      'signature = "x" (not the wire form)',
      { ...fresh, signature: "x" },
      400,
      "invalid_signature",
    ),
  ];
}

function keyCases(voters: TestVoter[]): Case[] {
  const key = (desc: string, body: unknown, status: number, code: string): Case => ({
    desc,
    method: "POST",
    path: "/api/pki/key",
    body,
    status,
    code,
  });
  const registered = voters[3].key;
  return [
    key("a registered key again", { key: registered }, 409, "duplicate_key"),
    key("a registered key in uppercase", { key: registered.toUpperCase() }, 400, "invalid_key"),
    key("a registered key in mixed case", { key: mixedCase(registered) }, 400, "invalid_key"),
    key("a registered key with 0x", { key: `0x${registered.slice(2)}` }, 400, "invalid_key"),
    key("a key with a trailing newline", { key: `${registered}\n` }, 400, "invalid_key"),
    ...[null, 7, true, [], {}, [registered]].map((value) =>
      key(`key = ${JSON.stringify(value)}`, { key: value }, 400, "invalid_key")
    ),
    ...[7, true, [], {}, "n".repeat(201)].map((value) =>
      key(
        `name = ${JSON.stringify(value).slice(0, 20)}`,
        { key: makeVoters(1)[0].key, name: value },
        400,
        "invalid_request",
      )
    ),
    key("malformed JSON", "{key:", 400, "invalid_request"),
    key("an array of keys", [{ key: registered }], 400, "invalid_request"),
  ];
}

/**
 * Valid writes sent as a page elsewhere could make a visitor's browser send them, with no CORS
 * preflight: a form's or a `text/plain` body, or no Content-Type at all.
 */
function crossSiteCases(voters: TestVoter[]): Case[] {
  const [newcomer] = makeVoters(1);
  const vote = signedVote(voters[2], ringFor(voters[2], voters, 3, 2), "Cross-site");
  const simpleTypes = [
    "text/plain",
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/jsonx",
    "",
    null,
  ];
  return simpleTypes.flatMap((type) =>
    [["/api/pki/key", { key: newcomer.key }], ["/api/vote", vote]].map(([path, body]) => ({
      desc: `a valid POST ${path} sent with ${type === null ? "no Content-Type" : `"${type}"`}`,
      method: "POST",
      path: path as string,
      body,
      type,
      status: 415,
      code: "unsupported_media_type",
    }))
  );
}

function pathCases(sealedId: string, pendingId: string): Case[] {
  const get = (path: string, status: number, code: string): Case => ({
    desc: `GET ${path}`,
    method: "GET",
    path,
    status,
    code,
  });
  const notInteger = ["-1", "1.5", "1e3", "0x10", "01", "%201", "abc", "99999999999999999999"];
  const traversal = [
    "..%2F..%2Fdeno.json",
    "%2e%2e%2f%2e%2e%2fmain.ts",
    "..%5C..%5Cmain.ts",
    "%00",
  ];
  return [
    ...notInteger.flatMap((n) => [
      get(`/api/block/hash/id/${n}`, 400, "invalid_request"),
      get(`/api/block/id/${n}/vote/${sealedId}`, 400, "invalid_request"),
      get(`/api/block/id/${n}/votes`, 400, "invalid_request"),
      get(`/api/pki/key/id/${n}`, 400, "invalid_request"),
      get(`/api/pki/key/offset/${n}/limit/1`, 400, "invalid_request"),
      get(`/api/pki/key/offset/0/limit/${n}`, 400, "invalid_request"),
      get(`/api/blocks?from=${n}`, 400, "invalid_request"),
      get(`/api/blocks?limit=${n}`, 400, "invalid_request"),
      get(`/api/block/id/1/votes?offset=${n}`, 400, "invalid_request"),
    ]),
    get("/api/block/hash/id/9007199254740991", 404, "unknown_block"),
    get("/api/block/hash/id/9007199254740992", 400, "invalid_request"),
    get("/api/pki/key/id/0", 404, "unknown_key"),
    get("/api/pki/key/id/9007199254740991", 404, "unknown_key"),
    get("/api/pki/key/offset/0/limit/101", 400, "invalid_request"),
    get("/api/blocks?limit=101", 400, "invalid_request"),
    get("/api/block/id/9007199254740991/votes", 404, "unknown_block"),
    get(`/api/block/id/2/vote/${pendingId}`, 404, "block_not_sealed"),
    get(`/api/block/id/2/vote/${sealedId}`, 404, "unknown_vote"),
    get(`/api/block/id/9007199254740991/vote/${sealedId}`, 404, "unknown_vote"),
    ...traversal.flatMap((t) => [
      get(`/api/block/id/1/vote/${t}`, 404, "unknown_vote"),
      get(`/api/tag/${t}`, 400, "invalid_request"),
      get(`/static/build/${t}`, 404, "not_found"),
      get(`/api/pki/key/id/${t}`, 400, "invalid_request"),
    ]),
    get(`/static/build/..%2Fapp.css`, 404, "not_found"),
    get(`/api/block/id/1/vote/${sealedId.toUpperCase()}x`, 404, "unknown_vote"),
    get(`/api/block/id/1/vote/${"A".repeat(5000)}`, 404, "unknown_vote"),
  ];
}

Deno.test("the attack corpus: every hostile request answers its 4xx and changes nothing", async (t) => {
  const { kv, app, voters, sealedVote, pendingVote, sealedId, pendingId } = await ledger();
  try {
    const before = await dumpKv(kv);
    const status = (await call(app, "GET", "/api/block/status")).body;
    const cases = [
      ...voteCases(voters, sealedVote, pendingVote),
      ...keyCases(voters),
      ...crossSiteCases(voters),
      ...pathCases(sealedId, pendingId),
    ];
    for (const c of cases) {
      await t.step(`${c.status} ${c.code}: ${c.desc}`, async () => {
        const init: RequestInit = { method: c.method };
        if (c.body !== undefined) {
          init.body = typeof c.body === "string" ? c.body : JSON.stringify(c.body);
          const type = c.type === undefined ? "application/json" : c.type;
          // No Content-Type at all: a string body would get text/plain from the Request itself.
          if (type === null) init.body = new TextEncoder().encode(init.body as string);
          else init.headers = { "content-type": type };
        }
        const res = await app.request(c.path, init);
        const text = await res.text();
        assert.equal(res.status, c.status, text);
        assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
        assert.equal(JSON.parse(text).error.code, c.code, text);
        assertHygiene(res, text, c.desc);
      });
    }
    assert.deepEqual(await dumpKv(kv), before, "no refused request changed any KV entry");
    assert.deepEqual((await call(app, "GET", "/api/block/status")).body, status);
    assert.equal((await call(app, "GET", "/api/pki/key/id/1")).body.total, voters.length);
  } finally {
    kv.close();
  }
});

Deno.test("security headers on every kind of answer, and a policy without inline scripts", async (t) => {
  const { kv, app, voters } = await ledger();
  const [newcomer] = makeVoters(1);
  const newcomerKey = JSON.stringify({ key: newcomer.key });
  const answers: [string, string, RequestInit?][] = [
    ["200 JSON", "/api/block/status"],
    ["201", "/api/pki/key", { method: "POST", headers: JSON_TYPE, body: newcomerKey }],
    [
      "202",
      "/api/vote",
      {
        method: "POST",
        headers: JSON_TYPE,
        body: JSON.stringify(signedVote(voters[4], ringFor(voters[4], voters, 2), "Yes")),
      },
    ],
    ["404 unknown route", "/nothing/here"],
    ["404 static file", "/static/build/none.js"],
    ["413", "/api/vote", { method: "POST", headers: JSON_TYPE, body: "x".repeat(70_000) }],
    ["415", "/api/vote", { method: "POST", body: "{}" }],
    ["page (200, or 503 before a build)", "/"],
  ];
  try {
    for (const [what, path, init] of answers) {
      await t.step(what, async () => {
        const res = await app.request(path, init);
        assertHygiene(res, await res.text(), what);
      });
    }
    await t.step("500: headers, and nothing of the failure in the body", async () => {
      const broken = await ledger();
      broken.kv.close();
      const original = console.error;
      console.error = () => {};
      try {
        const res = await broken.app.request("/api/tally");
        const text = await res.text();
        assert.equal(res.status, 500);
        assertHygiene(res, text, "500");
        assert.deepEqual(JSON.parse(text), {
          error: { code: "internal_error", message: "Internal server error" },
        });
      } finally {
        console.error = original;
      }
    });
  } finally {
    kv.close();
  }
  const directives = new Map(
    CONTENT_SECURITY_POLICY.split("; ").map((d) => [d.split(" ")[0], d.split(" ").slice(1)]),
  );
  assert.deepEqual(directives.get("default-src"), ["'none'"]);
  assert.deepEqual(directives.get("script-src"), ["'self'"]);
  // The relay phones send through is another party's origin, named in the browser (protocol §7).
  assert.deepEqual(directives.get("connect-src"), ["'self'", "http:", "https:"]);
  assert.deepEqual(directives.get("style-src"), ["'self'"]);
  assert.ok(!CONTENT_SECURITY_POLICY.includes("unsafe-eval"));
});
