// A round closes for good (protocol §4.9): a key or a vote that passed the round check while its
// round was current, but commits after the next round started (its verification held until then),
// is refused 409 round_closed by its commit and stores nothing — in a later round and in round 1 —
// and a body that does not arrive within the deadline is refused 408 body_timeout.
import assert from "node:assert/strict";
import type { Verifier } from "../../../server/verifier/types.ts";
import { dumpKv, makeVoters, signedVote, type TestVoter } from "../../helpers/ledger_fixtures.ts";
import { testVerifier } from "../../helpers/test_verifier.ts";
import { fullApp, PRESENTER_TOKEN as ADMIN_TOKEN } from "../../helpers/app_fixture.ts";
const JSON_TYPE = { "content-type": "application/json" };
const PRESENTER = { ...JSON_TYPE, authorization: `Bearer ${ADMIN_TOKEN}` };

/** The app with rounds over in-memory KV, verifying on `verifier`. */
async function setup(verifier: Verifier = testVerifier, bodyDeadlineMs?: number) {
  const kv = await Deno.openKv(":memory:");
  const { app } = await fullApp(kv, { currentTtlMs: 0, verifier, bodyDeadlineMs });
  const post = async (path: string, body: unknown, headers: HeadersInit = JSON_TYPE) => {
    const res = await app.request(path, { method: "POST", headers, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const startRound = async () =>
    (await post("/api/rounds", { question: "Which?", choices: ["Red", "Blue"] }, PRESENTER)).body
      .id as number;
  return { kv, app, post, startRound };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** Round 2 with `voters` registered and voting open. */
async function openRound(s: Setup, voters: TestVoter[]) {
  assert.equal(await s.startRound(), 2);
  for (const v of voters) assert.equal((await s.post("/api/rounds/2/pki/key", v)).status, 201);
  assert.equal((await s.post("/api/rounds/2/voting", {}, PRESENTER)).status, 200);
}

/**
 * A verifier that, once `hold()` is called, holds the next verification or key check until the
 * returned `release` runs: the request has then passed every check before it (the round's
 * included) and read its ledger, and commits only after.
 */
function holdingVerifier() {
  let held: { reached: PromiseWithResolvers<void>; released: Promise<void> } | null = null;
  const wait = async () => {
    const now = held;
    held = null;
    if (now === null) return;
    now.reached.resolve();
    await now.released;
  };
  const verifier: Verifier = {
    verify: async (...args) => (await wait(), await testVerifier.verify(...args)),
    precompute: async (key) => (await wait(), await testVerifier.precompute(key)),
    memberStats: () => testVerifier.memberStats(),
    ready: testVerifier.ready,
    get queued() {
      return testVerifier.queued;
    },
    close: () => {},
  };
  /** Holds the next check; answers once it is reached, with the function releasing it. */
  const hold = () => {
    const reached = Promise.withResolvers<void>();
    const released = Promise.withResolvers<void>();
    held = { reached, released: released.promise };
    return { reached: reached.promise, release: released.resolve };
  };
  return { verifier, hold };
}

/**
 * POSTs `body` to `path`, and runs `meanwhile` while its verification (or key check) is held:
 * after the request passed every check made before it, before it commits.
 */
async function heldBack(
  s: Setup,
  hold: ReturnType<typeof holdingVerifier>["hold"],
  [path, body]: [string, unknown],
  meanwhile: () => Promise<unknown>,
) {
  const { reached, release } = hold();
  const answer = s.post(path, body);
  await reached;
  await meanwhile();
  release();
  return await answer;
}

function assertClosed(res: { status: number; body: { error: { code: string } } }) {
  assert.equal(res.status, 409, JSON.stringify(res.body));
  assert.equal(res.body.error.code, "round_closed");
}

Deno.test("a round's key or vote checked while open, committing after the next round started: 409", async () => {
  const { verifier, hold } = holdingVerifier();
  const s = await setup(verifier);
  const voters = makeVoters(9);
  try {
    await openRound(s, voters.slice(0, 8));
    const ballot = signedVote(voters[2], voters.slice(0, 8), "Red");
    let before = "";
    const vote = await heldBack(s, hold, ["/api/rounds/2/vote", ballot], async () => {
      assert.equal(await s.startRound(), 3);
      before = JSON.stringify(await dumpKv(s.kv));
    });
    assertClosed(vote);
    assert.equal(vote.body.error.current, 3);
    assert.equal(JSON.stringify(await dumpKv(s.kv)), before, "nothing stored");
    const tag = await s.app.request(`/api/rounds/2/tag/${ballot.tag}`);
    assert.equal(tag.status, 404);
    await tag.body?.cancel();

    const key = await heldBack(s, hold, ["/api/rounds/3/pki/key", voters[8]], s.startRound);
    assertClosed(key);
    const page = await (await s.app.request("/api/rounds/3/pki/key/offset/0/limit/10")).json();
    assert.equal(page.total, 0, "no key stored in the closed round");
  } finally {
    s.kv.close();
  }
});

Deno.test("round 1's key or vote checked while open, committing after round 2 started: 409", async () => {
  const { verifier, hold } = holdingVerifier();
  const voters = makeVoters(5);
  const s = await setup(verifier);
  try {
    for (const v of voters.slice(0, 4)) assert.equal((await s.post("/api/pki/key", v)).status, 201);
    const ballot = signedVote(voters[0], voters.slice(0, 4), "Yes");
    const vote = await heldBack(s, hold, ["/api/vote", ballot], s.startRound);
    assertClosed(vote);
    assert.equal(vote.body.error.current, 2);
    const open = await (await s.app.request("/api/rounds/1/block/open")).json();
    assert.equal(open.votes, 0, "round 1 holds no vote");
  } finally {
    s.kv.close();
  }
  const fresh = await setup(verifier);
  try {
    const key = await heldBack(fresh, hold, ["/api/pki/key", voters[4]], fresh.startRound);
    assertClosed(key);
    const page = await (await fresh.app.request("/api/pki/key/offset/0/limit/10")).json();
    assert.equal(page.total, 0, "no key stored in round 1");
  } finally {
    fresh.kv.close();
  }
});

/**
 * Sends `path` a POST over a plain TCP connection: its headers, announcing 200 bytes, and the first
 * `sent` of them, then nothing; answers the status line and body the server wrote back.
 */
async function stalledPost(port: number, path: string, sent: string) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 200\r\n\r\n`;
    await conn.write(new TextEncoder().encode(head + sent));
    let text = "";
    const buffer = new Uint8Array(4096);
    // The answer comes once the deadline passed; bounded by the 32 KiB an answer fits in.
    while (text.length < 32_768) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
      const end = text.indexOf("\r\n\r\n");
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? NaN);
      if (end >= 0 && text.length >= end + 4 + length) break;
    }
    const [status] = text.split("\r\n", 1);
    return { status, body: JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) };
  } finally {
    conn.close();
  }
}

Deno.test("a body that does not arrive within the deadline: 408 body_timeout, nothing stored", async () => {
  const s = await setup(testVerifier, 200);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, s.app.fetch);
  const voter = makeVoters(1)[0];
  try {
    for (const path of ["/api/pki/key", "/api/vote"]) {
      const res = await stalledPost(server.addr.port, path, `{"key":"${voter.key.slice(0, 20)}`);
      assert.match(res.status, /^HTTP\/1\.1 408 /, JSON.stringify(res));
      assert.equal(res.body.error.code, "body_timeout");
      assert.match(res.body.error.message, /did not arrive within 0\.2 s/);
    }
    const page = await (await s.app.request("/api/pki/key/offset/0/limit/10")).json();
    assert.equal(page.total, 0);
    // A body sent in time is taken as ever.
    assert.equal((await s.post("/api/pki/key", voter)).status, 201);
  } finally {
    await server.shutdown();
    s.kv.close();
  }
});
