import assert from "node:assert/strict";
import fc from "fast-check";
import { bytesToHex, hexToBytes, u32be, utf8 } from "../../lib/protocol/bytes.ts";
import {
  allInclusionProofs,
  emptyRoot,
  hashChildren,
  hashLeaf,
  inclusionProof,
  merkleRoot,
  voteBytes,
  voteLeaf,
} from "../../lib/protocol/merkle.ts";
import {
  type InclusionProofInput,
  rootFromInclusionProof,
  verifyInclusion,
} from "../../lib/protocol/merkle_verify.ts";
import type { VoteRecord } from "../../lib/protocol/schemas.ts";
import rfc from "../vectors/rfc6962_merkle.json" with { type: "json" };
import voteVector from "../vectors/merkle_vote.json" with { type: "json" };

const rfcLeaves = rfc.leafInputs.map((hex) => hashLeaf(hexToBytes(hex)));

/** Distinct leaf hashes for a tree of `n` leaves, seeded so different tests get different trees. */
function leavesOf(n: number, seed = 0): Uint8Array[] {
  return Array.from({ length: n }, (_, i) => hashLeaf(utf8(`vote ${seed}/${i}`)));
}

type Probe = InclusionProofInput & { root: Uint8Array };

function probeFor(leaves: Uint8Array[], index: number): Probe {
  return {
    index,
    size: leaves.length,
    leafHash: leaves[index],
    proof: inclusionProof(leaves, index),
    root: merkleRoot(leaves),
  };
}

function flipBit(bytes: Uint8Array, byte: number, mask = 0x08): Uint8Array {
  const out = bytes.slice();
  out[byte] ^= mask;
  return out;
}

function hexes(hashes: Uint8Array[]): string[] {
  return hashes.map(bytesToHex);
}

Deno.test("hashLeaf and emptyRoot match the RFC 6962 hasher vectors", () => {
  assert.equal(bytesToHex(emptyRoot()), rfc.hasher.emptyRoot);
  for (const v of rfc.hasher.leaves) {
    assert.equal(bytesToHex(hashLeaf(hexToBytes(v.data))), v.hash, v.desc);
  }
});

Deno.test("merkleRoot matches the published RFC 6962 roots for every size 0..8", () => {
  assert.equal(rfc.roots.length, 9);
  for (let size = 0; size <= 8; size++) {
    assert.equal(bytesToHex(merkleRoot(rfcLeaves.slice(0, size))), rfc.roots[size], `size ${size}`);
  }
});

Deno.test("inclusionProof reproduces every published RFC 6962 audit path, which verifies", () => {
  assert.equal(rfc.inclusionProofs.length, 5);
  for (const { index, size, path } of rfc.inclusionProofs) {
    const leaves = rfcLeaves.slice(0, size);
    const label = `index ${index}, size ${size}`;
    assert.deepEqual(hexes(inclusionProof(leaves, index)), path, label);
    assert.deepEqual(hexes(allInclusionProofs(leaves)[index]), path, label);
    const input = {
      index,
      size,
      leafHash: rfcLeaves[index],
      proof: path.map((h) => hexToBytes(h)),
    };
    assert.equal(bytesToHex(rootFromInclusionProof(input)), rfc.roots[size], label);
    assert.equal(verifyInclusion({ ...input, root: hexToBytes(rfc.roots[size]) }), true, label);
  }
});

Deno.test("a one-leaf tree has an empty path and its root is the leaf hash", () => {
  const leaf = hashLeaf(utf8("only vote"));
  assert.deepEqual(merkleRoot([leaf]), leaf);
  assert.deepEqual(inclusionProof([leaf], 0), []);
  assert.deepEqual(allInclusionProofs([leaf]), [[]]);
  assert.deepEqual(rootFromInclusionProof({ index: 0, size: 1, leafHash: leaf, proof: [] }), leaf);
  assert.deepEqual(allInclusionProofs([]), []);
});

Deno.test("hashChildren is SHA-256(0x01 ‖ left ‖ right) and depends on the order", () => {
  const [a, b] = rfcLeaves;
  // roots[2] of the published vectors is the node over leaves 0 and 1.
  assert.equal(bytesToHex(hashChildren(a, b)), rfc.roots[2]);
  assert.notDeepEqual(hashChildren(b, a), hashChildren(a, b));
});

