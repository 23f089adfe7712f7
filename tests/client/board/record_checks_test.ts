/**
 * The bulletin board's own checks (lib/client/board/record_checks.ts): block hashes and links, the
 * inclusion walk and the proof steps with every kind of tampering, and the tally rows.
 * @module
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkBlocks,
  inclusionWalk,
  type ProofStep,
  proofSteps,
  tallyRows,
} from "../../../lib/client/board/record_checks.ts";
import { tallyOf } from "../../../lib/protocol/tally.ts";
import { bytesToHex } from "../../../lib/protocol/bytes.ts";
import { blockHash } from "../../../lib/protocol/chain.ts";
import type { VoteRecord } from "../../../lib/protocol/schemas.ts";
import { inclusionProof, merkleRoot, voteLeaf } from "../../../lib/protocol/merkle.ts";
import { rootFromInclusionProof } from "../../../lib/protocol/merkle_verify.ts";
import { makeChain, sampleVote } from "../../helpers/chain_fixture.ts";

/** The server's honest answer for leaf `index` of `votes`. */
function servedProof(votes: VoteRecord[], index: number) {
  const path = inclusionProof(votes.map(voteLeaf), index).map(bytesToHex);
  return { vote: votes[index], index, path };
}

function kinds(steps: ProofStep[]): string[] {
  return steps.map((s) => s.kind);
}

function failing(steps: ProofStep[]): string[] {
  return steps.filter((s) => !s.ok).map((s) => s.label);
}

Deno.test("checkBlocks", async (t) => {
  const { blocks } = makeChain([3, 1, 5]);

  await t.step("an honest chain: every hash and link holds", () => {
    const checks = checkBlocks(blocks);
    assert.deepEqual(checks.map((c) => [c.height, c.hashOk, c.link]), [
      [0, true, "ok"],
      [1, true, "ok"],
      [2, true, "ok"],
      [3, true, "ok"],
    ]);
    assert.equal(checks[2].computedHash, blocks[2].hash);
  });

  await t.step("a rewritten prev_hash breaks the link and the block's own hash", () => {
    const tampered = blocks.map((b) => b.height === 2 ? { ...b, prev_hash: "ab".repeat(32) } : b);
    const checks = checkBlocks(tampered);
    assert.equal(checks[2].link, "broken");
    assert.equal(checks[2].hashOk, false);
    assert.match(checks[2].reason, /differs from the hash of block 1/);
    assert.deepEqual(checks.filter((c) => c.height !== 2).map((c) => c.link), ["ok", "ok", "ok"]);
  });

  await t.step("a block rewritten with a consistent hash still breaks the next link", () => {
    const b1 = { ...blocks[1], timestamp: blocks[1].timestamp + 1 };
    const rehashed = { ...b1, hash: blockHash(b1) };
    const checks = checkBlocks([blocks[0], rehashed, blocks[2], blocks[3]]);
    assert.deepEqual(checks.map((c) => [c.hashOk, c.link]), [
      [true, "ok"],
      [true, "ok"],
      [true, "broken"],
      [true, "ok"],
    ]);
  });

  await t.step("a block whose predecessor is not loaded is unknown, in any order", () => {
    const checks = checkBlocks([blocks[3], blocks[2]]);
    assert.deepEqual(checks.map((c) => [c.height, c.link]), [[3, "ok"], [2, "unknown"]]);
  });

  await t.step("a block left out or served twice above the lowest one breaks a link", () => {
    const skipped = checkBlocks([blocks[0], blocks[1], blocks[3]]);
    assert.deepEqual(skipped.map((c) => [c.height, c.hashOk, c.link]), [
      [0, true, "ok"],
      [1, true, "ok"],
      [3, true, "broken"],
    ]);
    assert.equal(skipped[2].reason, "Block 2 is missing from the blocks served");
    const twice = checkBlocks([blocks[1], blocks[2], blocks[3], blocks[3]]);
    assert.deepEqual(twice.map((c) => c.link), ["unknown", "ok", "ok", "broken"]);
    assert.equal(twice[3].reason, "Block 3 is served twice");
  });

  await t.step("genesis must have the zero prev_hash, the empty root and size 0", () => {
    for (
      const bad of [
        { ...blocks[0], prev_hash: "11".repeat(32) },
        { ...blocks[0], size: 1 },
        { ...blocks[0], merkle_root: blocks[1].merkle_root },
      ]
    ) {
      assert.equal(checkBlocks([bad])[0].link, "broken");
    }
  });

  await t.step("a malformed block is a failed check, not an exception", () => {
    const [check] = checkBlocks([{ ...blocks[1], merkle_root: "not hex" }]);
    assert.equal(check.computedHash, null);
    assert.equal(check.hashOk, false);
  });
});

