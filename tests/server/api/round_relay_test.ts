// The presenter's declaration that a round's votes go through a relay (protocol §4.9, §7.4), over
// in-memory Deno KV: only the presenter declares, only rounds 2 and up, idempotently, and
// GET /api/rounds lists `relayed` for every round, never a relay's address.
import assert from "node:assert/strict";
import { RoundList } from "../../../lib/protocol/schemas.ts";

import { fullApp, PRESENTER_TOKEN as ADMIN_TOKEN } from "../../helpers/app_fixture.ts";

async function setup() {
  const kv = await Deno.openKv(":memory:");
  return { kv, app: (await fullApp(kv, { currentTtlMs: 0 })).app };
}

type App = Awaited<ReturnType<typeof setup>>["app"];

/** A JSON POST, as the presenter unless `authorization` says otherwise. */
async function post(app: App, path: string, body?: unknown, authorization?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (authorization !== "none") headers.authorization = authorization ?? `Bearer ${ADMIN_TOKEN}`;
  const res = await app.request(path, {
    method: "POST",
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

async function listing(app: App) {
  return RoundList.parse(await (await app.request("/api/rounds")).json());
}

Deno.test("the presenter declares a round relayed; the listing says so, naming no relay", async () => {
  const { kv, app } = await setup();
  try {
    const started = await post(app, "/api/rounds", { question: "Which?", choices: ["A", "B"] });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const id = started.body.id;
    let list = await listing(app);
    assert.deepEqual(list.rounds.map((r) => [r.id, r.relayed]), [[1, false], [id, false]]);

    const anonymous = await post(app, `/api/rounds/${id}/relay`, { relayed: true }, "none");
    assert.equal(anonymous.status, 401);
    const wrong = await post(app, `/api/rounds/${id}/relay`, {}, "Bearer not-the-token-0123456");
    assert.equal(wrong.status, 401);
    for (const other of ["1", "99", "x"]) {
      const res = await post(app, `/api/rounds/${other}/relay`, { relayed: true });
      assert.equal(res.status, 404, other);
      assert.equal(res.body.error.code, "unknown_round");
    }
    list = await listing(app);
    assert.deepEqual(list.rounds.map((r) => r.relayed), [false, false], "nothing declared yet");

    for (let i = 0; i < 2; i++) {
      const res = await post(app, `/api/rounds/${id}/relay`, { relayed: true });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { relayed: true });
    }
    list = await listing(app);
    assert.deepEqual(list.rounds.map((r) => [r.id, r.relayed]), [[1, false], [id, true]]);
    const phase = list.rounds[1].phase;
    assert.equal(phase, "join", "the declaration leaves the round's phase as it was");
    assert.ok(!JSON.stringify(list).includes("http"), "no address is listed");
  } finally {
    kv.close();
  }
});

Deno.test("a relay declaration other than {relayed: true} is refused 400, and declares nothing", async () => {
  const { kv, app } = await setup();
  try {
    const started = await post(app, "/api/rounds", { question: "Lunch?", choices: ["Yes", "No"] });
    const id = started.body.id;
    for (const body of [{ relayed: false }, {}, "{", null]) {
      const res = await app.request(`/api/rounds/${id}/relay`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
        ...(body === null ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal((await res.json()).error.code, "invalid_request");
    }
    const list = await listing(app);
    assert.deepEqual(list.rounds.map((r) => r.relayed), [false, false]);
  } finally {
    kv.close();
  }
});
