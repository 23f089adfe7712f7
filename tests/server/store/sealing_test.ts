// The stored proofs of sealed blocks (protocol §5.2–§5.4): paths as bytes and a leaf index kept
// every LEAF_STRIDE leaves, blocks sealed before (hex paths, every leaf) answering the very same
// proofs and pages, and proof commits whose estimated size bounds what KV counts.
import assert from "node:assert/strict";
import { bytesToHex } from "../../../lib/protocol/bytes.ts";
import { allInclusionProofs, voteLeaf } from "../../../lib/protocol/merkle.ts";
import type { VoteRecord } from "../../../lib/protocol/schemas.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { BATCH_MAX_MUTATIONS } from "../../../server/store/batches.ts";
import {
  kvKeys,
  LEAF_STRIDE,
  type LeafRecord,
  ledgerKeys,
  type StoredVoteIndex,
} from "../../../server/store/layout.ts";
import { createStore, randomVoteId } from "../../../server/store/mod.ts";
import { type ProofToStore, writeProofs } from "../../../server/store/sealing.ts";
import { proofVerifies, unsignedVote } from "../../helpers/ledger_fixtures.ts";
import { withKv } from "../../helpers/kv.ts";

/**
 * Stores the proofs of block `height` as finalize stored them before paths were bytes and the
 * leaf index sparse: for each vote, in leaf (vote id) order, `{index, path}` with each hash in hex,
 * and the vote id at every leaf.
 */
async function writeProofsAsBefore(
  kv: Deno.Kv,
  height: number,
  votes: { voteId: string; vote: VoteRecord }[],
): Promise<void> {
  const ordered = [...votes].sort((a, b) => (a.voteId < b.voteId ? -1 : 1));
  const paths = allInclusionProofs(ordered.map(({ vote }) => voteLeaf(vote)));
  for (let from = 0; from < ordered.length; from += 400) {
    const op = kv.atomic();
    for (let index = from; index < Math.min(ordered.length, from + 400); index++) {
      const { voteId } = ordered[index];
      op.set(kvKeys.voteIndex(voteId), { index, path: paths[index].map(bytesToHex) })
        .set(kvKeys.leaf(height, index), { voteId } satisfies LeafRecord);
    }
    assert.ok((await op.commit()).ok);
  }
}

const PAGE_OFFSETS = [0, 1, 99, 100, 101, 250, 300];

Deno.test(
  "a block sealed with hex paths and every leaf answers the same proofs and pages",
  withKv(async (kv) => {
    const store = await createStore(kv, { now: () => 1_700_000_000_000 });
    const votes: { voteId: string; vote: VoteRecord }[] = [];
    for (let i = 0; i < 301; i++) {
      const { vote, tag } = unsignedVote(`choice ${i % 4}`);
      votes.push({ voteId: (await store.submitVote(vote, tag)).voteId, vote });
    }
    const [block] = await sealNextBlock(store, 1_700_000_060_000);
    assert.equal(block.size, 301);

    // As sealed now: each path 32-byte hashes concatenated, a leaf every LEAF_STRIDE leaves.
    const leaves = await Array.fromAsync(kv.list({ prefix: ["leaf", 1] }));
    assert.deepEqual(leaves.map((e) => e.key[2]), [0, 100, 200, 300]);
    assert.equal(LEAF_STRIDE, 100);
    for await (const { value } of kv.list<StoredVoteIndex>({ prefix: ["voteidx"] })) {
      assert.ok(value.path instanceof Uint8Array);
      assert.equal(value.path.length % 32, 0);
    }

    const answers = async () => ({
      proofs: await Promise.all(votes.map(({ voteId }) => store.voteProof(1, voteId))),
      pages: await Promise.all(PAGE_OFFSETS.map((offset) => store.blockVotes(1, offset, 100))),
      tail: await store.blockVotes(1, 300, 100),
      past: await store.blockVotes(1, 301, 100),
    });
    const sealed = await answers();
    for (const proof of sealed.proofs) assert.ok(proofVerifies(proof));
    const inLeafOrder = votes.map((v) => v.voteId).sort();
    for (const [i, offset] of PAGE_OFFSETS.entries()) {
      const page = sealed.pages[i];
      assert.equal(page.total, 301);
      assert.deepEqual(
        page.votes.map((v) => [v.index, v.voteId]),
        inLeafOrder.slice(offset, offset + 100).map((voteId, k) => [offset + k, voteId]),
        `page at ${offset}`,
      );
    }
    assert.equal(sealed.tail.votes.length, 1, "the last leaf's page holds it alone");
    assert.deepEqual(sealed.past.votes, []);

    await writeProofsAsBefore(kv, 1, votes);
    const before = await Array.fromAsync(kv.list({ prefix: ["leaf", 1] }));
    assert.equal(before.length, 301);
    const stored = await kv.get<StoredVoteIndex>(kvKeys.voteIndex(votes[0].voteId));
    assert.ok(Array.isArray(stored.value?.path));
    assert.deepEqual(await answers(), sealed);
  }),
);