Deno.test("inclusionWalk ends at the Merkle root for every leaf of trees of 1 to 40 leaves", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 40 }), fc.nat(), (size, pick) => {
      const leaves = Array.from({ length: size }, (_, i) => voteLeaf(sampleVote(i)));
      const index = pick % size;
      const proof = inclusionProof(leaves, index);
      const walk = inclusionWalk({ index, size, leafHash: leaves[index], proof });
      assert.equal(walk.length, proof.length);
      const root = walk.length === 0 ? leaves[index] : walk[walk.length - 1].node;
      assert.deepEqual(root, merkleRoot(leaves));
      assert.deepEqual(
        root,
        rootFromInclusionProof({ index, size, leafHash: leaves[index], proof }),
      );
      walk.forEach((step, level) => assert.equal(step.sibling, proof[level]));
    }),
    { numRuns: 120 },
  );
});

Deno.test("inclusionWalk refuses an index outside the tree and a path of the wrong length", () => {
  const leaves = Array.from({ length: 5 }, (_, i) => voteLeaf(sampleVote(i)));
  const proof = inclusionProof(leaves, 2);
  const leafHash = leaves[2];
  assert.throws(() => inclusionWalk({ index: 5, size: 5, leafHash, proof }), RangeError);
  assert.throws(() => inclusionWalk({ index: -1, size: 5, leafHash, proof }), RangeError);
  assert.throws(
    () => inclusionWalk({ index: 2, size: 5, leafHash, proof: proof.slice(1) }),
    /too short/,
  );
  assert.throws(
    () => inclusionWalk({ index: 2, size: 5, leafHash, proof: [...proof, proof[0]] }),
    /too long/,
  );
});

