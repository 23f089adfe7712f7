// RFC 9162 consistency proofs (§2.1.4) and the append-only tree of lib/protocol/merkle.ts: the
// published transparency-dev proofs reproduced and their probe corpus answered, a negative corpus
// of our own, every proof of every pair of sizes up to 64 verifying, and any changed hash or size
// failing (with the one ambiguity RFC 9162 leaves: the new size, when the root is kept).
import assert from "node:assert/strict";
import fc from "fast-check";
import { base64ToBytes, bytesToHex, hexToBytes, u32be } from "../../lib/protocol/bytes.ts";
import {
  consistencyProof,
  createAppendOnlyTree,
  emptyRoot,
  hashLeaf,
  inclusionProof,
  merkleRoot,
  rootOfSize,
} from "../../lib/protocol/merkle.ts";
import {
  type ConsistencyProofInput,
  verifyConsistency,
  verifyInclusion,
} from "../../lib/protocol/merkle_verify.ts";
import rfc from "../vectors/rfc6962_merkle.json" with { type: "json" };
import probes from "../vectors/rfc9162_consistency.json" with { type: "json" };

const rfcLeaves = rfc.leafInputs.map((hex) => hashLeaf(hexToBytes(hex)));
const leaves = Array.from({ length: 70 }, (_, i) => hashLeaf(u32be(i)));

function probeFor(m: number, n: number, from = leaves): ConsistencyProofInput {
  return {
    oldSize: m,
    newSize: n,
    oldRoot: rootOfSize(from, m),
    newRoot: rootOfSize(from, n),
    proof: consistencyProof(from, m, n),
  };
}

function flip(bytes: Uint8Array, at = 0, mask = 0x01): Uint8Array {
  const out = bytes.slice();
  out[at] ^= mask;
  return out;
}

Deno.test("consistencyProof reproduces the four published proofs of the RFC 6962 tree", () => {
  const happy = probes.probes.filter((p) => p.desc === "happy path" && p.size1 !== p.size2);
  assert.deepEqual(happy.map((p) => `${p.size1}->${p.size2}`), ["1->8", "6->8", "2->5", "6->7"]);
  for (const p of happy) {
    const label = `${p.size1}->${p.size2}`;
    const proof = consistencyProof(rfcLeaves, p.size1, p.size2);
    assert.deepEqual(proof.map(bytesToHex), p.proof!.map((h) => bytesToHex(base64ToBytes(h))));
    assert.equal(bytesToHex(rootOfSize(rfcLeaves, p.size1)), bytesToHex(base64ToBytes(p.root1)));
    assert.equal(bytesToHex(rootOfSize(rfcLeaves, p.size2)), rfc.roots[p.size2], label);
    assert.equal(verifyConsistency(probeFor(p.size1, p.size2, rfcLeaves)), true, label);
  }
});

Deno.test("verifyConsistency answers every transparency-dev probe as published", async (t) => {
  assert.equal(probes.probes.length, 98);
  for (const p of probes.probes) {
    await t.step(`${p.file}: ${p.desc}`, () => {
      const input = {
        oldSize: p.size1,
        newSize: p.size2,
        oldRoot: base64ToBytes(p.root1),
        newRoot: base64ToBytes(p.root2),
        proof: (p.proof ?? []).map((h) => base64ToBytes(h)),
      };
      // Malformed input throws (a root that is not 32 bytes, old > new) whatever the probe wants:
      // one happy probe compares two equal 12-byte "roots" at size 1, which we refuse as input.
      const malformed = input.oldRoot.length !== 32 || input.newRoot.length !== 32 ||
        input.proof.some((h) => h.length !== 32) || p.size1 > p.size2;
      if (malformed) assert.throws(() => verifyConsistency(input), RangeError);
      else assert.equal(verifyConsistency(input), !p.wantErr);
    });
  }
});

type Mutation = {
  desc: string;
  mutate: (p: ConsistencyProofInput) => unknown;
  expected: false | "TypeError" | "RangeError";
};

const someHash = hashLeaf(new Uint8Array([0xee]));

