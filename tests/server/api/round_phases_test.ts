// A round's phases and groups through HTTP (protocol §4.9, §2.8), over in-memory Deno KV: votes
// refused while keys join, the presenter's opening and its refusals, the groups it fixes, a ring
// that is not a group refused, late joiners, the join deadline on an injected clock, and what
// GET /api/rounds lists.
import assert from "node:assert/strict";
import { RoundGroups, RoundList, VotingOpened } from "../../../lib/protocol/schemas.ts";
import { createApp } from "../../../server/app.ts";
import { createStore } from "../../../server/store/mod.ts";
import { createRounds } from "../../../server/store/rounds.ts";
import {
  type Answer,
  call,
  dumpKv,
  makeVoters,
  signedVote,
  type TestVoter,
} from "../../helpers/ledger_fixtures.ts";
import { testVerifier } from "../../helpers/test_verifier.ts";

const T0 = 1_700_000_000_000;
const ADMIN_TOKEN = "presenter-token-0123456789";
const COLOURS = ["Red", "Green", "Blue"];

/** The app with rounds over a fresh in-memory KV, on a clock the test moves. */
async function setup() {
  const clock = { now: T0 };
  const now = () => clock.now;
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv, { now });
  const rounds = await createRounds(kv, {
    election: store,
    electionIntervalMs: 60_000,
    adminToken: ADMIN_TOKEN,
    currentTtlMs: 0,
    now,
  });
  const app = createApp({ store, rounds, verifier: testVerifier });
  return { kv, clock, rounds, app };
}

type App = Awaited<ReturnType<typeof setup>>["app"];

/** A POST as the presenter (or with `authorization`), its body JSON when given. */
async function asPresenter(
  app: App,
  path: string,
  body?: unknown,
  authorization = `Bearer ${ADMIN_TOKEN}`,
): Promise<Answer> {
  // Every write call is JSON, a bodiless one included (protocol §4.1).
  const headers: Record<string, string> = { authorization, "content-type": "application/json" };
  const res = await app.request(path, {
    method: "POST",
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, type: res.headers.get("content-type"), body: await res.json() };
}

function assertError(res: Answer, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error.code, code, JSON.stringify(res.body));
  assert.ok(!res.body.error.message.endsWith("."));
}