Deno.test("proofSteps", async (t) => {
  const { blocks, votes } = makeChain([1, 6]);
  const block = blocks[2];
  const previous = blocks[1];
  const own = votes[2];

  await t.step("an honest proof: leaf, each sibling, root, block, previous, all green", () => {
    for (let index = 0; index < own.length; index++) {
      const steps = proofSteps({
        block,
        previous,
        votes: own,
        index,
        served: servedProof(own, index),
      });
      const pathLength = inclusionProof(own.map(voteLeaf), index).length;
      assert.deepEqual(kinds(steps), [
        "leaf",
        ...Array(pathLength).fill("sibling"),
        "root",
        "block",
        "previous",
      ]);
      assert.deepEqual(failing(steps), [], `leaf ${index}`);
      assert.equal(steps[0].value, bytesToHex(voteLeaf(own[index])));
      const root = steps.find((s) => s.kind === "root")!;
      assert.equal(root.value, block.merkle_root);
      const lastSibling = steps[pathLength];
      assert.equal(lastSibling.result?.value, block.merkle_root);
      assert.deepEqual(steps.find((s) => s.kind === "previous")!.expected?.value, previous.hash);
    }
  });

  await t.step("a one-vote block: the leaf is the root, no sibling", () => {
    const steps = proofSteps({
      block: blocks[1],
      previous: blocks[0],
      votes: votes[1],
      index: 0,
      served: servedProof(votes[1], 0),
    });
    assert.deepEqual(kinds(steps), ["leaf", "root", "block", "previous"]);
    assert.deepEqual(failing(steps), []);
  });

  const listed = own.map((v, i) => (i === 4 ? { ...v, payload: "Choice Z" } : v));

  await t.step("a listing with a rewritten payload: its leaf and the root turn red", () => {
    const steps = proofSteps({
      block,
      previous,
      votes: listed,
      index: 4,
      served: servedProof(own, 4),
    });
    assert.deepEqual(failing(steps), ["Leaf hash", "Merkle root"]);
    assert.equal(steps[0].expected?.value, bytesToHex(voteLeaf(own[4])));
    assert.notEqual(steps[0].value, steps[0].expected?.value);
  });

  await t.step("the same listing, without the server's proof: the root still turns red", () => {
    const steps = proofSteps({ block, previous, votes: listed, index: 4, served: null });
    assert.deepEqual(failing(steps), ["Merkle root"]);
  });

  await t.step("a neighbour of the rewritten vote: the sibling over it turns red", () => {
    // Leaf 5's first sibling is leaf 4.
    const steps = proofSteps({
      block,
      previous,
      votes: listed,
      index: 5,
      served: servedProof(own, 5),
    });
    assert.deepEqual(failing(steps), ["Sibling 1 (left)", "Merkle root"]);
    // Leaf 0's path covers leaves 4-5 in its last sibling (tree of 6: [0..3] [4..5]).
    const far = proofSteps({
      block,
      previous,
      votes: listed,
      index: 0,
      served: servedProof(own, 0),
    });
    assert.deepEqual(failing(far), ["Sibling 3 (right)", "Merkle root"]);
  });

  await t.step("a missing vote: the block's size and the root disagree", () => {
    const steps = proofSteps({ block, previous, votes: own.slice(0, 5), index: 0 });
    const root = steps.find((s) => s.kind === "root")!;
    assert.equal(root.ok, false);
    assert.match(root.note, /size is 6, but 5 votes are listed/);
  });

  await t.step("a server path that disagrees with the block's votes turns its step red", () => {
    const served = servedProof(own, 2);
    served.path = [...served.path];
    served.path[1] = "00".repeat(32);
    const steps = proofSteps({ block, previous, votes: own, index: 2, served });
    assert.deepEqual(failing(steps), ["Sibling 2 (left)"]);
    const longer = { ...servedProof(own, 2), path: [...servedProof(own, 2).path, "11".repeat(32)] };
    assert.deepEqual(
      failing(proofSteps({ block, previous, votes: own, index: 2, served: longer })),
      ["Extra path elements"],
    );
    const elsewhere = { ...servedProof(own, 2), index: 3 };
    assert.deepEqual(
      failing(proofSteps({ block, previous, votes: own, index: 2, served: elsewhere })),
      ["Leaf hash"],
    );
  });

  await t.step("a rewritten prev_hash: block hash and previous block turn red", () => {
    const moved = { ...block, prev_hash: "cd".repeat(32) };
    const steps = proofSteps({ block: moved, previous, votes: own, index: 1 });
    assert.deepEqual(failing(steps), ["Block hash", "Previous block"]);
  });

  await t.step("a previous block that cannot be read, or is itself forged, is red", () => {
    const unread = proofSteps({ block, previous: null, votes: own, index: 1 });
    assert.deepEqual(failing(unread), ["Previous block"]);
    const forged = { ...previous, timestamp: previous.timestamp + 1 };
    const steps = proofSteps({ block, previous: forged, votes: own, index: 1 });
    assert.deepEqual(failing(steps), ["Previous block"]);
    assert.match(steps[steps.length - 1].note, /does not match its own fields/);
  });

  await t.step("a malformed vote or block never throws", () => {
    const broken = own.map((v, i) => (i === 0 ? { ...v, publicKeys: ["XYZ"] } : v));
    const steps = proofSteps({ block, previous, votes: broken, index: 1 });
    assert.ok(failing(steps).includes("Merkle root"));
    const badBlock = { ...block, hash: "zz" };
    assert.ok(
      failing(proofSteps({ block: badBlock, previous, votes: own, index: 1 })).includes(
        "Block hash",
      ),
    );
  });
});

Deno.test("tally rows: served order, recount agreement, recount-only payloads", () => {
  const served = [{ payload: "A", count: 3 }, { payload: "B", count: 2 }];
  assert.deepEqual(tallyRows(served, null), [
    { payload: "A", served: 3, counted: null, ok: true },
    { payload: "B", served: 2, counted: null, ok: true },
  ]);
  const counted = tallyOf(["B", "A", "A", "C", "A"]);
  assert.deepEqual(counted, [
    { payload: "A", count: 3 },
    { payload: "B", count: 1 },
    { payload: "C", count: 1 },
  ]);
  assert.deepEqual(tallyRows(served, counted), [
    { payload: "A", served: 3, counted: 3, ok: true },
    { payload: "B", served: 2, counted: 1, ok: false },
    { payload: "C", served: 0, counted: 1, ok: false },
  ]);
  assert.deepEqual(tallyOf([]), []);
});