const negativeCorpus: Mutation[] = [
  { desc: "old size + 1", mutate: (p) => ({ ...p, oldSize: p.oldSize + 1 }), expected: false },
  { desc: "old size - 1", mutate: (p) => ({ ...p, oldSize: p.oldSize - 1 }), expected: false },
  {
    desc: "roots swapped",
    mutate: (p) => ({ ...p, oldRoot: p.newRoot, newRoot: p.oldRoot }),
    expected: false,
  },
  {
    desc: "old root changed",
    mutate: (p) => ({ ...p, oldRoot: flip(p.oldRoot, 31) }),
    expected: false,
  },
  {
    desc: "new root changed",
    mutate: (p) => ({ ...p, newRoot: flip(p.newRoot, 5) }),
    expected: false,
  },
  {
    desc: "first hash changed",
    mutate: (p) => ({ ...p, proof: [flip(p.proof[0]), ...p.proof.slice(1)] }),
    expected: false,
  },
  {
    desc: "last hash changed",
    mutate: (p) => ({ ...p, proof: [...p.proof.slice(0, -1), flip(p.proof.at(-1)!)] }),
    expected: false,
  },
  { desc: "truncated", mutate: (p) => ({ ...p, proof: p.proof.slice(0, -1) }), expected: false },
  {
    desc: "first hash dropped",
    mutate: (p) => ({ ...p, proof: p.proof.slice(1) }),
    expected: false,
  },
  {
    desc: "hash appended",
    mutate: (p) => ({ ...p, proof: [...p.proof, someHash] }),
    expected: false,
  },
  {
    desc: "old root prepended",
    mutate: (p) => ({ ...p, proof: [p.oldRoot, ...p.proof] }),
    expected: false,
  },
  {
    desc: "new root appended",
    mutate: (p) => ({ ...p, proof: [...p.proof, p.newRoot] }),
    expected: false,
  },
  {
    desc: "two hashes swapped",
    mutate: (p) => ({ ...p, proof: [p.proof[1], p.proof[0], ...p.proof.slice(2)] }),
    expected: false,
  },
  { desc: "empty proof", mutate: (p) => ({ ...p, proof: [] }), expected: false },
  {
    desc: "old size above new size",
    mutate: (p) => ({ ...p, oldSize: p.newSize + 1 }),
    expected: "RangeError",
  },
  { desc: "negative old size", mutate: (p) => ({ ...p, oldSize: -1 }), expected: "RangeError" },
  {
    desc: "fractional new size",
    mutate: (p) => ({ ...p, newSize: p.newSize + 0.5 }),
    expected: "RangeError",
  },
  {
    desc: "old size as a string",
    mutate: (p) => ({ ...p, oldSize: String(p.oldSize) }),
    expected: "TypeError",
  },
  { desc: "new size 2^53", mutate: (p) => ({ ...p, newSize: 2 ** 53 }), expected: "RangeError" },
  {
    desc: "old root of 31 bytes",
    mutate: (p) => ({ ...p, oldRoot: p.oldRoot.subarray(1) }),
    expected: "RangeError",
  },
  {
    desc: "new root as hex",
    mutate: (p) => ({ ...p, newRoot: bytesToHex(p.newRoot) }),
    expected: "TypeError",
  },
  {
    desc: "proof hash of 33 bytes",
    mutate: (p) => ({ ...p, proof: [new Uint8Array(33), ...p.proof.slice(1)] }),
    expected: "RangeError",
  },
  {
    desc: "proof hash as an array",
    mutate: (p) => ({ ...p, proof: [[...p.proof[0]], ...p.proof.slice(1)] }),
    expected: "TypeError",
  },
  {
    desc: "proof not an array",
    mutate: (p) => ({ ...p, proof: p.proof[0] }),
    expected: "TypeError",
  },
  { desc: "input null", mutate: () => null, expected: "TypeError" },
];