Deno.test("allInclusionProofs equals inclusionProof for every leaf at sizes 1..70", () => {
  for (let size = 1; size <= 70; size++) {
    const leaves = leavesOf(size, size);
    const root = merkleRoot(leaves);
    const all = allInclusionProofs(leaves);
    assert.equal(all.length, size);
    for (let index = 0; index < size; index++) {
      const proof = inclusionProof(leaves, index);
      assert.deepEqual(all[index], proof, `size ${size}, index ${index}`);
      const leafHash = leaves[index];
      assert.ok(verifyInclusion({ index, size, leafHash, proof, root }), `size ${size}, ${index}`);
    }
  }
});

type Expected = false | "TypeError" | "RangeError";
type Case = { desc: string; mutate: (p: Probe) => unknown; expected: Expected };

const someHash = hashLeaf(utf8("some other vote"));

// Each case corrupts a valid probe and has one expected outcome for every probe below.
const negativeCorpus: Case[] = [
  {
    desc: "bit flip in the first path element",
    mutate: (p) => ({ ...p, proof: [flipBit(p.proof[0], 0), ...p.proof.slice(1)] }),
    expected: false,
  },
  {
    desc: "bit flip in the last path element",
    mutate: (p) => ({ ...p, proof: [...p.proof.slice(0, -1), flipBit(p.proof.at(-1)!, 31, 1)] }),
    expected: false,
  },
  {
    desc: "truncated path",
    mutate: (p) => ({ ...p, proof: p.proof.slice(0, -1) }),
    expected: false,
  },
  {
    desc: "first element removed",
    mutate: (p) => ({ ...p, proof: p.proof.slice(1) }),
    expected: false,
  },
  { desc: "empty path", mutate: (p) => ({ ...p, proof: [] }), expected: false },
  {
    desc: "extended path (root appended)",
    mutate: (p) => ({ ...p, proof: [...p.proof, p.root] }),
    expected: false,
  },
  {
    desc: "extended path (root prepended)",
    mutate: (p) => ({ ...p, proof: [p.root, ...p.proof] }),
    expected: false,
  },
  {
    desc: "inserted component",
    mutate: (p) => ({ ...p, proof: [p.proof[0], someHash, ...p.proof.slice(1)] }),
    expected: false,
  },
  {
    desc: "two path elements swapped",
    mutate: (p) => ({ ...p, proof: [p.proof[1], p.proof[0], ...p.proof.slice(2)] }),
    expected: false,
  },
  { desc: "index + 1", mutate: (p) => ({ ...p, index: p.index + 1 }), expected: false },
  { desc: "index - 1", mutate: (p) => ({ ...p, index: p.index - 1 }), expected: false },
  { desc: "index - 2", mutate: (p) => ({ ...p, index: p.index - 2 }), expected: false },
  { desc: "size + 1", mutate: (p) => ({ ...p, size: p.size + 1 }), expected: false },
  { desc: "size - 1", mutate: (p) => ({ ...p, size: p.size - 1 }), expected: false },
  { desc: "size * 2", mutate: (p) => ({ ...p, size: p.size * 2 }), expected: false },
  { desc: "wrong leaf", mutate: (p) => ({ ...p, leafHash: someHash }), expected: false },
  {
    desc: "interior node hash given as the leaf hash",
    mutate: (p) => ({ ...p, leafHash: hashChildren(p.proof[0], p.proof[0]) }),
    expected: false,
  },
  {
    desc: "root bit flipped",
    mutate: (p) => ({ ...p, root: flipBit(p.root, 5) }),
    expected: false,
  },
  { desc: "empty-tree root", mutate: (p) => ({ ...p, root: emptyRoot() }), expected: false },
  { desc: "leaf hash given as root", mutate: (p) => ({ ...p, root: p.leafHash }), expected: false },
  { desc: "index = size", mutate: (p) => ({ ...p, index: p.size }), expected: "RangeError" },
  { desc: "index > size", mutate: (p) => ({ ...p, index: p.size + 7 }), expected: "RangeError" },
  { desc: "negative index", mutate: (p) => ({ ...p, index: -1 }), expected: "RangeError" },
  { desc: "fractional index", mutate: (p) => ({ ...p, index: 1.5 }), expected: "RangeError" },
  { desc: "index beyond 2^53", mutate: (p) => ({ ...p, index: 2 ** 53 }), expected: "RangeError" },
  { desc: "index as a string", mutate: (p) => ({ ...p, index: "1" }), expected: "TypeError" },
  { desc: "size 0", mutate: (p) => ({ ...p, size: 0 }), expected: "RangeError" },
  { desc: "size NaN", mutate: (p) => ({ ...p, size: NaN }), expected: "RangeError" },
  { desc: "size missing", mutate: (p) => ({ ...p, size: undefined }), expected: "TypeError" },
  {
    desc: "31-byte path element",
    mutate: (p) => ({ ...p, proof: [p.proof[0].subarray(1), ...p.proof.slice(1)] }),
    expected: "RangeError",
  },
  {
    desc: "empty trailing path element",
    mutate: (p) => ({ ...p, proof: [...p.proof, new Uint8Array(0)] }),
    expected: "RangeError",
  },
  {
    desc: "33-byte leaf hash",
    mutate: (p) => ({ ...p, leafHash: Uint8Array.of(0, ...p.leafHash) }),
    expected: "RangeError",
  },
  {
    desc: "empty root",
    mutate: (p) => ({ ...p, root: new Uint8Array(0) }),
    expected: "RangeError",
  },
  {
    desc: "path element as hex string",
    mutate: (p) => ({ ...p, proof: [bytesToHex(p.proof[0]), ...p.proof.slice(1)] }),
    expected: "TypeError",
  },
  {
    desc: "path not an array",
    mutate: (p) => ({ ...p, proof: p.proof[0] }),
    expected: "TypeError",
  },
  {
    desc: "root as number array",
    mutate: (p) => ({ ...p, root: [...p.root] }),
    expected: "TypeError",
  },
  { desc: "null instead of input", mutate: () => null, expected: "TypeError" },
];

