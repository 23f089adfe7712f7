// The verifiers, worker pool and in-process: the same answers as checkRing for good and bad
// signatures; over real HTTP with a real KV, a worker that fails mid-load is replaced and every
// request answered; a saturated queue answers 503 busy with Retry-After and stores nothing; and a
// flood of registrations leaves the member memory within its one global budget.
import assert from "node:assert/strict";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import { hexToBytes } from "../../../lib/protocol/bytes.ts";
import { L } from "../../../lib/protocol/keys.ts";
import { precomputeKey } from "../../../lib/protocol/key_precomputation.ts";
import { MEMBER_BYTES } from "../../../lib/protocol/member_cache.ts";
import { checkRing, type RingSignature } from "../../../lib/protocol/ring_signature.ts";
import { decodeSignature } from "../../../lib/protocol/signature_wire.ts";
import type { VoteSubmission } from "../../../lib/protocol/schemas.ts";
import { createApp } from "../../../server/app.ts";
import { ApiError } from "../../../server/errors.ts";
import { createStore } from "../../../server/store/mod.ts";
import { createInProcessVerifier } from "../../../server/verifier/in_process.ts";
import { warmUp } from "../../../server/verifier/jobs.ts";
import type { Verifier } from "../../../server/verifier/types.ts";
import { createVerifyPool } from "../../../server/verifier/pool.ts";
import { CRASH_PAYLOAD } from "../../helpers/crash_payload.ts";
import {
  hostilePoints,
  makeVoters,
  ringFor,
  signedVote,
  type TestVoter,
} from "../../helpers/ledger_fixtures.ts";

const voters = makeVoters(10);
const signer = voters[0];
const ring = ringFor(signer, voters, 8);
const good = signedVote(signer, ring, "Yes");
const FRAGILE = new URL("../../helpers/fragile_verify_worker.ts", import.meta.url);
const BROKEN = new URL("../../helpers/broken_verify_worker.ts", import.meta.url);
const SILENT = new URL("../../helpers/silent_verify_worker.ts", import.meta.url);

function decoded(): RingSignature {
  return decodeSignature(good.signature);
}

function withMember(sig: RingSignature, index: number, hex: string): RingSignature {
  const ringCopy = sig.ring.slice();
  ringCopy[index] = hexToBytes(hex);
  return { ...sig, ring: ringCopy };
}

/** Good and bad signatures, each with the message it is checked against. */
function corpus(): { desc: string; sig: RingSignature; message: string }[] {
  const hostile = hostilePoints();
  const sig = decoded();
  const bumped = sig.r.slice();
  bumped[3] = numberToBytesLE((bytesToNumberLE(bumped[3]) + 1n) % L, 32);
  const wide = sig.r.slice();
  wide[0] = numberToBytesLE(bytesToNumberLE(wide[0]) + L, 32);
  return [
    { desc: "a good signature", sig, message: "Yes" },
    { desc: "another message", sig, message: "No" },
    { desc: "a changed response", sig: { ...sig, r: bumped }, message: "Yes" },
    { desc: "a non-canonical response", sig: { ...sig, r: wide }, message: "Yes" },
    { desc: "a repeated member", sig: withMember(sig, 1, good.publicKeys[0]), message: "Yes" },
    ...Object.entries(hostile).map(([name, hex]) => ({
      desc: `a ${name} member`,
      sig: withMember(sig, 2, hex),
      message: "Yes",
    })),
    {
      desc: "a small-order tag",
      sig: { ...sig, tag: hexToBytes(hostile.smallOrder) },
      message: "Yes",
    },
  ];
}

/** Both verifiers, each handed to `body` and closed after it. */
const verifiers: [string, (opts: { maxQueued?: number }) => Verifier][] = [
  ["worker pool", (opts) => createVerifyPool({ workers: 2, ...opts })],
  ["in-process", (opts) => createInProcessVerifier(opts)],
];

