// Bounded directories (protocol §4.2): the election's holds at most 100,000 keys and each round's
// 1,000; one more is refused 409 directory_full, saying the bound, and nothing is stored. The key
// counter every registration commit checks is set near the bound, as that many registrations
// would leave it.
import assert from "node:assert/strict";
import { kvKeys, ledgerKeys } from "../../../server/store/layout.ts";
import { ELECTION_KEY_CAPACITY } from "../../../server/store/mod.ts";
import { ROUND_KEY_CAPACITY, roundPrefix } from "../../../server/store/rounds.ts";
import { call, dumpKv, makeVoters } from "../../helpers/ledger_fixtures.ts";
import { fullApp, PRESENTER_TOKEN as ADMIN_TOKEN } from "../../helpers/app_fixture.ts";

Deno.test("the election's directory and a round's are bounded: 409 directory_full beyond", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { app } = await fullApp(kv, { currentTtlMs: 0 });
    const [last, beyond, inRound, beyondRound] = makeVoters(4);
    assert.equal(ELECTION_KEY_CAPACITY, 100_000);
    await kv.set(kvKeys.keyCount(), { total: ELECTION_KEY_CAPACITY - 1 });
    const taken = await call(app, "POST", "/api/pki/key", { key: last.key });
    assert.equal(taken.status, 201, JSON.stringify(taken.body));
    assert.equal(taken.body.id, ELECTION_KEY_CAPACITY);
    const before = await dumpKv(kv);
    const refused = await call(app, "POST", "/api/pki/key", { key: beyond.key });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, "directory_full");
    assert.equal(refused.body.error.max, ELECTION_KEY_CAPACITY);
    assert.match(refused.body.error.message, /at most 100000 keys/);
    assert.deepEqual(await dumpKv(kv), before, "nothing stored");

    const start = await app.request("/api/rounds", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ question: "Full?", choices: [] }),
    });
    assert.equal(start.status, 201);
    await start.body?.cancel();
    assert.equal(ROUND_KEY_CAPACITY, 1_000);
    await kv.set(ledgerKeys(roundPrefix(2)).keyCount(), { total: ROUND_KEY_CAPACITY - 1 });
    const inBound = await call(app, "POST", "/api/rounds/2/pki/key", { key: inRound.key });
    assert.equal(inBound.status, 201, JSON.stringify(inBound.body));
    const full = await call(app, "POST", "/api/rounds/2/pki/key", { key: beyondRound.key });
    assert.equal(full.status, 409, JSON.stringify(full.body));
    assert.equal(full.body.error.code, "directory_full");
    assert.equal(full.body.error.max, ROUND_KEY_CAPACITY);
  } finally {
    kv.close();
  }
});
