// Rounds through HTTP (protocol §4.9), over in-memory Deno KV: the list, the presenter's calls and
// their refusals, each round's ledger API under /api/rounds/{id}/ with its choices, only the current
// round writable, the open block's countdown, sealing one round without touching another, ids
// handed out without gaps, and the presenter's token kept once in KV. Status, then content type,
// then body.
import assert from "node:assert/strict";
import { verifyHead } from "../../../lib/protocol/head.ts";
import { ErrorBody, RoundList } from "../../../lib/protocol/schemas.ts";
import { createApp } from "../../../server/app.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore, type Store } from "../../../server/store/mod.ts";
import {
  type AdminRecord,
  createRounds,
  nextSealAt,
  roundKeys,
  type RoundsOptions,
  sealDue,
} from "../../../server/store/rounds.ts";
import {
  type Answer,
  call,
  dumpKv,
  makeVoters,
  proofVerifies,
  ringFor,
  signedVote,
  type TestVoter,
} from "../../helpers/ledger_fixtures.ts";
import { testVerifier } from "../../helpers/test_verifier.ts";

const GENESIS_AT = 1_700_000_000_000;
const ADMIN_TOKEN = "presenter-token-0123456789";
/** Round 1's interval in these tests, as if `BLOCK_INTERVAL_MS=250`. */
const ELECTION_INTERVAL_MS = 250;
const COLOURS = ["Red", "Green", "Blue"];

type Setup = Partial<Omit<RoundsOptions, "election">>;

/** The app with rounds over a fresh in-memory KV; the current round is read afresh every time. */
async function setup(options: Setup = {}) {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv, { now: () => GENESIS_AT });
  const rounds = await createRounds(kv, {
    election: store,
    electionIntervalMs: ELECTION_INTERVAL_MS,
    adminToken: ADMIN_TOKEN,
    currentTtlMs: 0,
    ...options,
  });
  const app = createApp({ store, rounds, verifier: testVerifier });
  return { kv, store, rounds, app };
}

type App = Awaited<ReturnType<typeof setup>>["app"];

/** `call` with the presenter's `Authorization` header (or the one given). */
async function asPresenter(
  app: App,
  method: string,
  path: string,
  body?: unknown,
  authorization = `Bearer ${ADMIN_TOKEN}`,
): Promise<Answer> {
  const headers: Record<string, string> = { authorization };
  if (method !== "GET") headers["content-type"] = "application/json";
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
  const res = await app.request(path, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the raw text is kept so the assertion on it shows what came back.
  }
  return { status: res.status, type: res.headers.get("content-type"), body: parsed };
}

/** Starts a round as the presenter and answers its id. */
async function startRound(app: App, body: unknown): Promise<number> {
  const res = await asPresenter(app, "POST", "/api/rounds", body);
  assertOk(res, 201);
  return res.body.id;
}

function assertOk(res: Answer, status: number) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.match(res.type ?? "", /^application\/json/);
}

function assertError(res: Answer, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.match(res.type ?? "", /^application\/json/);
  assert.ok(ErrorBody.safeParse(res.body).success, JSON.stringify(res.body));
  assert.equal(res.body.error.code, code);
  assert.ok(res.body.error.message.length > 0);
  assert.ok(!res.body.error.message.endsWith("."), "messages carry no trailing period");
}

/** Registers `voters` in the ledger under `base` (`/api` or `/api/rounds/{id}`), ids 1, 2, … */
async function register(app: App, base: string, voters: TestVoter[]) {
  for (const [i, v] of voters.entries()) {
    const res = await call(app, "POST", `${base}/pki/key`, { key: v.key });
    assertOk(res, 201);
    assert.equal(res.body.id, i + 1);
  }
}

/**
 * `voters[i]` votes `payloads[i]` in the ledger under `base`: in round 1 in a ring of four; in a
 * later round, once voting is open, in a ring of its one group, `voters` (registered in order).
 */
async function vote(app: App, base: string, voters: TestVoter[], payloads: string[]) {
  const accepted = [];
  const round = /^\/api\/rounds\/([2-9]|[1-9][0-9]+)$/.test(base);
  if (round) assertOk(await asPresenter(app, "POST", `${base}/voting`), 200);
  for (const [i, payload] of payloads.entries()) {
    const res = await call(
      app,
      "POST",
      `${base}/vote`,
      signedVote(voters[i], round ? voters : ringFor(voters[i], voters, 4), payload),
    );
    assertOk(res, 202);
    accepted.push(res.body as { voteId: string; blockId: number });
  }
  return accepted;
}

