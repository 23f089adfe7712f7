// The JSON content type of write calls (protocol §4.1), through HTTP over in-memory Deno KV: every
// write under /api/ — the election's, the practice ledger's and a round's keys and votes, the
// presenter's round start, a witness's cosignature, the lab's bodiless reset — sent as a page on
// another site could send it (`text/plain`, a form, no Content-Type) is answered 415
// `unsupported_media_type` before its body or the database is read, and stores nothing; the type
// with parameters, in any case, is taken; reads are unaffected. Status, then content type, then
// body.
import assert from "node:assert/strict";
import type { Hono } from "hono";
import { ErrorBody } from "../../../lib/protocol/schemas.ts";
import { createApp } from "../../../server/app.ts";
import { createStore } from "../../../server/store/mod.ts";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { testVerifier } from "../../helpers/test_verifier.ts";
import { call, dumpKv, makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";

const ADMIN_TOKEN = PRESENTER_TOKEN;

/** The app with the election, the practice ledger and the rounds over a fresh in-memory KV. */
async function setup() {
  const kv = await Deno.openKv(":memory:");
  const { lab, app } = await fullApp(kv);
  return { kv, lab, app };
}

/** A write as sent: its method, path, body (none when absent) and extra headers. */
type Write = { method: string; path: string; body?: unknown; headers?: Record<string, string> };

/**
 * `write` sent with Content-Type `type`, or with none when null (its body then sent as bytes: a
 * string body would get `text/plain;charset=UTF-8` from the Request itself).
 */
async function send(app: Hono, write: Write, type: string | null): Promise<Response> {
  const text = write.body === undefined ? undefined : JSON.stringify(write.body);
  const headers: Record<string, string> = { ...write.headers };
  if (type !== null) headers["content-type"] = type;
  const body = type === null && text !== undefined ? new TextEncoder().encode(text) : text;
  return await app.request(write.path, { method: write.method, headers, body });
}

/** Asserts a 415 `unsupported_media_type` in the JSON error shape; answers its message. */
async function assertRefused(res: Response, what: string): Promise<string> {
  const text = await res.text();
  assert.equal(res.status, 415, `${what}: ${text}`);
  assert.equal(res.headers.get("content-type"), "application/json", what);
  const body = JSON.parse(text);
  assert.ok(ErrorBody.safeParse(body).success, what);
  assert.equal(body.error.code, "unsupported_media_type", what);
  assert.match(body.error.message, /^Send write calls with Content-Type: application\/json, got/);
  return body.error.message;
}

/** Content types a page on another site can have a browser send without asking first. */
const SIMPLE_TYPES = [
  "text/plain;charset=UTF-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
];

Deno.test("a write without the JSON content type is 415 and stores nothing", async (t) => {
  const { kv, lab, app } = await setup();
  const voters = makeVoters(4);
  for (const v of voters.slice(0, 3)) {
    assert.equal((await call(app, "POST", "/api/pki/key", v)).status, 201);
    assert.equal((await call(app, "POST", "/api/lab/pki/key", v)).status, 201);
  }
  const registered = voters.slice(0, 3);
  const vote = signedVote(voters[0], ringFor(voters[0], registered, 3), "Yes");
  const presenter = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const cosignature = { vkey: "w+00000000+AAAA", size: 1, cosignature: "— w AAAA" };
  const writes: Write[] = [
    { method: "POST", path: "/api/pki/key", body: { key: voters[3].key } },
    { method: "POST", path: "/api/vote", body: vote },
    { method: "POST", path: "/api/lab/pki/key", body: { key: voters[3].key } },
    { method: "POST", path: "/api/lab/vote", body: vote },
    { method: "POST", path: "/api/lab/reset" },
    {
      method: "POST",
      path: "/api/rounds",
      body: { question: "Q?", choices: [] },
      headers: presenter,
    },
    { method: "POST", path: "/api/rounds/1/pki/key", body: { key: voters[3].key } },
    { method: "POST", path: "/api/log/cosignature", body: cosignature },
    { method: "POST", path: "/api/lab/log/cosignature", body: cosignature },
    { method: "PUT", path: "/api/pki/key", body: { key: voters[3].key } },
    { method: "PATCH", path: "/api/lab/pki/key", body: { key: voters[3].key } },
    { method: "DELETE", path: "/api/lab/reset" },
  ];
  const before = await dumpKv(kv);
  const generation = await lab.generation();

  for (const write of writes) {
    await t.step(`${write.method} ${write.path}`, async () => {
      for (const type of SIMPLE_TYPES) {
        const message = await assertRefused(await send(app, write, type), type);
        assert.ok(message.endsWith(`got "${type}"`), message);
      }
      const message = await assertRefused(await send(app, write, null), "no Content-Type");
      assert.match(message, /got no Content-Type$/);
    });
  }
  await t.step("nothing is stored: no key, no vote, no round, the same generation", async () => {
    assert.deepEqual(await dumpKv(kv), before);
    assert.equal((await call(app, "GET", "/api/pki/key/offset/0/limit/1")).body.total, 3);
    assert.equal((await call(app, "GET", "/api/lab/pki/key/offset/0/limit/1")).body.total, 3);
    assert.equal(await lab.generation(), generation);
    assert.equal((await call(app, "GET", "/api/rounds")).body.current, 1);
  });
  kv.close();
});

Deno.test("application/json with parameters, in any case, is taken", async () => {
  const { kv, lab, app } = await setup();
  const [a, b] = makeVoters(2);
  const key = { method: "POST", path: "/api/pki/key", body: { key: a.key } };
  const registered = await send(app, key, "application/json; charset=utf-8");
  assert.equal(registered.status, 201, await registered.clone().text());
  assert.equal((await registered.json()).key, a.key);
  const upper = await send(
    app,
    { ...key, body: { key: b.key } },
    "Application/JSON ;Charset=UTF-8",
  );
  assert.equal(upper.status, 201, await upper.clone().text());
  await upper.body?.cancel();

  assert.equal((await call(app, "POST", "/api/lab/pki/key", a)).status, 201);
  const reset = await send(app, { method: "POST", path: "/api/lab/reset" }, "application/json");
  assert.equal(reset.status, 200, await reset.clone().text());
  assert.equal((await reset.json()).height, 0);
  assert.equal(await lab.generation(), 2);
  kv.close();
});

Deno.test("a 415 is answered without reading the body or the database; reads are unaffected", async (t) => {
  const kv = await Deno.openKv(":memory:");
  const app = createApp({ store: await createStore(kv), verifier: testVerifier });
  const [voter] = makeVoters(1);

  await t.step("reads answer as before, whatever Content-Type they carry", async () => {
    const types: Record<string, string>[] = [{}, { "content-type": "text/plain" }];
    for (const headers of types) {
      const res = await app.request("/api/block/status", { headers });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      assert.equal((await res.json()).height, 0);
    }
  });
  await t.step("a text/plain body is never read, however long", async () => {
    let pulled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled = true;
        controller.enqueue(new Uint8Array(70_000));
        controller.close();
      },
    }, { highWaterMark: 0 });
    const res = await app.request("/api/vote", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body,
    });
    await assertRefused(res, "a long text/plain body");
    assert.equal(pulled, false);
  });
  await t.step("with the database closed, a text/plain write is still a 415", async () => {
    kv.close();
    const write = { method: "POST", path: "/api/pki/key", body: { key: voter.key } };
    await assertRefused(await send(app, write, "text/plain"), "closed database");
  });
});
