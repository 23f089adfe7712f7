// Generated requests against every endpoint (fast-check), in-process over in-memory Deno KV:
// valid votes, mutations of them, random JSON and text, hostile path segments and query strings,
// any method on any path with any content type, with the sealer ticking in between. No answer is a
// 5xx, every error is the documented JSON shape with the security headers, and the independent
// auditor passes the ledger afterwards, with every accepted vote sealed in the block it was promised.
import assert from "node:assert/strict";
import fc from "fast-check";
import { createApiClient } from "../../lib/client/api_client.ts";
import { auditLedger } from "../../lib/client/audit/audit.ts";
import { ErrorBody } from "../../lib/protocol/schemas.ts";
import { createApp } from "../../server/app.ts";
import { testVerifier } from "../helpers/test_verifier.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { SECURITY_HEADERS } from "../../server/security.ts";
import { createStore } from "../../server/store/mod.ts";
import { call, makeVoters, ringFor, signedVote } from "../helpers/ledger_fixtures.ts";

const REQUESTS = 5_000;
// Runs beyond REQUESTS leave room for the sealer ticks the generator mixes in.
const RUNS = 5_400;
const VOTERS = 40;

/** A generated request; `type` is its Content-Type, `application/json` when absent. */
type Request = { method: string; path: string; body?: string; type?: string | null } | {
  seal: true;
};