for (const [name, make] of verifiers) {
  Deno.test(`${name}: answers exactly as checkRing, alone and under concurrent use`, async (t) => {
    const verifier = make({});
    try {
      const cases = corpus();
      const stored = ring.map((v) => precomputeKey(hexToBytes(v.key)));
      const members = stored.map((pre) => (typeof pre === "string" ? null : pre));
      await t.step("one at a time, with and without stored members", async () => {
        for (const { desc, sig, message } of cases) {
          assert.deepEqual(await verifier.verify(sig, message), checkRing(sig, message), desc);
          const withStored = await verifier.verify(sig, message, members);
          assert.deepEqual(withStored, checkRing(sig, message), `${desc}, stored members`);
        }
      });
      await t.step("48 verifications in flight at once", async () => {
        const many = Array.from({ length: 48 }, (_, i) => cases[i % cases.length]);
        const answers = await Promise.all(
          many.map(({ sig, message }) => verifier.verify(sig, message, members)),
        );
        answers.forEach((answer, i) => {
          assert.deepEqual(answer, checkRing(many[i].sig, many[i].message), many[i].desc);
        });
      });
      await t.step("a malformed field throws the same error type as checkRing", async () => {
        const sig = { ...decoded(), c0: new Uint8Array(31) };
        assert.throws(() => checkRing(sig, "Yes"), RangeError);
        await assert.rejects(verifier.verify(sig, "Yes"), RangeError);
      });
      await t.step("precompute refuses hostile keys and matches precomputeKey", async () => {
        for (const hex of Object.values(hostilePoints())) {
          assert.equal(await verifier.precompute(hex), precomputeKey(hexToBytes(hex)));
        }
        assert.deepEqual(await verifier.precompute(ring[0].key), stored[0]);
        assert.equal(typeof await verifier.precompute("not hex"), "string");
      });
    } finally {
      verifier.close();
    }
    await assert.rejects(verifier.verify(decoded(), "Yes"), /closed/);
  });
}

/**
 * A real HTTP server over `verifier` and a KV file, with `voters` registered through the API,
 * `inFlight` registrations at a time.
 */
