// A lying server cannot make the audit pass a ring narrowed below what a round allows (protocol
// §2.8, §4.9): told that voting opened with 2 keys, the audit refuses every ring of the round as
// a group (not-a-group), since voting never opens with fewer than minVoters keys, 8 at the least.
import assert from "node:assert/strict";
import { createApiClient } from "../../../lib/client/api_client.ts";
import { auditLedger } from "../../../lib/client/audit/audit.ts";
import { withGroupRule } from "../../../lib/client/audit/groups.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore } from "../../../server/store/mod.ts";
import { roundPrefix } from "../../../server/store/rounds.ts";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { call, makeVoters, signedVote } from "../../helpers/ledger_fixtures.ts";

Deno.test("a ring of 2 served as a group opened with 2 keys fails the audit with not-a-group", async () => {
  using kv = await Deno.openKv(":memory:");
  const { app } = await fullApp(kv, { currentTtlMs: 0 });
  const started = await app.request("/api/rounds", {
    method: "POST",
    headers: { authorization: `Bearer ${PRESENTER_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ question: "Which colour?", choices: ["Red", "Blue"] }),
  });
  assert.equal(started.status, 201);
  const voters = makeVoters(8);
  for (const v of voters) {
    assert.equal((await call(app, "POST", "/api/rounds/2/pki/key", { key: v.key })).status, 201);
  }
  // The server's own store takes a vote over keys 1 and 2 only, past the intake's group check.
  const ledger = await createStore(kv, { prefix: roundPrefix(2) });
  const ballot = signedVote(voters[1], voters.slice(0, 2), "Red");
  const { payload, signature, publicKeys } = ballot;
  await ledger.submitVote({ payload, signature, publicKeys }, ballot.tag);
  await sealNextBlock(ledger, Date.now());
  // And says voting opened with 2 keys, so that the ring of 2 is "the group".
  const honest = createApiClient({ fetch: app.request, ledger: { round: 2 } });
  const lying = {
    ...honest,
    groups: () =>
      Promise.resolve({
        phase: "voting" as const,
        keysAtOpen: 2,
        groups: [[1, 2]],
        pending: [3, 4, 5, 6, 7, 8],
      }),
  };
  const report = await auditLedger(withGroupRule(lying, 2));
  assert.equal(report.ok, false);
  assert.deepEqual(report.failures.map((f) => f.kind), ["not-a-group"]);
});
