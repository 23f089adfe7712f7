// A vote over a ring of 8 reads its members, its tag and the guard in one getMany, with the gate's
// entry (the round's phase record) as the process last read it (server/store/mod.ts voteInputs),
// and its round check takes a remembered yes (server/store/rounds.ts isCurrent). Three processes on
// one database show that what a process remembers out of date never refuses a vote wrongly (a
// refusal is made only on what is read afresh) and never admits one wrongly (the commit checks the
// phase record: 409 round_closed, nothing stored).
import assert from "node:assert/strict";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { call, makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";

const presenter = {
  authorization: `Bearer ${PRESENTER_TOKEN}`,
  "content-type": "application/json",
};

/** A process over `kv`: its own store, rounds and app, sharing nothing in memory with another. */
const processOver = (kv: Deno.Kv) => fullApp(kv);

Deno.test("what a process remembers out of date neither refuses nor admits a vote wrongly", async (t) => {
  const kv = await Deno.openKv(":memory:");
  try {
    const [a, b, c] = [await processOver(kv), await processOver(kv), await processOver(kv)];
    // Round 1's keys, registered through b while round 1 is current: a and c have read none.
    const electionVoters = makeVoters(8);
    for (const v of electionVoters) {
      assert.equal((await call(b.app, "POST", "/api/pki/key", { key: v.key })).status, 201);
    }
    const started = await b.app.request("/api/rounds", {
      method: "POST",
      headers: presenter,
      body: JSON.stringify({ question: "Which colour?", choices: ["Red", "Blue"] }),
    });
    assert.equal(started.status, 201);

    await t.step(
      "a round remembered in its join phase: the vote counts once voting opened",
      async () => {
        const voters = makeVoters(8);
        for (const v of voters) {
          const registered = await call(b.app, "POST", "/api/rounds/2/pki/key", { key: v.key });
          assert.equal(registered.status, 201);
        }
        // Process a remembers round 2 in its join phase (no phase record yet), and has read none
        // of its keys.
        assert.equal(await (await a.rounds.storeOf(2)).readGate(), null);
        const opened = await b.app.request("/api/rounds/2/voting", {
          method: "POST",
          headers: presenter,
        });
        assert.equal(opened.status, 200);
        const ballot = signedVote(voters[0], voters, "Red");
        const answer = await call(a.app, "POST", "/api/rounds/2/vote", ballot);
        assert.equal(answer.status, 202, JSON.stringify(answer.body));
      },
    );

    await t.step(
      "round 1 remembered current and open: a vote after it closed is refused at commit",
      async () => {
        // Process c read round 1 as current and open at its start, before round 2 began.
        const voter = electionVoters[0];
        const ballot = signedVote(voter, ringFor(voter, electionVoters, 8), "Yes");
        const answer = await call(c.app, "POST", "/api/vote", ballot);
        assert.equal(answer.status, 409, JSON.stringify(answer.body));
        assert.equal(answer.body.error.code, "round_closed");
        assert.equal((await call(b.app, "GET", `/api/tag/${ballot.tag}`)).status, 404);
      },
    );
  } finally {
    kv.close();
  }
});