/** Starts a round as the presenter; answers its id. */
async function startRound(app: App, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await asPresenter(app, "/api/rounds", {
    question: "Which colour?",
    choices: COLOURS,
    ...extra,
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

/** Registers `voters` in round `id`, in order; answers their ids. */
async function register(app: App, id: number, voters: TestVoter[]): Promise<number[]> {
  const ids = [];
  for (const v of voters) {
    const res = await call(app, "POST", `/api/rounds/${id}/pki/key`, { key: v.key });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    ids.push(res.body.id);
  }
  return ids;
}

const groupsOf = async (app: App, id: number) => {
  const res = await call(app, "GET", `/api/rounds/${id}/groups`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.ok(RoundGroups.safeParse(res.body).success, JSON.stringify(res.body));
  // The send window's inputs (protocol §7.4) are checked by hall_reads_test.ts; the groups here.
  const { verifyRate: _rate, sendWindowMs: _window, ...groups } = res.body;
  return groups;
};

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

Deno.test("a round joins, then the presenter opens voting: its groups, and only they vote", async (t) => {
  const { kv, app } = await setup();
  const voters = makeVoters(10);
  try {
    const id = await startRound(app);
    await register(app, id, voters.slice(0, 7));

    await t.step("join phase: /groups is empty, a vote is 409 voting_not_open", async () => {
      assert.deepEqual(await groupsOf(app, id), {
        phase: "join",
        keysAtOpen: null,
        groups: [],
        pending: [],
      });
      const before = await dumpKv(kv);
      const res = await call(
        app,
        "POST",
        `/api/rounds/${id}/vote`,
        signedVote(voters[0], voters.slice(0, 7), "Red"),
      );
      assertError(res, 409, "voting_not_open");
      assert.deepEqual(await dumpKv(kv), before, "nothing stored");
    });

    await t.step("/voting: 401 without the token, 404 for round 1 and unknown ids", async () => {
      assertError(
        await asPresenter(app, `/api/rounds/${id}/voting`, undefined, ""),
        401,
        "unauthorized",
      );
      for (const other of ["1", "99", "abc"]) {
        assertError(await asPresenter(app, `/api/rounds/${other}/voting`), 404, "unknown_round");
        const groups = await call(app, "GET", `/api/rounds/${other}/groups`);
        assertError(groups, 404, "unknown_round");
      }
    });

    await t.step("7 keys of 8: 409 too_few_voters, saying how many more", async () => {
      const res = await asPresenter(app, `/api/rounds/${id}/voting`);
      assertError(res, 409, "too_few_voters");
      assert.match(res.body.error.message, /7 joined, 1 more needed/);
      assert.equal(res.body.error.needed, 1);
      assert.equal(res.body.error.joined, 7);
      assert.equal(res.body.error.minVoters, 8);
    });

    await t.step("8 keys: 200 {phase: voting, groups}, the same again", async () => {
      await register(app, id, voters.slice(7, 8));
      const first = await asPresenter(app, `/api/rounds/${id}/voting`);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.ok(VotingOpened.safeParse(first.body).success);
      assert.deepEqual(first.body, { phase: "voting", groups: [range(1, 8)] });
      await register(app, id, voters.slice(8, 10));
      const again = await asPresenter(app, `/api/rounds/${id}/voting`);
      assert.deepEqual(again.body, first.body, "idempotent, late keys left out");
      assert.deepEqual(await groupsOf(app, id), {
        phase: "voting",
        keysAtOpen: 8,
        groups: [range(1, 8)],
        pending: [9, 10],
      });
    });

    await t.step("a ring that is not a group: 400 not_a_group, nothing stored", async () => {
      const before = await dumpKv(kv);
      const group = voters.slice(0, 8);
      const rings = [
        group.slice(0, 7), // a key left out
        voters.slice(0, 9), // a pending key added
        [group[1], group[0], ...group.slice(2)], // not in id order
        voters.slice(2, 10), // pending keys in place of members
      ];
      for (const ring of rings) {
        const signer = ring.includes(voters[2]) ? voters[2] : ring[0];
        const res = await call(
          app,
          "POST",
          `/api/rounds/${id}/vote`,
          signedVote(signer, ring, "Red"),
        );
        assertError(res, 400, "not_a_group");
      }
      assert.deepEqual(await dumpKv(kv), before, "nothing stored");
    });

    await t.step("the group's ring: 202; a pending key cannot vote at all", async () => {
      const group = voters.slice(0, 8);
      const res = await call(
        app,
        "POST",
        `/api/rounds/${id}/vote`,
        signedVote(group[3], group, "Blue"),
      );
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const late = voters[9];
      const refused = await call(
        app,
        "POST",
        `/api/rounds/${id}/vote`,
        signedVote(late, [...group.slice(1), late], "Red"),
      );
      assertError(refused, 400, "not_a_group");
    });

    await t.step("GET /api/rounds lists the phase, minVoters, lateJoiners, openedAt", async () => {
      const list = await call(app, "GET", "/api/rounds");
      assert.ok(RoundList.safeParse(list.body).success, JSON.stringify(list.body));
      const [first, round] = list.body.rounds;
      assert.deepEqual(
        [first.phase, first.minVoters, first.lateJoiners, first.joinDeadline],
        ["closed", 8, false, null],
      );
      assert.deepEqual(
        [round.phase, round.minVoters, round.lateJoiners, round.openedAt, round.joinDeadline],
        ["voting", 8, false, T0, null],
      );
    });

    await t.step("closed by the next round: /voting 409 round_closed, groups kept", async () => {
      const next = await startRound(app);
      const res = await asPresenter(app, `/api/rounds/${id}/voting`);
      assertError(res, 409, "round_closed");
      assert.equal(res.body.error.current, next);
      const groups = await groupsOf(app, id);
      assert.deepEqual([groups.phase, groups.keysAtOpen, groups.groups], [
        "closed",
        8,
        [range(1, 8)],
      ]);
      const list = await call(app, "GET", "/api/rounds");
      assert.equal(list.body.rounds[1].phase, "closed");
      assert.equal(list.body.rounds[2].phase, "join");
    });
  } finally {
    kv.close();
  }
});

Deno.test("late joiners on: each 8 keys after the opening vote as a group of their own", async () => {
  const { kv, app } = await setup();
  const voters = makeVoters(19);
  try {
    const id = await startRound(app, { lateJoiners: true, minVoters: 8 });
    await register(app, id, voters.slice(0, 9));
    assert.equal((await asPresenter(app, `/api/rounds/${id}/voting`)).status, 200);
    await register(app, id, voters.slice(9, 16));
    assert.deepEqual((await groupsOf(app, id)).pending, range(10, 16));
    const early = voters.slice(9, 16);
    const short = await call(
      app,
      "POST",
      `/api/rounds/${id}/vote`,
      signedVote(early[0], early, "Red"),
    );
    assertError(short, 400, "not_a_group");
    await register(app, id, voters.slice(16, 19));
    assert.deepEqual(await groupsOf(app, id), {
      phase: "voting",
      keysAtOpen: 9,
      groups: [range(1, 9), range(10, 17)],
      pending: [18, 19],
    });
    const late = voters.slice(9, 17);
    const res = await call(
      app,
      "POST",
      `/api/rounds/${id}/vote`,
      signedVote(late[7], late, "Green"),
    );
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const opening = voters.slice(0, 9);
    const ok = await call(
      app,
      "POST",
      `/api/rounds/${id}/vote`,
      signedVote(opening[0], opening, "Red"),
    );
    assert.equal(ok.status, 202, JSON.stringify(ok.body));
  } finally {
    kv.close();
  }
});

Deno.test("joinSeconds: at the deadline voting opens by itself with enough keys, never later", async (t) => {
  await t.step("8 keys by the deadline: the first read after it opens voting", async () => {
    const { kv, clock, app } = await setup();
    try {
      const id = await startRound(app, { joinSeconds: 10 });
      await register(app, id, makeVoters(8));
      clock.now = T0 + 9_999;
      assert.equal((await groupsOf(app, id)).phase, "join", "not before the deadline");
      const listed = await call(app, "GET", "/api/rounds");
      assert.equal(listed.body.rounds[1].joinDeadline, T0 + 10_000);
      clock.now = T0 + 10_000;
      assert.deepEqual(await groupsOf(app, id), {
        phase: "voting",
        keysAtOpen: 8,
        groups: [range(1, 8)],
        pending: [],
      });
      const list = await call(app, "GET", "/api/rounds");
      assert.equal(list.body.rounds[1].openedAt, T0 + 10_000);
    } finally {
      kv.close();
    }
  });

  await t.step("a key after the deadline opens voting first, and is pending", async () => {
    const { kv, clock, app } = await setup();
    try {
      const id = await startRound(app, { joinSeconds: 10 });
      const voters = makeVoters(9);
      await register(app, id, voters.slice(0, 8));
      clock.now = T0 + 60_000;
      await register(app, id, voters.slice(8));
      const groups = await groupsOf(app, id);
      assert.deepEqual([groups.keysAtOpen, groups.pending], [8, [9]]);
    } finally {
      kv.close();
    }
  });

  await t.step("7 keys at the deadline: never by itself, the presenter opens it", async () => {
    const { kv, clock, app } = await setup();
    try {
      const id = await startRound(app, { joinSeconds: 10 });
      const voters = makeVoters(9);
      await register(app, id, voters.slice(0, 7));
      clock.now = T0 + 10_000;
      assert.equal((await groupsOf(app, id)).phase, "join");
      await register(app, id, voters.slice(7));
      clock.now = T0 + 20_000;
      assert.equal((await groupsOf(app, id)).phase, "join", "9 keys now, still joining");
      const res = await asPresenter(app, `/api/rounds/${id}/voting`);
      assert.deepEqual(res.body, { phase: "voting", groups: [range(1, 9)] });
    } finally {
      kv.close();
    }
  });
});

Deno.test("POST /api/rounds takes minVoters 8-64, joinSeconds 10-600, lateJoiners boolean", async () => {
  const { kv, app } = await setup();
  try {
    const bad = [
      { minVoters: 7 },
      { minVoters: 65 },
      { minVoters: 8.5 },
      { joinSeconds: 9 },
      { joinSeconds: 601 },
      { lateJoiners: "yes" },
    ];
    for (const extra of bad) {
      const res = await asPresenter(app, "/api/rounds", { question: "Q?", choices: [], ...extra });
      assertError(res, 400, "invalid_request");
      assert.match(res.body.error.message, new RegExp(Object.keys(extra)[0]));
    }
    const id = await startRound(app, { minVoters: 64, joinSeconds: 600, lateJoiners: true });
    const { body } = await call(app, "GET", "/api/rounds");
    const round = body.rounds.find((r: { id: number }) => r.id === id);
    assert.deepEqual(
      [round.minVoters, round.lateJoiners, round.joinDeadline, round.blockIntervalMs],
      [64, true, T0 + 600_000, 15_000],
    );
  } finally {
    kv.close();
  }
});

Deno.test("a round started before rounds had phases votes as it did: from its start, any ring", async () => {
  const { kv, app } = await setup();
  const voters = makeVoters(4);
  try {
    const question = "Started before phases?";
    await kv.atomic()
      .set(["rounds", "round", 2], {
        id: 2,
        question,
        choices: [],
        createdAt: T0,
        blockIntervalMs: 5000,
      })
      .set(["rounds", "cfg", "current"], { id: 2 })
      .commit();
    await register(app, 2, voters);
    const ring = voters.slice(0, 3);
    const res = await call(app, "POST", "/api/rounds/2/vote", signedVote(ring[1], ring, "Any"));
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const list = await call(app, "GET", "/api/rounds");
    assert.equal(list.body.rounds[1].phase, "voting");
  } finally {
    kv.close();
  }
});
