// The rounds' sealer (protocol §4.9): the current round is sealed on its own ticks, and a round
// that is no longer current is sealed until nothing waits in it, however many rounds start after
// it; an empty round ended long ago is left alone.
import assert from "node:assert/strict";
import {
  CLOSED_ROUND_TICK_MS,
  createRoundSealer,
  DRAIN_GRACE_MS,
} from "../../server/round_sealer.ts";
import { createStore } from "../../server/store/mod.ts";
import { createRounds, roundPrefix } from "../../server/store/rounds.ts";
import { unsignedVote } from "../helpers/ledger_fixtures.ts";

/** Rounds over in-memory KV with a clock the test moves. */
async function setup() {
  const kv = await Deno.openKv(":memory:");
  const clock = { now: 1_000_000_000_000 };
  const now = () => clock.now;
  const store = await createStore(kv, { now });
  const rounds = await createRounds(kv, {
    election: store,
    electionIntervalMs: 60_000,
    adminToken: "a-presenter-token-of-16",
    currentTtlMs: 0,
    now,
  });
  // Round `id`'s ledger without its phase gate: a vote written here is one that committed while
  // its round was open for votes.
  const ledgerOf = (id: number) => createStore(kv, { prefix: roundPrefix(id), now });
  return { kv, clock, rounds, ledgerOf, sealer: createRoundSealer(rounds) };
}

const question = (n: number) => ({ question: `Question ${n}?`, choices: ["Yes", "No"] });

Deno.test("a vote waiting in a round that ended is sealed however many rounds start after it", async () => {
  const { kv, clock, rounds, ledgerOf, sealer } = await setup();
  try {
    const round = await rounds.start({ ...question(2), blockIntervalMs: 3_600_000 });
    const { vote, tag } = unsignedVote("Yes");
    const accepted = await (await ledgerOf(round)).submitVote(vote, tag);
    for (let n = 3; n <= 6; n++) await rounds.start(question(n));
    const before = clock.now;
    clock.now += CLOSED_ROUND_TICK_MS;
    const sealed = await sealer.run(before, clock.now);
    assert.deepEqual(sealed.map((s) => [s.round, s.blocks.map((b) => b.height)]), [[2, [1]]]);
    const proof = await (await rounds.storeOf(round)).voteProof(accepted.blockId, accepted.voteId);
    assert.equal(proof.vote.payload, "Yes");
  } finally {
    kv.close();
  }
});

Deno.test("the current round is sealed on its own ticks only", async () => {
  const { kv, clock, rounds, ledgerOf, sealer } = await setup();
  try {
    clock.now = 1_000_000_000_000; // a multiple of 5,000: ticks fall on it
    const round = await rounds.start({ ...question(2), blockIntervalMs: 5_000 });
    const { vote, tag } = unsignedVote("No");
    await (await ledgerOf(round)).submitVote(vote, tag);
    assert.deepEqual(await sealer.run(clock.now + 1, clock.now + 4_000), []);
    const sealed = await sealer.run(clock.now + 4_000, clock.now + 5_000);
    assert.deepEqual(sealed.map((s) => s.round), [round]);
  } finally {
    kv.close();
  }
});

Deno.test("an empty round ended more than the grace ago is drained and left alone", async () => {
  const { kv, clock, rounds, ledgerOf, sealer } = await setup();
  try {
    const old = await rounds.start(question(2));
    await rounds.start(question(3));
    const ended = clock.now;
    clock.now = ended + DRAIN_GRACE_MS + CLOSED_ROUND_TICK_MS;
    assert.deepEqual(await sealer.run(clock.now - CLOSED_ROUND_TICK_MS, clock.now), []);
    // Drained: a vote written into it afterwards (which the API no longer lets through) stays.
    const { vote, tag } = unsignedVote("Yes");
    await (await ledgerOf(old)).submitVote(vote, tag);
    clock.now += CLOSED_ROUND_TICK_MS;
    assert.deepEqual(await sealer.run(clock.now - CLOSED_ROUND_TICK_MS, clock.now), []);
    // A fresh process checks it once more and seals what it finds.
    const fresh = createRoundSealer(rounds);
    const sealed = await fresh.run(clock.now - CLOSED_ROUND_TICK_MS, clock.now);
    assert.deepEqual(sealed.map((s) => s.round), [old]);
  } finally {
    kv.close();
  }
});
