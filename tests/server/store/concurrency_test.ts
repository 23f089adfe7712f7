// The storage guarantees of protocol §5 under concurrency: votes arriving while the sealer runs,
// one tag submitted many times at once, concurrent key registrations, and two KV handles on one
// database file each sealing.
import assert from "node:assert/strict";
import { checkLink } from "../../../lib/protocol/chain.ts";
import type { BlockRecord, VoteProof } from "../../../lib/protocol/schemas.ts";
import { createApp } from "../../../server/app.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore, type Store } from "../../../server/store/mod.ts";
import {
  call,
  makeVoters,
  proofVerifies,
  ringFor,
  signedVote,
  unsignedVote,
} from "../../helpers/ledger_fixtures.ts";

/** Runs `sealNextBlock` every few ms until the returned stop function is awaited. */
function runSealer(store: Store, everyMs = 3): () => Promise<void> {
  let running = true;
  const loop = (async () => {
    while (running) {
      await sealNextBlock(store, Date.now());
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

/** All blocks from genesis to the head, asserting contiguous heights and links. */
async function assertChain(store: Store): Promise<BlockRecord[]> {
  const { height } = await store.status();
  const blocks: BlockRecord[] = [];
  for (let from = 0; from <= height; from += 100) {
    blocks.push(...(await store.blocks(from, 100)).blocks);
  }
  assert.deepEqual(blocks.map((b) => b.height), Array.from({ length: height + 1 }, (_, i) => i));
  for (let i = 1; i < blocks.length; i++) {
    assert.ok(checkLink(blocks[i], blocks[i - 1]), `block ${i} links to block ${i - 1}`);
    assert.ok(blocks[i].size > 0, `block ${i} holds votes`);
  }
  return blocks;
}

/** Asserts every accepted vote is in its promised block with a proof that verifies. */
async function assertAllProven(
  store: Store,
  accepted: { voteId: string; blockId: number; payload: string }[],
) {
  const blocks = await assertChain(store);
  const sealedVotes = blocks.reduce((sum, b) => sum + b.size, 0);
  assert.equal(sealedVotes, accepted.length, "every sealed vote was accepted, once");
  const indexes = new Map<number, Set<number>>();
  for (const { voteId, blockId, payload } of accepted) {
    const proof: VoteProof = await store.voteProof(blockId, voteId);
    assert.equal(proof.block.height, blockId);
    assert.equal(proof.vote.payload, payload);
    assert.ok(proofVerifies(proof), `proof of ${voteId} verifies`);
    const seen = indexes.get(blockId) ?? new Set();
    assert.ok(!seen.has(proof.index), "leaf indexes are distinct");
    seen.add(proof.index);
    indexes.set(blockId, seen);
  }
}

Deno.test("200 votes submitted at once while the sealer runs all land in their promised blocks", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    const app = createApp({ store });
    const voters = makeVoters(200);
    for (const v of voters) await store.registerKey(v.key);
    const votes = voters.map((v, i) =>
      signedVote(v, ringFor(v, voters, 2 + (i % 7), i), `choice ${i % 5}`)
    );
    const stop = runSealer(store);
    const answers = await Promise.all(votes.map((vote) => call(app, "POST", "/api/vote", vote)));
    await stop();
    await sealNextBlock(store, Date.now());
    for (const a of answers) assert.equal(a.status, 202, JSON.stringify(a.body));
    await assertAllProven(
      store,
      answers.map((a, i) => ({ ...a.body, payload: votes[i].payload })),
    );
  } finally {
    kv.close();
  }
});

Deno.test("one tag submitted 20 times at once is accepted exactly once", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    const app = createApp({ store });
    const voters = makeVoters(8);
    for (const v of voters) await store.registerKey(v.key);
    // Twenty different signatures by one key: different payloads and rings, one tag.
    const votes = Array.from(
      { length: 20 },
      (_, i) => signedVote(voters[0], ringFor(voters[0], voters, 2 + (i % 7), i), `try ${i}`),
    );
    assert.equal(new Set(votes.map((v) => v.tag)).size, 1);
    const stop = runSealer(store, 1);
    const answers = await Promise.all(votes.map((vote) => call(app, "POST", "/api/vote", vote)));
    await stop();
    await sealNextBlock(store, Date.now());
    const accepted = answers.filter((a) => a.status === 202);
    assert.equal(accepted.length, 1);
    for (const a of answers.filter((a) => a.status !== 202)) {
      assert.equal(a.status, 409);
      assert.equal(a.body.error.code, "duplicate_tag");
    }
    const winner = votes[answers.findIndex((a) => a.status === 202)];
    await assertAllProven(store, [{ ...accepted[0].body, payload: winner.payload }]);
    assert.deepEqual(await store.tagUse(votes[0].tag), accepted[0].body);
  } finally {
    kv.close();
  }
});

