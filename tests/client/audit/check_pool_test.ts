/**
 * The pool of audit workers (lib/client/audit/check_pool.ts) over stand-in workers that
 * answer, fail or fall silent on command: a failed or silent worker is stopped and never sent to
 * again, and a pool with none left rejects instead of waiting forever; and over real workers of
 * lib/client/audit/check_worker.ts: the verifications of this thread's checker, in order, each
 * ring member precomputed once however many votes and workers meet it.
 * @module
 */
import assert from "node:assert/strict";
import {
  type CheckRequest,
  type CheckResponse,
  createVoteCheckPool,
  type PoolWorker,
} from "../../../lib/client/audit/check_pool.ts";
import {
  inThreadChecker,
  problemsOnItsOwn,
  type VoteVerification,
} from "../../../lib/client/audit/vote_checks.ts";
import { makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";
import type { VoteRecord } from "../../../lib/protocol/schemas.ts";

/** A stand-in worker: `answers` says whether it replies to what it is sent. */
function fakeWorker(answers: () => boolean) {
  const received: CheckRequest[] = [];
  let terminated = false;
  const worker: PoolWorker = {
    onmessage: null,
    onerror: null,
    postMessage(message: CheckRequest) {
      received.push(message);
      if (!answers()) return;
      const verified: VoteVerification = { leaf: "00".repeat(32), check: { ok: true } };
      const data: CheckResponse = message.type === "keys"
        ? { id: message.id, type: "keys", keys: message.keys.map(() => "not checked here") }
        : { id: message.id, type: "votes", verifications: message.votes.map(() => verified) };
      queueMicrotask(() => worker.onmessage?.call(worker as Worker, { data } as MessageEvent));
    },
    terminate() {
      terminated = true;
    },
  };
  const fail = (message: string) =>
    worker.onerror?.call(
      worker as Worker,
      { message, preventDefault() {} } as ErrorEvent,
    );
  return { worker, received, fail, terminated: () => terminated };
}

const votes = (n: number) => Array.from({ length: n }, () => ({}) as VoteRecord);

Deno.test("a worker that failed is stopped and later slices go to the others", async () => {
  let broken = true;
  const a = fakeWorker(() => !broken);
  const b = fakeWorker(() => true);
  const fakes = [a, b];
  const pool = createVoteCheckPool(2, () => fakes.shift()!.worker);
  const first = pool.check(votes(50)); // one slice to each worker; a stays silent
  a.fail("out of memory");
  await assert.rejects(first, /Audit worker failed: out of memory/);
  assert.equal(a.terminated(), true);
  assert.equal(pool.size, 1);
  broken = false;
  const sentToA = a.received.length;
  assert.equal((await pool.check(votes(100))).length, 100);
  assert.equal(a.received.length, sentToA);
  pool.close();
});

Deno.test("a pool whose every worker failed rejects with the reason", async () => {
  const a = fakeWorker(() => true);
  const pool = createVoteCheckPool(1, () => a.worker);
  a.fail("script error");
  assert.equal(pool.size, 0);
  await assert.rejects(pool.check(votes(3)), /Every audit worker has failed/);
});

Deno.test("a worker that falls silent with slices queued is given up on", async () => {
  const a = fakeWorker(() => false);
  const pool = createVoteCheckPool(1, () => a.worker, { silenceMs: 10 });
  await assert.rejects(pool.check(votes(30)), /did not answer within/);
  assert.equal(a.terminated(), true);
  assert.equal(pool.size, 0);
});

Deno.test("real audit workers, as the command line starts them, find what this thread finds", async () => {
  const voters = makeVoters(6);
  const honest = voters.map((v, i) => signedVote(v, ringFor(v, voters, 4), `Choice ${i % 2}`));
  const record = ({ payload, signature, publicKeys }: (typeof honest)[number]): VoteRecord => ({
    payload,
    signature,
    publicKeys,
  });
  const batch = [
    ...honest.map(record),
    { ...record(honest[0]), payload: "Choice 1 (changed)" },
    { ...record(honest[1]), publicKeys: [...honest[1].publicKeys].reverse() },
    { ...record(honest[2]), signature: "not a signature" },
  ];
  const url = new URL("../../../lib/client/audit/check_worker.ts", import.meta.url);
  const pool = createVoteCheckPool(2, () => new Worker(url, { type: "module" }));
  try {
    const found = await pool.check(Array.from({ length: 10 }, () => batch).flat());
    const expected = await inThreadChecker()(batch);
    assert.equal(found.length, 10 * batch.length);
    for (let i = 0; i < found.length; i++) assert.deepEqual(found[i], expected[i % batch.length]);
    const kinds = await Promise.all(
      batch.map(async (vote, i) => (await problemsOnItsOwn(vote, expected[i])).map((p) => p.kind)),
    );
    assert.deepEqual(kinds, [
      ...Array(6).fill([]),
      ["invalid-signature"],
      ["ring-mismatch"],
      ["malformed-signature"],
    ]);
    // Six keys in all, each checked and precomputed once for 90 votes on two workers.
    assert.equal(pool.keysPrecomputed, 6);
    // Once the pool lets go of its keys, the next check precomputes what it needs again.
    pool.releaseKeys();
    assert.deepEqual(await pool.check(batch), expected);
    assert.equal(pool.keysPrecomputed, 12);
  } finally {
    pool.close();
  }
});
