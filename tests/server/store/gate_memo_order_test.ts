// The gate entry a process remembers for its vote commits (server/store/votes.ts) only moves
// forward: a read sent before voting opened that comes back after a fresher read (a slow round
// trip, as over KV Connect) must not put the join phase back, or the next vote, admitted on the
// fresh phase, is refused 409 voting_not_open by its commit step and its phone waits for ever.
import assert from "node:assert/strict";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { call, makeVoters, signedVote } from "../../helpers/ledger_fixtures.ts";

/**
 * `kv` whose `getMany` calls, while `hold` is on, are sent at once and answered only when
 * `release()` is called: a real read whose answer arrives late.
 */
function lateReads(kv: Deno.Kv) {
  const held: (() => void)[] = [];
  let heard = () => {};
  const control = {
    hold: false,
    /** Resolves once a read is held. */
    holding: new Promise<void>((go) => heard = go),
    release: () => held.splice(0).forEach((go) => go()),
  };
  const proxy = new Proxy(kv, {
    get(target, prop) {
      if (prop === "getMany") {
        return async (...args: Parameters<Deno.Kv["getMany"]>) => {
          const answer = await target.getMany(...args);
          if (control.hold) {
            await new Promise<void>((go) => {
              held.push(go);
              heard();
            });
          }
          return answer;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: proxy as Deno.Kv, control };
}

Deno.test("a read answered late never takes a process's remembered phase back", async () => {
  using kv = await Deno.openKv(":memory:");
  const slow = lateReads(kv);
  const a = await fullApp(slow.kv);
  const b = await fullApp(kv);
  const presenter = { authorization: `Bearer ${PRESENTER_TOKEN}` };
  const started = await b.app.request("/api/rounds", {
    method: "POST",
    headers: { ...presenter, "content-type": "application/json" },
    body: JSON.stringify({ question: "Which colour?", choices: ["Red", "Blue"] }),
  });
  assert.equal(started.status, 201);
  const voters = makeVoters(8);
  for (const v of voters) {
    assert.equal((await call(b.app, "POST", "/api/rounds/2/pki/key", { key: v.key })).status, 201);
  }
  const store = await a.rounds.storeOf(2);
  assert.equal(await store.readGate(), null, "process a remembers the join phase");
  const first = signedVote(voters[0], voters, "Red");
  // A vote's read is sent while keys are joining, and its answer is late.
  slow.control.hold = true;
  const early = store.voteInputs(first.publicKeys, first.tag);
  await slow.control.holding;
  slow.control.hold = false;
  const opened = await b.app.request("/api/rounds/2/voting", {
    method: "POST",
    headers: { ...presenter, "content-type": "application/json" },
  });
  assert.equal(opened.status, 200);
  // Process a reads the phase afresh: voting is open.
  assert.equal((await store.readGate() as { phase: string }).phase, "voting");
  slow.control.release();
  await early;
  // A vote admitted on the fresh phase commits.
  const second = signedVote(voters[1], voters, "Blue");
  const vote = {
    payload: second.payload,
    signature: second.signature,
    publicKeys: second.publicKeys,
  };
  const accepted = await store.submitVote(vote, second.tag);
  assert.equal(typeof accepted.voteId, "string");
});