Deno.test(
  "a page reads the leaf at its offset when stored, the one before it otherwise",
  withKv(async (kv) => {
    const store = await createStore(kv);
    const votes: { voteId: string; vote: VoteRecord }[] = [];
    for (let i = 0; i < 120; i++) {
      const { vote, tag } = unsignedVote(`v ${i}`);
      votes.push({ voteId: (await store.submitVote(vote, tag)).voteId, vote });
    }
    await sealNextBlock(store, Date.now());
    const page = await store.blockVotes(1, 57, 10);
    // Leaf 0 lost: the block's pages cannot be placed, and say so rather than answer wrongly.
    await kv.delete(kvKeys.leaf(1, 0));
    await assert.rejects(
      store.blockVotes(1, 57, 10),
      /No leaf of block 1 is stored at or before 57/,
    );
    // Leaf 57 stored (as every leaf was before): the page lists from it.
    await kv.set(kvKeys.leaf(1, 57), { voteId: page.votes[0].voteId } satisfies LeafRecord);
    assert.deepEqual(await store.blockVotes(1, 57, 10), page);
    assert.equal((await store.blockVotes(1, 110, 10)).votes.length, 10);
  }),
);

/** `count` proofs of `hashes` hashes each, with vote ids from `voteId`. */
function* syntheticProofs(
  count: number,
  { hashes, voteId = randomVoteId }: { hashes: number; voteId?: (i: number) => string },
): Generator<ProofToStore> {
  for (let index = 0; index < count; index++) {
    const path = new Uint8Array(32 * hashes).fill(index % 251);
    yield { voteId: voteId(index), proof: { index, path } };
  }
}

Deno.test(
  "the proofs of a 10,000-vote block take 12 commits of at most 900 mutations",
  withKv(async (kv) => {
    const ledger = { kv, keys: kvKeys };
    let commits = 0;
    await writeProofs(ledger, 1, syntheticProofs(10_000, { hashes: 14 }), {
      afterCommit: (k) => void (commits = k),
    });
    // 10,000 proofs and 100 leaf entries: 10,100 mutations, 900 a commit; 14 hashes are 448
    // bytes, about 540 a proof as KV counts it, so bytes do not bind.
    assert.equal(BATCH_MAX_MUTATIONS, 900);
    assert.equal(commits, 12);
    assert.equal((await Array.fromAsync(kv.list({ prefix: ["leaf", 1] }))).length, 100);
    let proofs = 0;
    for await (const _ of kv.list({ prefix: ["voteidx"] }, { batchSize: 1000 })) proofs++;
    assert.equal(proofs, 10_000);
  }),
);

// KV refuses a commit over 800 KiB of keys and values, or 80 KiB of keys set: with each limit set
// to KV's own, every commit lands only if the estimate is never below what KV counts.
const KV_LIMITS = { maxMutations: 1000, maxBytes: 800 * 1024, maxKeyBytes: 80 * 1024 };

Deno.test(
  "proof commits sized at KV's own limits land: the byte estimate bounds what KV counts",
  withKv(async (kv) => {
    const ledger = { kv, keys: kvKeys };
    let commits = 0;
    // 60 hashes (a tree of 2^60 leaves) make proofs of about 2 KB: bytes bind, not mutations.
    await writeProofs(ledger, 1, syntheticProofs(1_200, { hashes: 60 }), {
      ...KV_LIMITS,
      afterCommit: (k) => void (commits = k),
    });
    // About 406 such proofs fit in 800 KiB: three commits, so the estimate is close, not just safe.
    assert.equal(commits, 3);
  }),
);

Deno.test(
  "proof commits sized at KV's own limits land: long keys bind on the bytes of keys",
  withKv(async (kv) => {
    const keys = ledgerKeys(["lab", 7]);
    let commits = 0;
    // Vote ids of 90 characters under the lab's prefix: keys of 115 bytes, so 1,000 of them are
    // more than 80 KiB.
    const voteId = (i: number) => String(i).padStart(90, "v");
    await writeProofs({ kv, keys }, 1, syntheticProofs(1_000, { hashes: 0, voteId }), {
      ...KV_LIMITS,
      afterCommit: (k) => void (commits = k),
    });
    assert.equal(commits, 2);
    assert.notEqual((await kv.get(keys.voteIndex(voteId(999)))).versionstamp, null);
  }),
);