Deno.test("2,000 votes racing a sealer that runs continuously: none lost, moved or doubled", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    const stop = runSealer(store, 0);
    const accepted = await Promise.all(
      Array.from({ length: 2000 }, async (_, i) => {
        const { vote, tag } = unsignedVote(`p${i % 3}`);
        return { ...(await store.submitVote(vote, tag)), payload: vote.payload };
      }),
    );
    await stop();
    await sealNextBlock(store, Date.now());
    await assertAllProven(store, accepted);
    const tally = await store.tally();
    assert.equal(tally.total, 2000);
  } finally {
    kv.close();
  }
});

Deno.test("concurrent key registrations get contiguous ids 1..n, each key once", async (t) => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    const app = createApp({ store });
    const voters = makeVoters(60);
    await t.step("60 different keys at once", async () => {
      const answers = await Promise.all(
        voters.map((v) => call(app, "POST", "/api/pki/key", { key: v.key, name: "Voter" })),
      );
      for (const a of answers) assert.equal(a.status, 201);
      const ids = answers.map((a) => a.body.id).sort((a, b) => a - b);
      assert.deepEqual(ids, Array.from({ length: 60 }, (_, i) => i + 1));
      for (const a of answers) {
        const byId = await call(app, "GET", `/api/pki/key/id/${a.body.id}`);
        assert.equal(byId.body.key, a.body.key);
      }
      const page = await call(app, "GET", "/api/pki/key/offset/0/limit/100");
      assert.equal(page.body.total, 60);
      assert.equal(page.body.keys.length, 60);
    });
    await t.step("one new key ten times at once: one 201, nine 409 with its id", async () => {
      const [extra] = makeVoters(1);
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => call(app, "POST", "/api/pki/key", { key: extra.key })),
      );
      const created = answers.filter((a) => a.status === 201);
      assert.equal(created.length, 1);
      assert.equal(created[0].body.id, 61);
      for (const a of answers.filter((a) => a.status !== 201)) {
        assert.equal(a.status, 409);
        assert.equal(a.body.error.code, "duplicate_key");
        assert.equal(a.body.error.id, 61);
      }
    });
  } finally {
    kv.close();
  }
});

Deno.test("two KV handles on one file, both sealing, votes sent to both", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-store-" });
  const path = `${dir}/ledger.kv`;
  const kvA = await Deno.openKv(path);
  const kvB = await Deno.openKv(path);
  try {
    const storeA = await createStore(kvA);
    const storeB = await createStore(kvB);
    assert.deepEqual(await storeA.block(0), await storeB.block(0));
    const stopA = runSealer(storeA, 1);
    const stopB = runSealer(storeB, 1);
    const accepted = await Promise.all(
      Array.from({ length: 600 }, async (_, i) => {
        const { vote, tag } = unsignedVote(`p${i % 4}`);
        const store = i % 2 ? storeA : storeB;
        return { ...(await store.submitVote(vote, tag)), payload: vote.payload };
      }),
    );
    await Promise.all([stopA(), stopB()]);
    await sealNextBlock(storeA, Date.now());
    await assertAllProven(storeB, accepted);
  } finally {
    kvA.close();
    kvB.close();
    await Deno.remove(dir, { recursive: true });
  }
});