async function serve(verifier: Verifier, registered: TestVoter[], { inFlight = 16 } = {}) {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-pool-" });
  const kv = await Deno.openKv(`${dir}/ledger.kv`);
  const store = await createStore(kv);
  const app = createApp({ store, verifier });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(url + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      retryAfter: res.headers.get("retry-after"),
      body: await res.json(),
    };
  };
  const get = async (path: string) => {
    const res = await fetch(url + path);
    return { status: res.status, body: await res.json() };
  };
  for (let i = 0; i < registered.length; i += inFlight) {
    const answers = await Promise.all(
      registered.slice(i, i + inFlight).map((v) => post("/api/pki/key", { key: v.key })),
    );
    for (const a of answers) assert.equal(a.status, 201, JSON.stringify(a.body));
  }
  return {
    post,
    get,
    async close() {
      await server.shutdown();
      verifier.close();
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** `promise`, or a rejection once `ms` have passed: a test fails rather than hangs. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled in ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

Deno.test("warm-up accepts its own signature and refuses it altered; a pool is ready once its workers are", async () => {
  assert.equal(warmUp(2), true);
  assert.equal(await createInProcessVerifier().ready, undefined, "in-process: ready at once");
  const pool = createVerifyPool({ workers: 2 });
  try {
    await within(pool.ready, 60_000);
    const people = makeVoters(8);
    const vote = signedVote(people[0], people, "after warm-up");
    const check = await pool.verify(decodeSignature(vote.signature), vote.payload);
    assert.deepEqual(check, { ok: true });
    assert.equal(pool.replaced, 0);
  } finally {
    pool.close();
  }
});

Deno.test("a pool closed before it is ready rejects `ready` instead of leaving it pending", async () => {
  const pool = createVerifyPool({ workers: 1 });
  pool.close();
  await assert.rejects(within(pool.ready, 5_000), /closed/);
});

Deno.test("workers that keep failing before they are ready: the pool gives up, `ready` rejects, jobs get 503 busy", async () => {
  const pool = createVerifyPool({ workers: 2, workerUrl: BROKEN });
  try {
    await assert.rejects(within(pool.ready, 30_000), /keep failing before they are ready/);
    assert.ok(pool.replaced <= 2, `${pool.replaced} restarts, not a restart loop`);
    await assert.rejects(
      pool.verify(decoded(), "Yes"),
      (error) => error instanceof ApiError && error.code === "busy",
    );
    assert.deepEqual(await pool.memberStats(), { held: 0, capacity: 0 });
  } finally {
    pool.close();
  }
});

Deno.test("a worker not ready within the start deadline is replaced, and the pool gives up on a third", async () => {
  const pool = createVerifyPool({ workers: 1, workerUrl: SILENT, startMs: 100, stallMs: 400 });
  try {
    await assert.rejects(within(pool.ready, 10_000), /not ready in 100 ms/);
    assert.equal(pool.replaced, 2);
  } finally {
    pool.close();
  }
});

Deno.test("a worker that fails mid-load is replaced: every vote is answered, the others accepted", async () => {
  const pool = createVerifyPool({ workers: 2, workerUrl: FRAGILE });
  const people = makeVoters(24);
  const http = await serve(pool, people);
  try {
    const votes: VoteSubmission[] = people.map((v, i) =>
      signedVote(v, ringFor(v, people, 8, i), i === 5 ? CRASH_PAYLOAD : `option ${i % 3}`)
    );
    const answers = await Promise.all(votes.map((vote) => http.post("/api/vote", vote)));
    // The failing vote fails its retry too: refused as busy. A vote that shared its worker is
    // retried alone on the replacement, one at a time, so it never meets the failing vote again.
    assert.equal(answers[5].status, 503, JSON.stringify(answers[5].body));
    const refused = answers.flatMap((a, i) => (a.status === 202 ? [] : [i]));
    for (const i of refused) {
      assert.equal(answers[i].status, 503, `vote ${i}: ${JSON.stringify(answers[i].body)}`);
      assert.equal(answers[i].body.error.code, "busy");
      assert.equal(answers[i].retryAfter, "1");
      assert.equal((await http.get(`/api/tag/${votes[i].tag}`)).status, 404, "nothing stored");
    }
    assert.deepEqual(refused, [5], `votes refused: ${refused.join(", ")}`);
    // Sent again, every refused vote but the failing one is accepted.
    for (const i of refused.filter((i) => i !== 5)) {
      assert.equal((await http.post("/api/vote", votes[i])).status, 202, `vote ${i} again`);
    }
    assert.ok(pool.replaced >= 2, `replaced ${pool.replaced} workers`);
    assert.equal((await http.get(`/api/tag/${votes[5].tag}`)).status, 404);
    // The pool is whole again: a later vote is verified and accepted.
    const later = signedVote(people[5], ringFor(people[5], people, 8, 40), "after the failure");
    assert.equal((await http.post("/api/vote", later)).status, 202);
    assert.equal(pool.queued, 0);
  } finally {
    await http.close();
  }
});

for (const [name, make] of verifiers) {
  Deno.test(`${name}: a saturated queue answers 503 busy with Retry-After and stores nothing`, async () => {
    const people = makeVoters(40);
    const http = await serve(make({ maxQueued: 3 }), people, { inFlight: 3 });
    try {
      const votes = people.map((v, i) =>
        signedVote(v, ringFor(v, people, 8, i), `option ${i % 2}`)
      );
      const answers = await Promise.all(votes.map((vote) => http.post("/api/vote", vote)));
      const busy = answers.flatMap((a, i) => (a.status === 503 ? [i] : []));
      assert.ok(busy.length > 0, "40 votes at once overflow a queue of 3");
      for (const [i, answer] of answers.entries()) {
        const stored = await http.get(`/api/tag/${votes[i].tag}`);
        if (answer.status === 503) {
          assert.equal(answer.body.error.code, "busy");
          assert.equal(answer.retryAfter, "1");
          assert.equal(stored.status, 404, `refused vote ${i} left nothing behind`);
        } else {
          assert.equal(answer.status, 202, JSON.stringify(answer.body));
          assert.deepEqual(stored.body, answer.body);
        }
      }
      // Sent again one at a time, every refused vote is accepted.
      for (const i of busy) assert.equal((await http.post("/api/vote", votes[i])).status, 202);
    } finally {
      await http.close();
    }
  });
}

Deno.test("a registration flood leaves member memory within the one global budget", async () => {
  const budget = 12 * MEMBER_BYTES;
  const pool = createVerifyPool({ workers: 2, memberBudgetBytes: budget });
  const people = makeVoters(600);
  const http = await serve(pool, people);
  try {
    // Registration precomputes on the workers but keeps nothing there.
    assert.deepEqual(await pool.memberStats(), { held: 0, capacity: 12 });
    const voting = people.slice(0, 40);
    const votes = voting.map((v, i) => signedVote(v, ringFor(v, people, 8, i * 13), "Yes"));
    for (let i = 0; i < votes.length; i += 8) {
      const answers = await Promise.all(
        votes.slice(i, i + 8).map((v) => http.post("/api/vote", v)),
      );
      for (const a of answers) assert.equal(a.status, 202, JSON.stringify(a.body));
    }
    const { held, capacity } = await pool.memberStats();
    assert.equal(capacity, 12, "the budget is split between the workers, not multiplied");
    assert.ok(held > 0 && held <= capacity, `${held} members held`);
  } finally {
    await http.close();
  }
});
