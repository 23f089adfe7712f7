// The rounds' sealer (protocol §4.9, §5.3 "Work"): a round a vote landed in is sealed on its tick,
// the current round on its own ticks and an ended one within a second, however many rounds start
// after it and however long ago it ended; a vote another process took is found once the work stamp
// moves; with no work, a run reads nothing.
import assert from "node:assert/strict";
import { CLOSED_ROUND_TICK_MS, createRoundSealer } from "../../server/round_sealer.ts";
import { createStore } from "../../server/store/mod.ts";
import { createRounds, roundPrefix } from "../../server/store/rounds.ts";
import { WORK_STAMP_KEY } from "../../server/store/work.ts";
import { createWorkWatch } from "../../server/work_watch.ts";
import { unsignedVote } from "../helpers/ledger_fixtures.ts";

/** Rounds over in-memory KV with a clock the test moves, and a sealer told of work by a watch. */
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
  const process = () => {
    const watch = createWorkWatch(kv, { pollMs: 0 });
    return { watch, sealer: createRoundSealer({ kv, rounds, watch }) };
  };
  // Round `id`'s ledger without its phase gate: a vote written here is one that committed while
  // its round was open for votes.
  const ledgerOf = (id: number) => createStore(kv, { prefix: roundPrefix(id), now });
  return { kv, clock, rounds, ledgerOf, process, ...process() };
}

const question = (n: number) => ({ question: `Question ${n}?`, choices: ["Yes", "No"] });

/** One run of `sealer` over the closed rounds' next tick, after its watch polled. */
async function nextSecond(
  { clock, watch, sealer }: {
    clock: { now: number };
    watch: { poll(now: number): Promise<void> };
    sealer: { run(previous: number, now: number): Promise<{ round: number }[]> };
  },
) {
  const before = clock.now;
  clock.now += CLOSED_ROUND_TICK_MS;
  await watch.poll(clock.now);
  return (await sealer.run(before, clock.now)).map((s) => s.round);
}

Deno.test("a vote waiting in a round that ended is sealed however many rounds start after it", async () => {
  const { kv, clock, rounds, ledgerOf, sealer, watch } = await setup();
  try {
    const round = await rounds.start({ ...question(2), blockIntervalMs: 3_600_000 });
    const { vote, tag } = unsignedVote("Yes");
    const accepted = await (await ledgerOf(round)).submitVote(vote, tag);
    for (let n = 3; n <= 6; n++) await rounds.start(question(n));
    assert.deepEqual(await nextSecond({ clock, watch, sealer }), [round]);
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

Deno.test("a vote landing in a round ended long ago is sealed by the process that took it", async () => {
  const { kv, clock, rounds, ledgerOf, sealer, watch } = await setup();
  try {
    const old = await rounds.start(question(2));
    await rounds.start(question(3));
    assert.deepEqual(await nextSecond({ clock, watch, sealer }), []);
    // Ten minutes on, nothing has been looked at since; a late vote lands (the API refuses it
    // now, but one that passed the round check before its round ended may still commit).
    for (let i = 0; i < 600; i++) assert.deepEqual(await nextSecond({ clock, watch, sealer }), []);
    const { vote, tag } = unsignedVote("Yes");
    await (await ledgerOf(old)).submitVote(vote, tag);
    assert.deepEqual(await nextSecond({ clock, watch, sealer }), [old]);
  } finally {
    kv.close();
  }
});

Deno.test("a vote another process took is found by this one once the work stamp moves", async () => {
  const { kv, clock, rounds, ledgerOf, process } = await setup();
  try {
    const old = await rounds.start(question(2));
    await rounds.start(question(3));
    const b = process();
    assert.deepEqual(await nextSecond({ clock, ...b }), [], "nothing waits at start");
    assert.deepEqual(await nextSecond({ clock, ...b }), []);
    const { vote, tag } = unsignedVote("No");
    await (await ledgerOf(old)).submitVote(vote, tag);
    // The process that took it stops before its tick: its note is gone with it. (Its vote commit
    // set the work stamp; this test's process took it, so the stamp is set again as it did.)
    process().watch.takeRounds();
    await kv.set(WORK_STAMP_KEY, { ledger: `round ${old}` });
    assert.deepEqual(await nextSecond({ clock, ...b }), [old]);
    assert.deepEqual(await nextSecond({ clock, ...b }), [], "sealed once");
  } finally {
    kv.close();
  }
});

Deno.test("a process started after a vote landed seals it on its first run", async () => {
  const { kv, clock, rounds, ledgerOf, process } = await setup();
  try {
    const old = await rounds.start(question(2));
    await rounds.start(question(3));
    const { vote, tag } = unsignedVote("Yes");
    await (await ledgerOf(old)).submitVote(vote, tag);
    process().watch.takeRounds();
    assert.deepEqual(await nextSecond({ clock, ...process() }), [old]);
  } finally {
    kv.close();
  }
});
