// Commits that throw `database is locked` (several processes on one SQLite file), landed or not:
// the store reads back its marker and answers exactly once (protocol §5 "Submit"). The KV is real;
// only the outcome report of chosen commits is replaced by the error SQLite gives.
import assert from "node:assert/strict";
import { sealNextBlock } from "../../../server/sealer.ts";
import { isTransientKvError } from "../../../server/store/kv_calls.ts";
import { createStore } from "../../../server/store/mod.ts";
import { proofVerifies, unsignedVote } from "../../helpers/ledger_fixtures.ts";

/**
 * What happens to the next commits: the real outcome, or a lock error after or instead of it; a
 * function is another process's work done meanwhile, then a lock error instead of the commit.
 */
type Outcome = "ok" | "landed-then-locked" | "locked" | "other-error" | (() => Promise<unknown>);

/** `kv` whose next commits follow `plan`; every other call goes to the real database. */
function lockingKv(kv: Deno.Kv, plan: Outcome[]): Deno.Kv {
  const wrapOp = (op: Deno.AtomicOperation): Deno.AtomicOperation => {
    const proxy: Deno.AtomicOperation = new Proxy(op, {
      get(target, prop) {
        if (prop === "commit") {
          return async () => {
            const outcome = plan.shift() ?? "ok";
            if (typeof outcome === "function") {
              await outcome();
              throw new TypeError("database is locked");
            }
            if (outcome === "locked") throw new TypeError("database is locked");
            if (outcome === "other-error") throw new TypeError("disk I/O error");
            const res = await target.commit();
            if (outcome === "landed-then-locked") throw new TypeError("database is locked");
            return res;
          };
        }
        const value = Reflect.get(target, prop);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const result = value.apply(target, args);
          return result === target ? proxy : result;
        };
      },
    });
    return proxy;
  };
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") return () => wrapOp(target.atomic());
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

Deno.test("isTransientKvError recognises the lock error only", () => {
  assert.equal(isTransientKvError(new TypeError("database is locked")), true);
  assert.equal(isTransientKvError(new Error("Total mutation size too large")), false);
  assert.equal(isTransientKvError("database is locked"), false);
});

Deno.test("a vote commit that landed but reported a lock is answered once, not retried", async () => {
  const real = await Deno.openKv(":memory:");
  try {
    const plan: Outcome[] = [];
    const store = await createStore(lockingKv(real, plan));
    const { vote, tag } = unsignedVote("Yes");
    plan.push("landed-then-locked");
    const accepted = await store.submitVote(vote, tag);
    assert.equal(accepted.blockId, 1);
    assert.deepEqual(await store.tagUse(tag), accepted);
    let stored = 0;
    for await (const _ of real.list({ prefix: ["vote", 1] })) stored++;
    assert.equal(stored, 1);
    await sealNextBlock(store, Date.now());
    assert.ok(proofVerifies(await store.voteProof(1, accepted.voteId)));
  } finally {
    real.close();
  }
});

Deno.test("a vote commit refused with a lock is retried until it lands", async () => {
  const real = await Deno.openKv(":memory:");
  try {
    const plan: Outcome[] = [];
    const store = await createStore(lockingKv(real, plan));
    const { vote, tag } = unsignedVote("No");
    plan.push("locked", "locked", "locked");
    const accepted = await store.submitVote(vote, tag);
    assert.equal(plan.length, 0, "all three locked attempts were made");
    assert.deepEqual(await store.tagUse(tag), accepted);
  } finally {
    real.close();
  }
});

Deno.test("a key registration that landed but reported a lock answers its id, not 409", async () => {
  const real = await Deno.openKv(":memory:");
  try {
    const plan: Outcome[] = [];
    const store = await createStore(lockingKv(real, plan));
    plan.push("landed-then-locked");
    const key = "a".repeat(64);
    assert.deepEqual(await store.registerKey(key), { id: 1, key, total: 1 });
    plan.push("locked");
    const other = "b".repeat(64);
    assert.deepEqual(await store.registerKey(other), { id: 2, key: other, total: 2 });
  } finally {
    real.close();
  }
});

Deno.test("a batch whose commit failed while another process took its first id retries the rest", async () => {
  const real = await Deno.openKv(":memory:");
  try {
    const plan: Outcome[] = [];
    const store = await createStore(lockingKv(real, plan));
    const otherProcess = await createStore(real);
    const [k0, k1, k2] = ["a", "b", "c"].map((c) => c.repeat(64));
    // k0 commits alone; k1 and k2 wait for it and go in the next batch, with ids 2 and 3, whose
    // commit fails after the other process registered k1 as id 2.
    plan.push("ok", () => otherProcess.registerKey(k1));
    const answers = await Promise.all([k0, k1, k2].map((k) => store.registerKey(k)));
    assert.deepEqual(answers.map((a) => [a.key, a.id]), [[k0, 1], [k1, 2], [k2, 3]]);
    for (const { id, key } of answers) assert.equal((await store.keyById(id)).key, key);
    assert.equal((await store.keyPage(0, 10)).total, 3);
  } finally {
    real.close();
  }
});

Deno.test("sealing survives lock errors on the close, proof and block commits", async () => {
  const real = await Deno.openKv(":memory:");
  try {
    const plan: Outcome[] = [];
    const store = await createStore(lockingKv(real, plan));
    const votes = [];
    for (let i = 0; i < 5; i++) {
      const { vote, tag } = unsignedVote(`v${i}`);
      votes.push(await store.submitVote(vote, tag));
    }
    // close: landed then locked; proofs: locked once; the last proofs with the block: landed then
    // locked. Five mutations a commit: the 6 proof entries (leaf 0's with its leaf index entry)
    // and the block's 2 take two commits.
    plan.push("landed-then-locked", "locked", "ok", "landed-then-locked");
    const [block] = await sealNextBlock(store, Date.now(), { maxMutations: 5 });
    assert.equal(plan.length, 0);
    assert.equal(block.size, 5);
    assert.equal((await store.status()).height, 1);
    for (const { voteId } of votes) assert.ok(proofVerifies(await store.voteProof(1, voteId)));
  } finally {
    real.close();
  }
});

Deno.test("any other commit error is not retried: it surfaces", async () => {
  const real = await Deno.openKv(":memory:");
  try {
    const plan: Outcome[] = [];
    const store = await createStore(lockingKv(real, plan));
    const { vote, tag } = unsignedVote("Yes");
    plan.push("other-error");
    await assert.rejects(store.submitVote(vote, tag), /disk I\/O error/);
    await assert.rejects(store.tagUse(tag), /No vote with tag/);
  } finally {
    real.close();
  }
});
