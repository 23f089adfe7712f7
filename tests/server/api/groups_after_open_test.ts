// `GET /api/rounds/{id}/groups` is answered from a second-long memory per process (protocol §4.9),
// but never a join-phase answer after this process opened voting: a voter told that voting opened
// reads its group at once, as the demo round does.
import assert from "node:assert/strict";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { call, makeVoters } from "../../helpers/ledger_fixtures.ts";

const presenter = {
  authorization: `Bearer ${PRESENTER_TOKEN}`,
  "content-type": "application/json",
};

Deno.test("the groups read right after opening voting are the opened ones, not a kept join", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    // The default second-long memory of listings and groups.
    const { app } = await fullApp(kv);
    const started = await app.request("/api/rounds", {
      method: "POST",
      headers: presenter,
      body: JSON.stringify({ question: "Q?", choices: ["A", "B"] }),
    });
    assert.equal(started.status, 201);
    for (const v of makeVoters(8)) {
      assert.equal((await call(app, "POST", "/api/rounds/2/pki/key", { key: v.key })).status, 201);
    }
    const before = await call(app, "GET", "/api/rounds/2/groups");
    assert.equal(before.body.phase, "join");
    const opened = await app.request("/api/rounds/2/voting", {
      method: "POST",
      headers: presenter,
    });
    assert.equal(opened.status, 200);
    const after = await call(app, "GET", "/api/rounds/2/groups");
    assert.equal(after.body.phase, "voting");
    assert.deepEqual(after.body.groups, [[1, 2, 3, 4, 5, 6, 7, 8]]);
  } finally {
    kv.close();
  }
});