Deno.test("verifyConsistency: negative corpus", async (t) => {
  // Proofs of two hashes or more, from sizes with and without a power-of-two old tree.
  const corpusProbes = [
    probeFor(3, 7),
    probeFor(4, 9),
    probeFor(6, 8, rfcLeaves),
    probeFor(13, 64),
  ];
  for (const probe of corpusProbes) {
    assert.equal(verifyConsistency(probe), true, "the unmodified probe verifies");
    await t.step(`${probe.oldSize} -> ${probe.newSize}`, () => {
      for (const { desc, mutate, expected } of negativeCorpus) {
        const input = mutate(probe) as ConsistencyProofInput;
        if (expected === false) assert.equal(verifyConsistency(input), false, desc);
        else assert.throws(() => verifyConsistency(input), (e: Error) => e.name === expected, desc);
      }
    });
  }
});

Deno.test("verifyConsistency: equal sizes and the empty tree", () => {
  const empty = emptyRoot();
  const root5 = rootOfSize(leaves, 5);
  const cases: [string, ConsistencyProofInput, boolean][] = [
    [
      "5 -> 5, same root",
      { oldSize: 5, newSize: 5, oldRoot: root5, newRoot: root5, proof: [] },
      true,
    ],
    [
      "5 -> 5, other root",
      { oldSize: 5, newSize: 5, oldRoot: root5, newRoot: empty, proof: [] },
      false,
    ],
    ["5 -> 5, a hash given", {
      oldSize: 5,
      newSize: 5,
      oldRoot: root5,
      newRoot: root5,
      proof: [root5],
    }, false],
    [
      "0 -> 5, empty root",
      { oldSize: 0, newSize: 5, oldRoot: empty, newRoot: root5, proof: [] },
      true,
    ],
    ["0 -> 5, another old root", {
      oldSize: 0,
      newSize: 5,
      oldRoot: root5,
      newRoot: root5,
      proof: [],
    }, false],
    ["0 -> 5, a hash given", {
      oldSize: 0,
      newSize: 5,
      oldRoot: empty,
      newRoot: root5,
      proof: [empty],
    }, false],
    [
      "0 -> 0, empty roots",
      { oldSize: 0, newSize: 0, oldRoot: empty, newRoot: empty, proof: [] },
      true,
    ],
    ["0 -> 0, another new root", {
      oldSize: 0,
      newSize: 0,
      oldRoot: empty,
      newRoot: root5,
      proof: [],
    }, false],
  ];
  for (const [desc, input, expected] of cases) {
    assert.equal(verifyConsistency(input), expected, desc);
  }
  assert.deepEqual(consistencyProof(leaves, 0, 5), []);
  assert.deepEqual(consistencyProof(leaves, 5, 5), []);
});

Deno.test("every consistency proof verifies for all 0 < m <= n <= 64", () => {
  for (let n = 1; n <= 64; n++) {
    for (let m = 1; m <= n; m++) {
      assert.equal(verifyConsistency(probeFor(m, n)), true, `${m} -> ${n}`);
    }
  }
});

Deno.test("property: any changed hash or old size fails, and so does a new size with its own root", () => {
  const pairs = fc.integer({ min: 1, max: 64 }).chain((n) =>
    fc.record({ n: fc.constant(n), m: fc.integer({ min: 1, max: n }) })
  );
  fc.assert(
    fc.property(pairs, fc.nat(), fc.nat({ max: 31 }), fc.integer({ min: 1, max: 255 }), (
      { m, n },
      pick,
      byte,
      mask,
    ) => {
      const probe = probeFor(m, n);
      // Every 32-byte hash the check reads: the two roots and each proof hash.
      const hashes = 2 + probe.proof.length;
      const at = pick % hashes;
      const changed = { ...probe, proof: probe.proof.slice() };
      if (at === 0) changed.oldRoot = flip(probe.oldRoot, byte, mask);
      else if (at === 1) changed.newRoot = flip(probe.newRoot, byte, mask);
      else changed.proof[at - 2] = flip(probe.proof[at - 2], byte, mask);
      assert.equal(verifyConsistency(changed), false);
    }),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(pairs, fc.integer({ min: 1, max: 66 }), ({ m, n }, other) => {
      const probe = probeFor(m, n);
      if (other !== m && other <= n) {
        assert.equal(verifyConsistency({ ...probe, oldSize: other }), false, "old size, old root");
        const honestOld = { ...probe, oldSize: other, oldRoot: rootOfSize(leaves, other) };
        assert.equal(verifyConsistency(honestOld), false, "old size with its own root");
      }
      if (other !== n && other >= m) {
        const honestNew = { ...probe, newSize: other, newRoot: rootOfSize(leaves, other) };
        assert.equal(verifyConsistency(honestNew), false, "new size with its own root");
      }
    }),
    { numRuns: 1000 },
  );
});

