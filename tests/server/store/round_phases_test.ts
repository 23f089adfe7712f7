// A round's phases over one database shared by two processes (protocol §4.9, §2.8), each with its
// own connection, rounds and stores: openings at once give one partition, a registration racing
// the opening is before it exactly when its commit is, and a round's directory is bounded.
import assert from "node:assert/strict";
import { createStore } from "../../../server/store/mod.ts";
import { createRounds, ROUND_KEY_CAPACITY, type Rounds } from "../../../server/store/rounds.ts";
import { ledgerKeys } from "../../../server/store/layout.ts";
import { roundPrefix } from "../../../server/store/round_phases.ts";

const T0 = 1_700_000_000_000;

/** A process over the database at `path`: its own connection, election store and rounds. */
async function processOver(path: string, now = () => T0) {
  const kv = await Deno.openKv(path);
  const election = await createStore(kv, { now });
  const rounds = await createRounds(kv, {
    election,
    electionIntervalMs: 60_000,
    adminToken: "presenter-token-0123456789",
    currentTtlMs: 0,
    now,
  });
  return { kv, rounds };
}

/** Two processes over one fresh database file, closed and removed after `test`. */
async function withTwoProcesses(
  test: (a: Awaited<ReturnType<typeof processOver>>, b: typeof a) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-phases-" });
  const a = await processOver(`${dir}/kv.sqlite3`);
  const b = await processOver(`${dir}/kv.sqlite3`);
  try {
    await test(a, b);
  } finally {
    a.kv.close();
    b.kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** A distinct 64-hex key for test `n` (the store keeps keys as given). */
const keyOf = (n: number) => n.toString(16).padStart(64, "0");

/** Registers keys `from`..`to` in round `id` through `rounds`, all at once. */
async function registerAll(rounds: Rounds, id: number, from: number, to: number) {
  const store = await rounds.storeOf(id);
  const keys = Array.from({ length: to - from + 1 }, (_, i) => keyOf(from + i));
  return await Promise.all(keys.map((key) => store.registerKey(key)));
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

Deno.test("two processes opening voting at once fix one partition", async () => {
  await withTwoProcesses(async (a, b) => {
    for (const keys of [8, 63, 64, 65, 130]) {
      const id = await a.rounds.start({ question: `${keys} keys?`, choices: [] });
      await registerAll(b.rounds, id, 1, keys);
      const [one, other] = await Promise.all([a.rounds.openVoting(id), b.rounds.openVoting(id)]);
      assert.deepEqual(one, other, `${keys}: one opening`);
      assert.equal(one.keysAtOpen, keys);
      const [groupsA, groupsB] = await Promise.all([a.rounds.groups(id), b.rounds.groups(id)]);
      assert.deepEqual(groupsA, groupsB);
      assert.deepEqual(groupsA.groups.flat(), range(1, keys), `${keys}: every key in one group`);
      assert.equal(groupsA.groups.length, Math.ceil(keys / 64));
    }
  });
});

Deno.test("two processes past the join deadline at once settle it once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-deadline-" });
  const clock = { now: T0 };
  const a = await processOver(`${dir}/kv.sqlite3`, () => clock.now);
  const b = await processOver(`${dir}/kv.sqlite3`, () => clock.now);
  try {
    const id = await a.rounds.start({ question: "Deadline?", choices: [], joinSeconds: 10 });
    await registerAll(a.rounds, id, 1, 9);
    clock.now = T0 + 10_000;
    // Both read the phase while a third key batch joins through both: one opening, at 9 keys.
    const [groupsA, groupsB] = await Promise.all([
      a.rounds.groups(id),
      b.rounds.groups(id),
      registerAll(b.rounds, id, 10, 12),
    ]);
    assert.equal(groupsA.keysAtOpen, groupsB.keysAtOpen);
    assert.equal(groupsA.keysAtOpen, 9, "the keys of the deadline, none after it");
    assert.deepEqual((await a.rounds.groups(id)).pending, [10, 11, 12]);
  } finally {
    a.kv.close();
    b.kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a registration racing the opening is before it exactly when its commit is", async () => {
  await withTwoProcesses(async (a, b) => {
    for (let trial = 0; trial < 5; trial++) {
      const id = await a.rounds.start({ question: `Trial ${trial}?`, choices: [] });
      await registerAll(a.rounds, id, 1, 8);
      // Ten keys join through one process while the other opens voting.
      const [registered, opened] = await Promise.all([
        registerAll(a.rounds, id, 9, 18),
        b.rounds.openVoting(id),
      ]);
      const keysAtOpen = opened.keysAtOpen!;
      assert.ok(keysAtOpen >= 8 && keysAtOpen <= 18, `${keysAtOpen}`);
      const phase = await a.kv.get(["rounds", "round", id, "phase"]);
      const keys = ledgerKeys(roundPrefix(id));
      for (const { id: keyId, key } of registered) {
        const entry = await a.kv.get(keys.keyId(key));
        const before = entry.versionstamp! < phase.versionstamp!;
        assert.equal(keyId <= keysAtOpen, before, `key ${keyId}, ${keysAtOpen} at the opening`);
      }
      for (const rounds of [a.rounds, b.rounds]) {
        assert.deepEqual(await rounds.groups(id), {
          phase: "voting",
          keysAtOpen,
          groups: [range(1, keysAtOpen)],
          pending: range(keysAtOpen + 1, 18),
        });
      }
    }
  });
});

Deno.test("a key registering while its round closes in another process: before the close, or 409", async () => {
  await withTwoProcesses(async (a, b) => {
    const id = await a.rounds.start({ question: "Closing?", choices: [] });
    const store = await a.rounds.storeOf(id);
    const answers = await Promise.allSettled([
      ...range(1, 12).map((n) => store.registerKey(keyOf(n))),
      b.rounds.start({ question: "Next?", choices: [] }),
    ]);
    const closed = await a.kv.get(["rounds", "round", id, "phase"]);
    const keys = ledgerKeys(roundPrefix(id));
    for (const [n, answer] of answers.slice(0, 12).entries()) {
      const entry = await a.kv.get(keys.keyId(keyOf(n + 1)));
      if (answer.status === "fulfilled") {
        assert.ok(entry.versionstamp! < closed.versionstamp!, "registered before the close");
      } else {
        assert.equal((answer.reason as { code?: string }).code, "round_closed");
        assert.equal(entry.versionstamp, null, "nothing stored");
      }
    }
  });
});

Deno.test("a round's directory holds at most 1,000 keys: 409 directory_full beyond", async () => {
  await withTwoProcesses(async (a) => {
    const id = await a.rounds.start({ question: "Full?", choices: [] });
    await registerAll(a.rounds, id, 1, ROUND_KEY_CAPACITY);
    const store = await a.rounds.storeOf(id);
    await assert.rejects(store.registerKey(keyOf(ROUND_KEY_CAPACITY + 1)), (error: Error) => {
      const { code, status } = error as Error & { code: string; status: number };
      assert.deepEqual([code, status], ["directory_full", 409]);
      assert.match(error.message, /at most 1000 keys/);
      return true;
    });
    assert.equal((await store.keyPage(0, 0)).total, ROUND_KEY_CAPACITY);
  });
});
