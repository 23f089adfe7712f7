// The group rule as the board's audit and record download read it (protocol §2.8): through the
// round's own API client (withGroupRule), over the real app and in-memory KV. An honest round
// passes; a vote written past the server's intake whose ring is not a group fails with the typed
// finding, live and from the record the board downloads; round 1 is audited as before, unwrapped.
import assert from "node:assert/strict";
import { createApiClient } from "../../../lib/client/api_client.ts";
import { auditLedger } from "../../../lib/client/audit/audit.ts";
import { writeRecord } from "../../../lib/client/audit/election_record.ts";
import { auditRecord } from "../../../lib/client/audit/election_record_source.ts";
import { readGroupRule, withGroupRule } from "../../../lib/client/audit/groups.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore } from "../../../server/store/mod.ts";
import { roundPrefix } from "../../../server/store/rounds.ts";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { call, makeVoters, signedVote } from "../../helpers/ledger_fixtures.ts";

const presenter = {
  authorization: `Bearer ${PRESENTER_TOKEN}`,
  "content-type": "application/json",
};

/** Round 2 with 8 keys, voting opened (one group of all 8), 2 sealed votes over that group. */
async function roundWithVotes() {
  const kv = await Deno.openKv(":memory:");
  const { rounds, app } = await fullApp(kv, { currentTtlMs: 0 });
  const started = await app.request("/api/rounds", {
    method: "POST",
    headers: presenter,
    body: JSON.stringify({ question: "Which colour?", choices: ["Red", "Blue"] }),
  });
  assert.equal(started.status, 201);
  const voters = makeVoters(8);
  for (const v of voters) {
    assert.equal((await call(app, "POST", "/api/rounds/2/pki/key", { key: v.key })).status, 201);
  }
  const opened = await app.request("/api/rounds/2/voting", { method: "POST", headers: presenter });
  assert.equal(opened.status, 200);
  for (const [i, payload] of ["Red", "Blue"].entries()) {
    const ballot = signedVote(voters[i], voters, payload);
    assert.equal((await call(app, "POST", "/api/rounds/2/vote", ballot)).status, 202);
  }
  await sealNextBlock(await rounds.storeOf(2), Date.now());
  const client = createApiClient({ fetch: app.request, ledger: { round: 2 } });
  return {
    kv,
    app,
    client,
    /** Writes, past the intake, a vote whose ring leaves one key of the group out; seals it. */
    async castOutsideGroup() {
      const ledger = await createStore(kv, { prefix: roundPrefix(2) });
      const ballot = signedVote(voters[3], voters.slice(0, 7), "Blue");
      const { payload, signature, publicKeys } = ballot;
      await ledger.submitVote({ payload, signature, publicKeys }, ballot.tag);
      await sealNextBlock(ledger, Date.now());
    },
  };
}

/** A record sink that keeps the record's text. */
function textSink() {
  let text = "";
  return {
    sink: { write: (t: string) => void (text += t), restart: () => void (text = "") },
    text: () => text,
  };
}

Deno.test("the board's audit of a round reads its group rule through the round's API client", async (t) => {
  const room = await roundWithVotes();
  try {
    await t.step("the rule is the round's settings and keysAtOpen", async () => {
      assert.deepEqual(await readGroupRule(room.client, 2), {
        keysAtOpen: 8,
        minVoters: 8,
        lateJoiners: false,
      });
    });

    await t.step("round 1's client is audited as it is, with no rule", () => {
      const election = createApiClient({ fetch: room.app.request });
      assert.equal(withGroupRule(election, 1), election);
      assert.equal(withGroupRule(election, null), election);
    });

    await t.step("an honest round passes, and its downloaded record holds the rule", async () => {
      const report = await auditLedger(withGroupRule(room.client, 2));
      assert.equal(report.ok, true, JSON.stringify(report.failures));
      const { sink, text } = textSink();
      await writeRecord(withGroupRule(room.client, 2), sink);
      const header = JSON.parse(text().split("\n")[0]);
      assert.deepEqual(header.groups, { keysAtOpen: 8, minVoters: 8, lateJoiners: false });
    });

    await room.castOutsideGroup();

    await t.step("a ring that is not a group fails live with not-a-group", async () => {
      const report = await auditLedger(withGroupRule(room.client, 2));
      assert.equal(report.ok, false);
      assert.deepEqual(
        report.failures.map((f) => f.kind).filter((k) => k === "not-a-group"),
        ["not-a-group"],
      );
    });

    await t.step("the same ring fails in the record the board downloads, offline", async () => {
      const { sink, text } = textSink();
      await writeRecord(withGroupRule(room.client, 2), sink);
      const report = await auditRecord(new Blob([text()]).stream());
      assert.equal(report.ok, false);
      assert.ok(report.failures.some((f) => f.kind === "not-a-group"));
    });

    await t.step(
      "without the rule the same ledger passes: the wrapper is what checks it",
      async () => {
        const report = await auditLedger(room.client);
        assert.equal(report.ok, true, JSON.stringify(report.failures));
      },
    );
  } finally {
    room.kv.close();
  }
});