/** The text of a GET answer, after checking it is a 200. */
async function text(app: App, path: string): Promise<string> {
  const res = await app.request(path);
  assert.equal(res.status, 200, path);
  return await res.text();
}

Deno.test("GET /api/rounds on a fresh server lists round 1 alone, current", async () => {
  const { kv, app } = await setup();
  try {
    const res = await call(app, "GET", "/api/rounds");
    assertOk(res, 200);
    assert.deepEqual(res.body, {
      current: 1,
      rounds: [{
        id: 1,
        question: "",
        choices: [],
        createdAt: GENESIS_AT,
        blockIntervalMs: ELECTION_INTERVAL_MS,
        phase: "voting",
        minVoters: 8,
        lateJoiners: false,
        openedAt: GENESIS_AT,
        joinDeadline: null,
        relayed: false,
      }],
    });
    assert.ok(RoundList.safeParse(res.body).success);
  } finally {
    kv.close();
  }
});

Deno.test("POST /api/rounds is the presenter's: 401 without the token, 201 {id} with it", async (t) => {
  const started = 1_700_000_123_456;
  const { kv, app } = await setup({ now: () => started });
  const body = { question: "  Which colour?\n", choices: [" Red", "Green\t", "  Blue  "] };
  try {
    await t.step("no token, a wrong token of either length, another scheme: 401", async () => {
      const before = await dumpKv(kv);
      const wrongSameLength = ADMIN_TOKEN.slice(0, -1) + "X";
      assert.equal(wrongSameLength.length, ADMIN_TOKEN.length);
      const refused = [
        await call(app, "POST", "/api/rounds", body),
        await asPresenter(app, "POST", "/api/rounds", body, `Bearer ${wrongSameLength}`),
        await asPresenter(app, "POST", "/api/rounds", body, `Bearer ${ADMIN_TOKEN}0`),
        await asPresenter(app, "POST", "/api/rounds", body, `Bearer ${ADMIN_TOKEN.slice(1)}`),
        await asPresenter(app, "POST", "/api/rounds", body, "Bearer "),
        await asPresenter(app, "POST", "/api/rounds", body, `Basic ${ADMIN_TOKEN}`),
        await asPresenter(app, "POST", "/api/rounds", body, ADMIN_TOKEN),
      ];
      for (const res of refused) assertError(res, 401, "unauthorized");
      const res = await app.request("/api/rounds", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(res.status, 401);
      assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer realm=/);
      await res.body?.cancel();
      assert.deepEqual(await dumpKv(kv), before, "a refused start stores nothing");
    });

    await t.step("the token: 201 {id: 2}", async () => {
      const res = await asPresenter(app, "POST", "/api/rounds", body);
      assertOk(res, 201);
      assert.deepEqual(res.body, { id: 2 });
    });

    await t.step("the list shows round 2, current, trimmed, sealed every 15,000 ms", async () => {
      const res = await call(app, "GET", "/api/rounds");
      assertOk(res, 200);
      assert.equal(res.body.current, 2);
      assert.deepEqual(res.body.rounds.map((r: { id: number }) => r.id), [1, 2]);
      assert.deepEqual(res.body.rounds[1], {
        id: 2,
        question: "Which colour?",
        choices: COLOURS,
        createdAt: started,
        blockIntervalMs: 15_000,
        phase: "join",
        minVoters: 8,
        lateJoiners: false,
        openedAt: null,
        joinDeadline: null,
        relayed: false,
      });
    });

    await t.step("the scheme's name in any case: the token is what counts", async () => {
      const res = await asPresenter(
        app,
        "POST",
        "/api/rounds",
        { question: "Again?", choices: [] },
        `bearer ${ADMIN_TOKEN}`,
      );
      assertOk(res, 201);
      assert.deepEqual(res.body, { id: 3 });
      const other = await app.request("/api/presenter", {
        headers: { authorization: `BEARER ${ADMIN_TOKEN}` },
      });
      assert.equal(other.status, 204);
      await other.body?.cancel();
    });

    await t.step("GET /api/presenter: 204 with the token, 401 without", async () => {
      const ok = await app.request("/api/presenter", {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      assert.equal(ok.status, 204);
      assert.equal(ok.headers.get("content-type"), null);
      assert.equal(await ok.text(), "");
      assertError(await call(app, "GET", "/api/presenter"), 401, "unauthorized");
      assertError(
        await asPresenter(app, "GET", "/api/presenter", undefined, "Bearer wrong-token"),
        401,
        "unauthorized",
      );
    });
  } finally {
    kv.close();
  }
});

Deno.test("POST /api/rounds refuses a malformed round with 400 invalid_request and its reason", async () => {
  const { kv, app } = await setup();
  const question = "Which colour?";
  const cases: { desc: string; body: unknown; reason: RegExp }[] = [
    { desc: "an empty question", body: { question: "", choices: [] }, reason: /question/ },
    { desc: "a blank question", body: { question: " \n\t ", choices: [] }, reason: /question/ },
    {
      desc: "a 201-character question",
      body: { question: "q".repeat(201), choices: [] },
      reason: /question/,
    },
    { desc: "no question", body: { choices: COLOURS }, reason: /question/ },
    { desc: "1 choice", body: { question, choices: ["Red"] }, reason: /choices.*2 to 12/ },
    {
      desc: "13 choices",
      body: { question, choices: Array.from({ length: 13 }, (_, i) => `Choice ${i}`) },
      reason: /choices.*2 to 12/,
    },
    {
      desc: "duplicate choices",
      body: { question, choices: ["Red", "Green", "Red"] },
      reason: /choices.*distinct/,
    },
    {
      desc: "choices equal once trimmed",
      body: { question, choices: ["Red", " Red "] },
      reason: /choices.*distinct/,
    },
    {
      desc: "a 101-character choice",
      body: { question, choices: ["Red", "x".repeat(101)] },
      reason: /choices/,
    },
    { desc: "an empty choice", body: { question, choices: ["Red", "  "] }, reason: /choices/ },
    { desc: "choices not a list", body: { question, choices: "Red" }, reason: /choices/ },
    {
      desc: "blockIntervalMs 999",
      body: { question, choices: [], blockIntervalMs: 999 },
      reason: /blockIntervalMs.*at least 1000/,
    },
    {
      desc: "blockIntervalMs 3,600,001",
      body: { question, choices: [], blockIntervalMs: 3_600_001 },
      reason: /blockIntervalMs.*at most 3600000/,
    },
    {
      desc: "blockIntervalMs not an integer",
      body: { question, choices: [], blockIntervalMs: 1500.5 },
      reason: /blockIntervalMs/,
    },
    {
      desc: "blockIntervalMs as text",
      body: { question, choices: [], blockIntervalMs: "5000" },
      reason: /blockIntervalMs/,
    },
    { desc: "a body that is not JSON", body: "{question:", reason: /not valid JSON/ },
    { desc: "a JSON array", body: [], reason: /Invalid body/ },
  ];
  try {
    const before = await dumpKv(kv);
    for (const { desc, body, reason } of cases) {
      const res = await asPresenter(app, "POST", "/api/rounds", body);
      assertError(res, 400, "invalid_request");
      assert.match(res.body.error.message, reason, desc);
    }
    assert.deepEqual(await dumpKv(kv), before, "a refused start stores nothing");
    const list = await call(app, "GET", "/api/rounds");
    assert.equal(list.body.current, 1);
    assert.equal(list.body.rounds.length, 1);
  } finally {
    kv.close();
  }
});

Deno.test("POST /api/rounds takes the bounds themselves", async () => {
  const { kv, app } = await setup();
  try {
    const twelve = Array.from({ length: 12 }, (_, i) => `${i}`.padEnd(100, "x"));
    const bodies = [
      { question: "q".repeat(200), choices: twelve },
      { question: "Free text?", choices: [], blockIntervalMs: 1_000 },
      { question: "Two?", choices: ["Yes", "No"], blockIntervalMs: 3_600_000 },
    ];
    for (const [i, body] of bodies.entries()) assert.equal(await startRound(app, body), i + 2);
    const { body } = await call(app, "GET", "/api/rounds");
    assert.equal(body.current, 4);
    assert.deepEqual(body.rounds[1].choices, twelve);
    assert.deepEqual(
      body.rounds.map((r: { blockIntervalMs: number }) => r.blockIntervalMs),
      [ELECTION_INTERVAL_MS, 15_000, 1_000, 3_600_000],
    );
  } finally {
    kv.close();
  }
});

Deno.test("a round's ledger API lives under /api/rounds/{id}/ and takes only its choices", async (t) => {
  const { kv, app } = await setup();
  const voters = makeVoters(8);
  try {
    assert.equal(await startRound(app, { question: "Which colour?", choices: COLOURS }), 2);

    await t.step("8 keys register in round 2, ids 1 to 8", async () => {
      await register(app, "/api/rounds/2", voters);
      const page = await call(app, "GET", "/api/rounds/2/pki/key/offset/0/limit/100");
      assertOk(page, 200);
      assert.equal(page.body.total, 8);
      const election = await call(app, "GET", "/api/pki/key/offset/0/limit/100");
      assert.equal(election.body.total, 0, "round 1's directory is another");
    });

    await t.step("a vote for a choice, really signed: 202", async () => {
      const [accepted] = await vote(app, "/api/rounds/2", voters, ["Green"]);
      assert.equal(accepted.blockId, 1);
    });

    await t.step("a payload outside the choices: 400 not_a_choice listing them", async () => {
      const before = await dumpKv(kv);
      for (const payload of ["Purple", "green", " Green", "Green ", ""]) {
        const submission = signedVote(voters[1], ringFor(voters[1], voters, 4), payload);
        const res = await call(app, "POST", "/api/rounds/2/vote", submission);
        assertError(res, 400, "not_a_choice");
        assert.deepEqual(res.body.error.choices, COLOURS);
        assert.match(res.body.error.message, /is not one of this round's choices/);
        const tag = await call(app, "GET", `/api/rounds/2/tag/${submission.tag}`);
        assertError(tag, 404, "unknown_tag");
      }
      assert.deepEqual(await dumpKv(kv), before, "nothing stored");
      const open = await call(app, "GET", "/api/rounds/2/block/open");
      assert.equal(open.body.votes, 1);
      const page = await call(app, "GET", "/api/rounds/2/pki/key/offset/0/limit/100");
      assert.equal(page.body.total, 8);
    });

    await t.step("the refused voter's tag stays unused: a choice afterwards is 202", async () => {
      const res = await call(
        app,
        "POST",
        "/api/rounds/2/vote",
        signedVote(voters[1], voters, "Blue"),
      );
      assertOk(res, 202);
    });

    await t.step("round 2's server key is its own", async () => {
      const own = await call(app, "GET", "/api/rounds/2/server-key");
      assertOk(own, 200);
      const election = await call(app, "GET", "/api/server-key");
      assertOk(election, 200);
      assert.match(own.body.key, /^[0-9a-f]{64}$/);
      assert.notEqual(own.body.key, election.body.key);
    });
  } finally {
    kv.close();
  }
});

Deno.test("round 1 answers under /api/rounds/1/ byte for byte as under /api/", async () => {
  const { kv, store, app } = await setup();
  const voters = makeVoters(4);
  try {
    await register(app, "/api/rounds/1", voters);
    await vote(app, "/api/rounds/1", voters, ["Free text, any payload", "Yes"]);
    await sealNextBlock(store, GENESIS_AT + 1000);
    for (
      const path of [
        "block/status",
        "server-key",
        "tally",
        "blocks?from=0&limit=10",
        "block/id/1/votes",
        "pki/key/offset/0/limit/10",
      ]
    ) {
      assert.equal(await text(app, `/api/rounds/1/${path}`), await text(app, `/api/${path}`), path);
    }
    const status = await call(app, "GET", "/api/rounds/1/block/status");
    assert.equal(status.body.height, 1);
  } finally {
    kv.close();
  }
});

Deno.test("once round 2 starts, round 1 takes no keys or votes (409 round_closed) and keeps its reads", async () => {
  const { kv, store, app } = await setup();
  const voters = makeVoters(5);
  try {
    await register(app, "/api", voters.slice(0, 4));
    await vote(app, "/api", voters, ["Yes", "No", "Yes"]);
    await sealNextBlock(store, GENESIS_AT + 1000);
    const tally = await text(app, "/api/tally");
    const blocks = await text(app, "/api/blocks?from=0&limit=10");
    assert.equal(await startRound(app, { question: "Which colour?", choices: COLOURS }), 2);

    const before = await dumpKv(kv);
    const refused = [
      await call(app, "POST", "/api/vote", signedVote(voters[3], voters.slice(0, 4), "No")),
      await call(app, "POST", "/api/pki/key", { key: voters[4].key }),
      await call(app, "POST", "/api/rounds/1/vote", signedVote(voters[3], voters, "No")),
      await call(app, "POST", "/api/rounds/1/pki/key", { key: voters[4].key }),
    ];
    for (const res of refused) {
      assertError(res, 409, "round_closed");
      assert.equal(res.body.error.current, 2);
      assert.match(res.body.error.message, /Round 1 is over.*current round is 2/);
    }
    assert.deepEqual(await dumpKv(kv), before, "nothing stored");
    assert.equal(await text(app, "/api/tally"), tally, "round 1's tally is unchanged");
    assert.equal(await text(app, "/api/blocks?from=0&limit=10"), blocks);
    assert.equal(await text(app, "/api/rounds/1/tally"), tally);

    assert.equal(await startRound(app, { question: "Free text?", choices: [] }), 3);
    const closed = await call(app, "POST", "/api/rounds/2/pki/key", { key: voters[4].key });
    assertError(closed, 409, "round_closed");
    assert.equal(closed.body.error.current, 3);
    // A witness may still cosign a closed round's log: the round check lets it through.
    const cosigned = await call(app, "POST", "/api/rounds/2/log/cosignature", { vkey: "x" });
    assertError(cosigned, 400, "invalid_request");
    await register(app, "/api/rounds/3", voters.slice(0, 4));
  } finally {
    kv.close();
  }
});

Deno.test("a malformed or unknown round id is 404 unknown_round", async () => {
  const { kv, app } = await setup();
  try {
    await startRound(app, { question: "Free text?", choices: [] });
    const ids = ["0", "abc", "99", "-1", "02", "1e1", "2.0", "1234567890", "%32x"];
    for (const id of ids) {
      for (const path of ["block/status", "block/open", "server-key", "tally"]) {
        const res = await call(app, "GET", `/api/rounds/${id}/${path}`);
        assertError(res, 404, "unknown_round");
        assert.match(res.body.error.message, /^No round "/);
      }
      const before = await dumpKv(kv);
      assertError(await call(app, "POST", `/api/rounds/${id}/pki/key`, {}), 404, "unknown_round");
      assertError(await call(app, "POST", `/api/rounds/${id}/vote`, {}), 404, "unknown_round");
      assert.deepEqual(await dumpKv(kv), before, `no ledger made for round "${id}"`);
    }
  } finally {
    kv.close();
  }
});

Deno.test("GET /api/rounds/{id}/block/open counts the waiting votes and names the next seal tick", async () => {
  const { kv, rounds, app } = await setup();
  const voters = makeVoters(8);
  try {
    await startRound(app, { question: "Which colour?", choices: COLOURS });
    await register(app, "/api/rounds/2", voters);

    const openBlock = async (id: number) => {
      const before = Date.now();
      const res = await call(app, "GET", `/api/rounds/${id}/block/open`);
      const after = Date.now();
      assertOk(res, 200);
      const { height, votes, intervalMs, nextSealAt: next } = res.body;
      assert.deepEqual(Object.keys(res.body).sort(), [
        "height",
        "intervalMs",
        "nextSealAt",
        "votes",
      ]);
      assert.equal(next % intervalMs, 0, "a seal tick is a multiple of the interval");
      assert.ok(next > before && next <= after + intervalMs, `${next} is the next tick`);
      return { height, votes, intervalMs };
    };

    assert.deepEqual(await openBlock(2), { height: 1, votes: 0, intervalMs: 15_000 });
    await vote(app, "/api/rounds/2", voters, ["Red", "Blue", "Red"]);
    assert.deepEqual(await openBlock(2), { height: 1, votes: 3, intervalMs: 15_000 });
    await sealNextBlock(await rounds.storeOf(2), Date.now());
    assert.deepEqual(await openBlock(2), { height: 2, votes: 0, intervalMs: 15_000 });
    assert.deepEqual(await openBlock(1), {
      height: 1,
      votes: 0,
      intervalMs: ELECTION_INTERVAL_MS,
    });
  } finally {
    kv.close();
  }
});

Deno.test("sealing round 2 seals its votes under its own key and leaves round 1's blocks alone", async () => {
  const { kv, store, rounds, app } = await setup();
  const electionVoters = makeVoters(4);
  const voters = makeVoters(8);
  try {
    await register(app, "/api", electionVoters);
    await vote(app, "/api", electionVoters, ["Yes", "No"]);
    await sealNextBlock(store, GENESIS_AT + 1000);
    const electionBlocks = await text(app, "/api/blocks?from=0&limit=10");
    const electionStatus = await text(app, "/api/block/status");

    await startRound(app, { question: "Which colour?", choices: COLOURS });
    await register(app, "/api/rounds/2", voters);
    const accepted = await vote(app, "/api/rounds/2", voters, ["Red", "Green", "Red", "Blue"]);
    const round2: Store = await rounds.storeOf(2);
    const sealed = await sealNextBlock(round2, Date.now());
    assert.deepEqual(sealed.map((b) => [b.height, b.size]), [[1, 4]]);
    assert.deepEqual(await sealNextBlock(round2, Date.now()), [], "nothing left to seal");

    const tally = await call(app, "GET", "/api/rounds/2/tally");
    assertOk(tally, 200);
    assert.equal(tally.body.total, 4);
    assert.deepEqual(tally.body.results[0], { payload: "Red", count: 2 });
    assert.deepEqual(
      tally.body.results.map((r: { payload: string }) => r.payload).sort(),
      ["Blue", "Green", "Red"],
    );
    for (const { voteId } of accepted) {
      const proof = await call(app, "GET", `/api/rounds/2/block/id/1/vote/${voteId}`);
      assertOk(proof, 200);
      assert.ok(proofVerifies(proof.body));
    }
    const key = (await call(app, "GET", "/api/rounds/2/server-key")).body.key;
    const status = await call(app, "GET", "/api/rounds/2/block/status");
    assertOk(status, 200);
    assert.equal(status.body.height, 1);
    assert.ok(verifyHead(key, status.body), "round 2's head is signed by round 2's key");
    const electionKey = (await call(app, "GET", "/api/server-key")).body.key;
    assert.ok(!verifyHead(electionKey, status.body));

    assert.equal(await text(app, "/api/blocks?from=0&limit=10"), electionBlocks);
    assert.equal(await text(app, "/api/block/status"), electionStatus);
    assert.equal((await call(app, "GET", "/api/tally")).body.total, 2);
  } finally {
    kv.close();
  }
});

Deno.test("concurrent starts get ids 2 and 3, no gap, the later one current", async (t) => {
  await t.step("two requests to one process", async () => {
    const { kv, app } = await setup();
    try {
      const answers = await Promise.all([
        asPresenter(app, "POST", "/api/rounds", { question: "First?", choices: [] }),
        asPresenter(app, "POST", "/api/rounds", { question: "Second?", choices: [] }),
      ]);
      for (const res of answers) assertOk(res, 201);
      assert.deepEqual(answers.map((a) => a.body.id).sort(), [2, 3]);
      const { body } = await call(app, "GET", "/api/rounds");
      assert.equal(body.current, 3);
      assert.deepEqual(body.rounds.map((r: { id: number }) => r.id), [1, 2, 3]);
    } finally {
      kv.close();
    }
  });

  await t.step("five requests to two processes over one database", async () => {
    const { kv, store, app } = await setup();
    try {
      const other = createApp({
        store,
        rounds: await createRounds(kv, {
          election: store,
          electionIntervalMs: ELECTION_INTERVAL_MS,
          adminToken: ADMIN_TOKEN,
          currentTtlMs: 0,
        }),
        verifier: testVerifier,
      });
      const answers = await Promise.all(
        Array.from(
          { length: 5 },
          (_, i) =>
            asPresenter(i % 2 ? other : app, "POST", "/api/rounds", {
              question: `Question ${i}?`,
              choices: [],
            }),
        ),
      );
      for (const res of answers) assertOk(res, 201);
      assert.deepEqual(answers.map((a) => a.body.id).sort(), [2, 3, 4, 5, 6]);
      for (const server of [app, other]) {
        const { body } = await call(server, "GET", "/api/rounds");
        assert.equal(body.current, 6);
        assert.deepEqual(body.rounds.map((r: { id: number }) => r.id), [1, 2, 3, 4, 5, 6]);
      }
      for (let id = 2; id <= 6; id++) {
        assert.equal(
          await text(other, `/api/rounds/${id}/server-key`),
          await text(app, `/api/rounds/${id}/server-key`),
          `both processes sign round ${id} with one key`,
        );
      }
    } finally {
      kv.close();
    }
  });
});

Deno.test("GET /api/rounds never names a current round it does not list", async () => {
  const { kv, store, app } = await setup();
  try {
    // Another process starts rounds while this one lists them.
    const other = await createRounds(kv, {
      election: store,
      electionIntervalMs: ELECTION_INTERVAL_MS,
      adminToken: ADMIN_TOKEN,
      currentTtlMs: 0,
    });
    for (let i = 0; i < 100; i++) {
      const [res] = await Promise.all([
        call(app, "GET", "/api/rounds"),
        other.start({ question: `Question ${i}?`, choices: [] }),
      ]);
      assertOk(res, 200);
      const ids = res.body.rounds.map((r: { id: number }) => r.id);
      assert.ok(ids.includes(res.body.current), `current ${res.body.current} in ${ids.length}`);
    }
  } finally {
    kv.close();
  }
});

Deno.test("with no ADMIN_TOKEN, the token made at first start is stored once and shared", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    const options = { election: store, electionIntervalMs: 60_000, adminToken: null };
    const [first, racing] = await Promise.all([
      createRounds(kv, options),
      createRounds(kv, options),
    ]);
    const second = await createRounds(kv, options);
    assert.match(first.adminToken, /^[A-Za-z0-9_-]{22}$/, "16 random bytes, base64url");
    assert.equal(racing.adminToken, first.adminToken);
    assert.equal(second.adminToken, first.adminToken);
    const stored = [];
    for await (const entry of kv.list({ prefix: ["rounds", "cfg"] })) stored.push(entry);
    assert.deepEqual(stored.map((e) => [e.key, e.value]), [
      [roundKeys.admin(), { token: first.adminToken }],
    ]);

    const app = createApp({ store, rounds: second, verifier: testVerifier });
    const res = await asPresenter(
      app,
      "POST",
      "/api/rounds",
      { question: "Shared?", choices: [] },
      `Bearer ${first.adminToken}`,
    );
    assertOk(res, 201);

    const given = await createRounds(kv, { ...options, adminToken: ADMIN_TOKEN });
    assert.equal(given.adminToken, ADMIN_TOKEN, "ADMIN_TOKEN wins over the stored one");
    assert.equal((await kv.get<AdminRecord>(roundKeys.admin())).value?.token, first.adminToken);
  } finally {
    kv.close();
  }
});

Deno.test("nextSealAt is the first multiple of the interval after now; sealDue sees each tick once", () => {
  assert.equal(nextSealAt(0, 5000), 5000);
  assert.equal(nextSealAt(1, 5000), 5000);
  assert.equal(nextSealAt(4999, 5000), 5000);
  assert.equal(nextSealAt(5000, 5000), 10_000, "a tick at now is past: the next one");
  assert.equal(nextSealAt(1_700_000_001_234, 1000), 1_700_000_002_000);
  assert.equal(nextSealAt(1_700_000_001_234, 3_600_000), 1_700_002_800_000);

  assert.equal(sealDue(4999, 5000, 5000), true, "the tick itself");
  assert.equal(sealDue(5000, 5001, 5000), false, "the tick was the previous run's");
  assert.equal(sealDue(5000, 9999, 5000), false);
  assert.equal(sealDue(9999, 10_000, 5000), true);
  assert.equal(sealDue(7000, 7000, 5000), false, "no time passed");
  assert.equal(sealDue(1000, 23_000, 5000), true, "several ticks missed: due once");
  // Against the definition: a tick k·interval lies in (previous, now].
  for (const interval of [1000, 5000, 7919]) {
    for (let previous = 0; previous < 3 * interval; previous += 97) {
      for (const step of [0, 1, 250, interval - 1, interval, 2 * interval + 3]) {
        const now = previous + step;
        let ticked = false;
        for (let k = 0; k * interval <= now; k++) {
          if (k * interval > previous) ticked = true;
        }
        assert.equal(
          sealDue(previous, now, interval),
          ticked,
          `${previous} → ${now} / ${interval}`,
        );
        const next = nextSealAt(previous, interval);
        assert.equal(sealDue(previous, now, interval), now >= next);
      }
    }
  }
});