Deno.test("a proof that fits new size n may fit n + 1 with the same root: the checkpoint pins both", () => {
  // RFC 9162 verification sees the new size only through the walk's shape, as for inclusion
  // (merkle_test.ts). A checkpoint signs size and root together, so a verifier never picks one.
  const probe = probeFor(1, 3);
  assert.equal(verifyConsistency({ ...probe, newSize: 4 }), true);
  assert.equal(verifyConsistency({ ...probe, newSize: 4, newRoot: rootOfSize(leaves, 4) }), false);
  assert.equal(verifyConsistency({ ...probe, newSize: 5 }), false);
});

Deno.test("the append-only tree answers every past size as the list functions do", () => {
  const tree = createAppendOnlyTree();
  assert.equal(tree.size, 0);
  assert.deepEqual(tree.root(0), emptyRoot());
  for (let n = 1; n <= leaves.length; n++) {
    tree.append(leaves[n - 1]);
    assert.equal(tree.size, n);
    assert.deepEqual(tree.root(n), merkleRoot(leaves.slice(0, n)), `root ${n}`);
  }
  for (let n = 1; n <= leaves.length; n++) {
    const prefix = leaves.slice(0, n);
    for (let m = 0; m <= n; m++) {
      assert.deepEqual(tree.consistencyProof(m, n), consistencyProof(leaves, m, n), `${m} -> ${n}`);
    }
    for (let i = 0; i < n; i++) {
      const proof = tree.inclusionProof(i, n);
      assert.deepEqual(proof, inclusionProof(prefix, i), `leaf ${i} of ${n}`);
      const root = tree.root(n);
      assert.equal(verifyInclusion({ index: i, size: n, leafHash: leaves[i], proof, root }), true);
    }
  }
});

Deno.test("tree and proof builders reject hostile inputs by type, then by range", () => {
  const tree = createAppendOnlyTree();
  for (const leaf of leaves.slice(0, 5)) tree.append(leaf);
  const cases: [string, () => unknown, string][] = [
    ["append a 31-byte hash", () => tree.append(new Uint8Array(31)), "RangeError"],
    ["append hex", () => tree.append(bytesToHex(leaves[0]) as never), "TypeError"],
    ["root past the size", () => tree.root(6), "RangeError"],
    ["root of size -1", () => tree.root(-1), "RangeError"],
    ["inclusion at index = size", () => tree.inclusionProof(5, 5), "RangeError"],
    ["inclusion in a size past the tree", () => tree.inclusionProof(0, 6), "RangeError"],
    ["consistency old > new", () => tree.consistencyProof(4, 3), "RangeError"],
    ["consistency past the tree", () => tree.consistencyProof(1, 6), "RangeError"],
    ["consistency of '1'", () => tree.consistencyProof("1" as never, 3), "TypeError"],
    ["consistencyProof past the list", () => consistencyProof(leaves, 1, 71), "RangeError"],
    [
      "consistencyProof of a short leaf",
      () => consistencyProof([new Uint8Array(4)], 0, 1),
      "RangeError",
    ],
    ["rootOfSize past the list", () => rootOfSize(leaves.slice(0, 3), 4), "RangeError"],
    ["rootOfSize of a non-array", () => rootOfSize("abc" as never, 0), "TypeError"],
  ];
  for (const [desc, run, name] of cases) {
    assert.throws(run, (e: Error) => e.name === name, desc);
  }
  assert.equal(tree.size, 5, "a refused append leaves the tree as it was");
});
