// Sealing (protocol §5 "Close" and "Finalize"): a crash at any point is finished by the next run
// with the identical block hash and proofs; large blocks respect the KV commit limits; an empty
// open block is never closed.
import assert from "node:assert/strict";
import { bytesToHex } from "../../lib/protocol/bytes.ts";
import { blockHash, genesisBlock } from "../../lib/protocol/chain.ts";
import { merkleRoot, voteLeaf } from "../../lib/protocol/merkle.ts";
import type { VoteRecord } from "../../lib/protocol/schemas.ts";
import { type FaultPoint, SealFault, sealNextBlock } from "../../server/sealer.ts";
import { kvKeys } from "../../server/store/layout.ts";
import { createStore, type Store } from "../../server/store/mod.ts";
import { proofVerifies, unsignedVote } from "../helpers/ledger_fixtures.ts";

const GENESIS_AT = 1_700_000_000_000;

async function submitMany(store: Store, n: number, label: string) {
  const accepted: { voteId: string; blockId: number; vote: VoteRecord }[] = [];
  for (let i = 0; i < n; i++) {
    const { vote, tag } = unsignedVote(`${label} ${i}`);
    accepted.push({ ...(await store.submitVote(vote, tag)), vote });
  }
  return accepted;
}

/** The block a client would expect, computed from the accepted votes alone (protocol §3). */
function expectedBlock(
  votes: { voteId: string; vote: VoteRecord }[],
  { height, closedAt, prevHash }: { height: number; closedAt: number; prevHash: string },
) {
  const ordered = [...votes].sort((a, b) => (a.voteId < b.voteId ? -1 : 1));
  const header = {
    height,
    timestamp: closedAt,
    merkle_root: bytesToHex(merkleRoot(ordered.map((v) => voteLeaf(v.vote)))),
    prev_hash: prevHash,
    size: votes.length,
  };
  return { ...header, hash: blockHash(header) };
}

async function proofEntries(kv: Deno.Kv) {
  const out = new Map<string, unknown>();
  for await (const e of kv.list({ prefix: ["voteidx"] })) out.set(String(e.key[1]), e.value);
  for await (const e of kv.list({ prefix: ["leaf"] })) out.set(JSON.stringify(e.key), e.value);
  return out;
}

const faults: FaultPoint[] = ["close", "voteidx:0", "voteidx:1", "voteidx:3"];

for (const failAfter of faults) {
  Deno.test(`a crash after ${failAfter} is finished by the next run with the identical hash`, async () => {
    const kv = await Deno.openKv(":memory:");
    try {
      const store = await createStore(kv, { now: () => GENESIS_AT });
      const first = await submitMany(store, 23, "first");
      const closedAt = GENESIS_AT + 60_000;
      // Five mutations per proof commit: the block's 24 entries (23 proofs and the leaf index at
      // leaf 0) take five commits.
      await assert.rejects(
        sealNextBlock(store, closedAt, { failAfter, maxMutations: 5 }),
        SealFault,
      );
      const during = await store.status();
      assert.equal(during.height, 0);
      assert.equal(during.openBlock, 2, "block 1 is closed: new votes go into block 2");
      await assert.rejects(store.voteProof(1, first[0].voteId), /not sealed/);

      const second = await submitMany(store, 2, "second");
      assert.deepEqual(second.map((v) => v.blockId), [2, 2]);
      const written = await proofEntries(kv);

      const later = closedAt + 3_600_000;
      const sealed = await sealNextBlock(store, later);
      const block1 = expectedBlock(first, {
        height: 1,
        closedAt,
        prevHash: genesisBlock(GENESIS_AT).hash,
      });
      assert.deepEqual(sealed[0], block1);
      assert.deepEqual(
        sealed[1],
        expectedBlock(second, { height: 2, closedAt: later, prevHash: block1.hash }),
      );
      assert.equal(sealed.length, 2);

      // Proofs written before the crash are unchanged by the re-run (default batch size).
      const after = await proofEntries(kv);
      for (const [key, value] of written) assert.deepEqual(after.get(key), value, key);
      for (const { voteId, blockId } of [...first, ...second]) {
        assert.ok(proofVerifies(await store.voteProof(blockId, voteId)));
      }
    } finally {
      kv.close();
    }
  });
}

Deno.test("two sealers finishing the same crashed block agree on it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-seal-" });
  const kvA = await Deno.openKv(`${dir}/ledger.kv`);
  const kvB = await Deno.openKv(`${dir}/ledger.kv`);
  try {
    const storeA = await createStore(kvA, { now: () => GENESIS_AT });
    const storeB = await createStore(kvB);
    const votes = await submitMany(storeA, 40, "vote");
    await assert.rejects(
      sealNextBlock(storeA, GENESIS_AT + 1, { failAfter: "voteidx:2", maxMutations: 8 }),
      SealFault,
    );
    const [a, b] = await Promise.all([
      sealNextBlock(storeA, GENESIS_AT + 2, { maxMutations: 6 }),
      sealNextBlock(storeB, GENESIS_AT + 3),
    ]);
    const expected = expectedBlock(votes, {
      height: 1,
      closedAt: GENESIS_AT + 1,
      prevHash: genesisBlock(GENESIS_AT).hash,
    });
    assert.deepEqual(a, [expected]);
    assert.deepEqual(b, [expected]);
    assert.equal((await storeB.status()).height, 1);
  } finally {
    kvA.close();
    kvB.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an empty open block is never closed: no block, no seal", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    assert.deepEqual(await sealNextBlock(store, Date.now()), []);
    assert.deepEqual(await store.status().then((s) => [s.height, s.openBlock]), [0, 1]);
    assert.equal((await kv.get(kvKeys.seal(1))).versionstamp, null);
    await submitMany(store, 1, "only");
    assert.equal((await sealNextBlock(store, Date.now())).length, 1);
    assert.deepEqual(await sealNextBlock(store, Date.now()), []);
    assert.deepEqual(await store.status().then((s) => [s.height, s.openBlock]), [1, 2]);
  } finally {
    kv.close();
  }
});

Deno.test("a block of 2,500 votes is sealed within the KV commit limits, every proof stored", async () => {
  // Local Deno KV enforces 1,000 mutations and 800 KiB per commit, so this block (2,500 proofs
  // with paths of up to 12 hashes, 25 leaf index entries) only seals if the proof commits are split
  // correctly.
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    const votes = await submitMany(store, 2500, "large");
    const [block] = await sealNextBlock(store, GENESIS_AT);
    assert.equal(block.size, 2500);
    const indexes = new Set<number>();
    for (const { voteId } of votes) {
      const proof = await store.voteProof(1, voteId);
      assert.ok(proof.path.length <= 12);
      assert.ok(proofVerifies(proof));
      indexes.add(proof.index);
    }
    assert.equal(indexes.size, 2500);
    const page = await store.blockVotes(1, 2400, 100);
    assert.deepEqual(
      page.votes.map((v) => v.index),
      Array.from({ length: 100 }, (_, i) => 2400 + i),
    );
  } finally {
    kv.close();
  }
});