// Every probe has index = size - 2 with size even: the only probes whose path shape changes when
// the size moves by one either way (see the size n + 1 test below), so "size ± 1" fails for all.
const corpusProbes: Probe[] = [
  probeFor(rfcLeaves, 6),
  probeFor(leavesOf(14), 12),
  probeFor(leavesOf(32), 30),
  probeFor(leavesOf(70), 68),
];

Deno.test("verifyInclusion: negative corpus", async (t) => {
  for (const probe of corpusProbes) {
    assert.equal(verifyInclusion(probe), true, "the unmodified probe verifies");
    await t.step(`index ${probe.index}, size ${probe.size}`, () => {
      for (const { desc, mutate, expected } of negativeCorpus) {
        const input = mutate(probe) as Probe;
        if (expected === false) {
          assert.equal(verifyInclusion(input), false, desc);
        } else {
          const name = expected;
          assert.throws(() => verifyInclusion(input), (e: Error) => e.name === name, desc);
        }
      }
    });
  }
});

Deno.test("rootFromInclusionProof rejects a path of the wrong length and index >= size", () => {
  const leaves = leavesOf(11);
  const { proof, leafHash } = probeFor(leaves, 4);
  const cases: [string, InclusionProofInput][] = [
    ["too short", { index: 4, size: 11, leafHash, proof: proof.slice(0, -1) }],
    ["too long", { index: 4, size: 11, leafHash, proof: [...proof, someHash] }],
    ["index = size", { index: 11, size: 11, leafHash, proof }],
    ["index for an empty tree", { index: 0, size: 0, leafHash, proof: [] }],
  ];
  for (const [desc, input] of cases) {
    assert.throws(() => rootFromInclusionProof(input), RangeError, desc);
  }
  assert.deepEqual(
    rootFromInclusionProof({ index: 4, size: 11, leafHash, proof }),
    merkleRoot(leaves),
  );
});

Deno.test("a path that fits size n often fits size n ± 1 too: only the block size pins it", () => {
  // RFC 9162 verification sees the tree size only through the path's shape, so a proof also
  // verifies against the same root for any size with the same shape. protocol §3 closes this gap by
  // committing the block size in the block hash.
  const fiveLeaves = probeFor(rfcLeaves.slice(0, 5), 1);
  assert.equal(verifyInclusion({ ...fiveLeaves, size: 6 }), true);
  assert.equal(verifyInclusion({ ...fiveLeaves, size: 7 }), true);
  assert.equal(verifyInclusion({ ...fiveLeaves, size: 9 }), false);
  const eightLeaves = probeFor(rfcLeaves, 5);
  assert.equal(verifyInclusion({ ...eightLeaves, size: 7 }), true);
  assert.equal(verifyInclusion({ ...eightLeaves, size: 9 }), false);
});