Deno.test("5,000 generated requests: no 5xx, the server answers, the auditor passes", async () => {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const app = createApp({ store, verifier: testVerifier });
  const voters = makeVoters(VOTERS);
  // Half the voters are registered up front, the rest may be registered by generated requests.
  for (const v of voters.slice(0, VOTERS / 2)) await store.registerKey(v.key);
  const registered = voters.slice(0, VOTERS / 2);
  // Pre-signed votes (rings of 2-3) so valid submissions cost no signing time during the run.
  const votes = registered.map((v, i) =>
    signedVote(v, ringFor(v, registered, 2 + (i % 2), i), `option ${i % 4}`)
  );
  const voteBodies = votes.map((v) => JSON.stringify(v));

  const hex64 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) =>
    Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("")
  );
  const segment = fc.oneof(
    fc.nat().map(String),
    fc.integer({ min: -1_000, max: -1 }).map(String),
    fc.constantFrom("0", "1", "2", "9007199254740991", "9007199254740992", "1e3", "0x1", "01"),
    fc.string({ maxLength: 30 }).map(encodeURIComponent),
    fc.constantFrom("..%2F..%2Fdeno.json", "%2e%2e", "%00", "%ZZ", "%", "..", "."),
    hex64,
    fc.base64String({ maxLength: 30 }).map((s) => s.replace(/[+/=]/g, "_")),
  );
  const query = fc.option(
    fc.tuple(fc.constantFrom("from", "limit", "offset", "x"), segment).map(([k, v]) =>
      `?${k}=${v}`
    ),
    { nil: "" },
  );
  const getPath = fc.oneof(
    fc.constant("/api/block/status"),
    segment.map((h) => `/api/block/hash/id/${h}`),
    fc.tuple(segment, segment).map(([h, v]) => `/api/block/id/${h}/vote/${v}`),
    fc.tuple(segment, query).map(([h, q]) => `/api/block/id/${h}/votes${q}`),
    fc.tuple(segment, segment).map(([o, l]) => `/api/pki/key/offset/${o}/limit/${l}`),
    segment.map((id) => `/api/pki/key/id/${id}`),
    query.map((q) => `/api/blocks${q}`),
    fc.constant("/api/tally"),
    segment.map((t) => `/api/tag/${t}`),
    segment.map((f) => `/static/build/${f}`),
    fc.array(segment, { maxLength: 5 }).map((parts) => `/${parts.join("/")}`),
  );
  const mutatedVote = fc.tuple(
    fc.constantFrom(...votes),
    fc.constantFrom("publicKeys", "signature", "tag", "payload", "extra"),
    fc.oneof(
      fc.jsonValue(),
      hex64,
      fc.string({ maxLength: 1100 }),
      fc.array(hex64, { maxLength: 4 }),
    ),
  ).map(([vote, field, value]) => JSON.stringify({ ...vote, [field]: value }));
  const mutatedSignature = fc.tuple(
    fc.constantFrom(...votes),
    fc.constantFrom("c0", "r", "I", "ring"),
    fc.oneof(fc.jsonValue(), hex64, fc.array(hex64, { maxLength: 4 })),
  ).map(([vote, field, value]) =>
    JSON.stringify({
      ...vote,
      signature: JSON.stringify({ ...JSON.parse(vote.signature), [field]: value }),
    })
  );
  const anyBody = fc.oneof(
    fc.json(),
    fc.string({ maxLength: 200 }),
    fc.jsonValue().map((v) => JSON.stringify(v)),
  );
  const request: fc.Arbitrary<Request> = fc.oneof(
    { weight: 6, arbitrary: getPath.map((path) => ({ method: "GET", path })) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...voteBodies).map((body) => ({
        method: "POST",
        path: "/api/vote",
        body,
      })),
    },
    {
      weight: 3,
      arbitrary: mutatedVote.map((body) => ({ method: "POST", path: "/api/vote", body })),
    },
    {
      weight: 2,
      arbitrary: mutatedSignature.map((body) => ({ method: "POST", path: "/api/vote", body })),
    },
    { weight: 2, arbitrary: anyBody.map((body) => ({ method: "POST", path: "/api/vote", body })) },
    {
      weight: 2,
      arbitrary: fc.oneof(
        fc.record({
          key: fc.oneof(hex64, fc.constantFrom(...voters.map((v) => v.key))),
          name: fc.string(),
        }),
        fc.record({ key: fc.jsonValue(), name: fc.jsonValue() }, { requiredKeys: [] }),
      ).map((body) => ({ method: "POST", path: "/api/pki/key", body: JSON.stringify(body) })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constantFrom("PUT", "DELETE", "PATCH", "POST", "OPTIONS", "HEAD"),
        getPath,
        anyBody,
        fc.constantFrom("application/json", "APPLICATION/JSON; charset=utf-8", "text/plain", null),
      )
        .map(([method, path, body, type]) => ({
          method,
          path,
          body: method === "HEAD" ? undefined : body,
          type,
        })),
    },
    { weight: 1, arbitrary: fc.constant({ seal: true as const }) },
  );

  const statuses = new Map<number, number>();
  const accepted: { voteId: string; blockId: number; body: string }[] = [];
  let tried = 0;
  let sealTime = Date.now();
  try {
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        if ("seal" in req) {
          await sealNextBlock(store, sealTime += 1_000);
          return;
        }
        tried++;
        const init: RequestInit = { method: req.method };
        if (req.body !== undefined) {
          init.body = req.body;
          // A null type sends none: a string body is then text/plain by the Request's own rule.
          if (req.type !== null) init.headers = { "content-type": req.type ?? "application/json" };
        }
        const res = await app.request(req.path, init);
        const text = await res.text();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const what = `${req.method} ${req.path} ${req.body?.slice(0, 200) ?? ""}`;
        assert.ok(res.status < 500, `${res.status} for ${what}: ${text.slice(0, 300)}`);
        assert.equal(
          res.headers.get("x-content-type-options"),
          SECURITY_HEADERS["X-Content-Type-Options"],
        );
        if (res.status >= 400 && req.method !== "HEAD") {
          assert.match(res.headers.get("content-type") ?? "", /^application\/json/, what);
          assert.ok(ErrorBody.safeParse(JSON.parse(text)).success, `${what}: ${text}`);
        }
        if (res.status === 202) accepted.push({ ...JSON.parse(text), body: req.body! });
      }),
      { numRuns: RUNS },
    );
    // Still answering, and every accepted vote is sealed where it was promised.
    assert.equal((await call(app, "GET", "/api/block/status")).status, 200);
    await sealNextBlock(store, sealTime += 1_000);
    for (const a of accepted) {
      const proof = await call(app, "GET", `/api/block/id/${a.blockId}/vote/${a.voteId}`);
      assert.equal(proof.status, 200, JSON.stringify(proof.body));
    }
    assert.equal(new Set(accepted.map((a) => JSON.parse(a.body).tag)).size, accepted.length);
    const report = await auditLedger(createApiClient({ fetch: app.request }));
    assert.deepEqual(report.failures, []);
    assert.equal(report.votes, accepted.length);
    const fiveXx = [...statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
    console.log(
      `fuzz: ${tried} requests, ${fiveXx} answered 5xx, ${accepted.length} votes accepted and ` +
        `audited in ${report.height} blocks; statuses ${
          JSON.stringify(Object.fromEntries(statuses))
        }`,
    );
    assert.ok(tried >= REQUESTS, `only ${tried} requests were generated`);
  } finally {
    kv.close();
  }
});