Deno.test("tree functions reject hostile inputs by type, then by length", () => {
  const leaves = leavesOf(4);
  const cases: [string, () => unknown, string][] = [
    ["merkleRoot of a non-array", () => merkleRoot("abc" as never), "TypeError"],
    ["merkleRoot of hex strings", () => merkleRoot([bytesToHex(leaves[0])] as never), "TypeError"],
    ["merkleRoot of a 31-byte leaf", () => merkleRoot([leaves[0].subarray(1)]), "RangeError"],
    ["merkleRoot of raw data", () => merkleRoot([utf8("vote")]), "RangeError"],
    ["inclusionProof at index = size", () => inclusionProof(leaves, 4), "RangeError"],
    ["inclusionProof at index -1", () => inclusionProof(leaves, -1), "RangeError"],
    ["inclusionProof of an empty tree", () => inclusionProof([], 0), "RangeError"],
    ["inclusionProof at index '0'", () => inclusionProof(leaves, "0" as never), "TypeError"],
    [
      "allInclusionProofs of a short leaf",
      () => allInclusionProofs([new Uint8Array(8)]),
      "RangeError",
    ],
    ["allInclusionProofs of null", () => allInclusionProofs(null as never), "TypeError"],
    [
      "hashChildren of a 64-byte left",
      () => hashChildren(new Uint8Array(64), leaves[0]),
      "RangeError",
    ],
    [
      "hashChildren of an array",
      () => hashChildren([...leaves[0]] as never, leaves[1]),
      "TypeError",
    ],
    ["hashLeaf of a string", () => hashLeaf("vote" as never), "TypeError"],
  ];
  for (const [desc, run, name] of cases) {
    assert.throws(run, (e: Error) => e.name === name, desc);
  }
});

Deno.test("property: every path verifies and any single-byte change to it fails", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 300 }).chain((size) =>
        fc.record({
          size: fc.constant(size),
          index: fc.nat({ max: size - 1 }),
          element: fc.nat(),
          byte: fc.nat({ max: 31 }),
          delta: fc.integer({ min: 1, max: 255 }),
        })
      ),
      ({ size, index, element, byte, delta }) => {
        const leaves = Array.from({ length: size }, (_, i) => hashLeaf(u32be(i)));
        const probe = probeFor(leaves, index);
        assert.equal(verifyInclusion(probe), true);
        if (probe.proof.length === 0) return; // one leaf: nothing to change
        const at = element % probe.proof.length;
        const changed = probe.proof.slice();
        changed[at] = changed[at].slice();
        changed[at][byte] ^= delta;
        assert.equal(verifyInclusion({ ...probe, proof: changed }), false);
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("voteBytes orders the keys payload, signature, publicKeys and sorts the ring", () => {
  const a = "a".repeat(64);
  const b = "0b".repeat(32);
  const c = "9f".repeat(32);
  const vote = { publicKeys: [a, c, b], signature: '{"c0":"00"}', payload: "yes" };
  const expected =
    `{"payload":"yes","signature":"{\\"c0\\":\\"00\\"}","publicKeys":["${b}","${c}","${a}"]}`;
  assert.equal(new TextDecoder().decode(voteBytes(vote)), expected);
  assert.deepEqual(vote.publicKeys, [a, c, b], "the caller's ring order is left alone");
  assert.deepEqual(voteLeaf(vote), hashLeaf(utf8(expected)));
});

Deno.test("voteBytes and voteLeaf match the vote vector (unicode payload)", () => {
  const vote: VoteRecord = voteVector.vote;
  const bytes = voteBytes(vote);
  assert.equal(new TextDecoder().decode(bytes), voteVector.expectedBytes);
  assert.deepEqual(bytes, utf8(voteVector.expectedBytes));
  assert.equal(bytesToHex(voteLeaf(vote)), voteVector.leafHash);
});

Deno.test("voteBytes rejects malformed votes", () => {
  const key = "c".repeat(64);
  const cases: [string, unknown, string][] = [
    ["null vote", null, "TypeError"],
    ["numeric payload", { payload: 1, signature: "", publicKeys: [key] }, "TypeError"],
    ["missing signature", { payload: "yes", publicKeys: [key] }, "TypeError"],
    ["publicKeys not an array", { payload: "yes", signature: "", publicKeys: key }, "TypeError"],
    [
      "uppercase key",
      { payload: "yes", signature: "", publicKeys: [key.toUpperCase()] },
      "RangeError",
    ],
    ["short key", { payload: "yes", signature: "", publicKeys: [key.slice(2)] }, "RangeError"],
    ["numeric key", { payload: "yes", signature: "", publicKeys: [7] }, "TypeError"],
  ];
  for (const [desc, vote, name] of cases) {
    assert.throws(() => voteBytes(vote as VoteRecord), (e: Error) => e.name === name, desc);
  }
});
