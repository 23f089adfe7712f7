// Browser-safe. The verification of RFC 9162 proofs: an inclusion proof's root (§2.1.3.2), step
// by step for a page that shows them, and a consistency proof between two tree heads (§2.1.4.2),
// with the corner cases of C2SP tlog-witness. Every input is checked by type (TypeError) and
// length (RangeError) before any hashing.
import { assertBytes, assertNonNegativeInteger, equalBytes } from "./bytes.ts";
import { assertSizes, emptyRoot, HASH_SIZE, hashChildren } from "./merkle.ts";

/** Inputs of {@link rootFromInclusionProof}. */
export type InclusionProofInput = {
  index: number;
  size: number;
  leafHash: Uint8Array;
  proof: Uint8Array[];
};

function assertProofInput(input: unknown): InclusionProofInput {
  if (typeof input !== "object" || input === null) throw new TypeError("input must be an object");
  const { index, size, leafHash, proof } = input as Record<string, unknown>;
  assertNonNegativeInteger(index, "index");
  assertNonNegativeInteger(size, "size");
  if ((index as number) >= (size as number)) {
    throw new RangeError(`index must be < size ${size}, got ${index}`);
  }
  assertBytes(leafHash, HASH_SIZE, "leafHash");
  if (!Array.isArray(proof)) throw new TypeError("proof must be an array");
  for (let i = 0; i < proof.length; i++) assertBytes(proof[i], HASH_SIZE, `proof[${i}]`);
  return input as InclusionProofInput;
}

/** One step of an inclusion proof: the sibling combined, its side, and the node they make. */
export type InclusionStep = { sibling: Uint8Array; side: "left" | "right"; node: Uint8Array };

/**
 * The chaining core of RFC 9162 §2.1.3.2 (steps 2-5) that every inclusion check shares: climbs
 * from `leafHash` at `index` in a tree of `size` leaves through `proof`, tells `onStep` each
 * sibling, its side and the node they make, and answers the root. Requires 0 <= index < size and
 * 32-byte hashes, else throws TypeError or RangeError; a path whose length does not fit
 * (index, size) answers "too long" or "too short" instead of a root.
 */
export function chainInclusionProof(
  input: InclusionProofInput,
  onStep: (step: InclusionStep) => void = () => {},
): Uint8Array | "too long" | "too short" {
  const { index, size, leafHash, proof } = assertProofInput(input);
  // Arithmetic instead of bit operators: sizes may exceed 2^31.
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return "too long";
    if (fn % 2 === 1 || fn === sn) {
      r = hashChildren(p, r);
      onStep({ sibling: p, side: "left", node: r });
      // fn === sn with fn even: the right edge of the tree, where the RFC 9162 tree has no node
      // at these levels; climb until this node is a right child or the leftmost.
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = hashChildren(r, p);
      onStep({ sibling: p, side: "right", node: r });
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return "too short";
  return r === leafHash ? leafHash.slice() : r;
}

/**
 * Root implied by an audit path (RFC 9162 §2.1.3.2). Requires 0 <= index < size, 32-byte hashes
 * and a path of exactly the length the tree shape fixes for (index, size); throws TypeError or
 * RangeError otherwise.
 */
export function rootFromInclusionProof(input: InclusionProofInput): Uint8Array {
  const root = chainInclusionProof(input);
  if (typeof root === "string") {
    throw new RangeError(
      `proof length ${input.proof.length} does not fit index ${input.index} in size ${input.size}`,
    );
  }
  return root;
}

/**
 * True when `proof` shows `leafHash` at `index` in the tree of `size` leaves with root `root`
 * (RFC 9162 §2.1.3.2). Requires 0 <= index < size and 32-byte hashes, else throws TypeError or
 * RangeError; a well-formed proof that does not verify (also one of the wrong length) is false.
 */
export function verifyInclusion(input: InclusionProofInput & { root: Uint8Array }): boolean {
  assertBytes(input.root, HASH_SIZE, "root");
  const root = chainInclusionProof(input);
  return typeof root !== "string" && equalBytes(root, input.root);
}

/** Inputs of {@link verifyConsistency}: two tree heads and the proof between them. */
export type ConsistencyProofInput = {
  oldSize: number;
  newSize: number;
  oldRoot: Uint8Array;
  newRoot: Uint8Array;
  proof: Uint8Array[];
};

/**
 * True when `proof` shows the tree of `oldSize` leaves with root `oldRoot` to be a prefix of the
 * tree of `newSize` leaves with root `newRoot` (RFC 9162 §2.1.4.2). When oldSize = newSize the
 * proof must be empty and the roots equal; when oldSize = 0 the proof must be empty and `oldRoot`
 * the empty tree's root (and so must `newRoot` be when newSize = 0 too). Requires
 * 0 <= oldSize <= newSize, 32-byte roots and 32-byte proof hashes, else throws TypeError or
 * RangeError; a well-formed proof that does not verify (also one of the wrong length) is false.
 *
 * The new root is climbed with the inclusion core ({@link chainInclusionProof}): after the
 * shifts of steps 3-4, RFC 9162's consistency walk is the inclusion walk of the seed node at
 * index fn in a level of sn + 1 nodes, and the old root is the same walk over left siblings only.
 */
export function verifyConsistency(input: ConsistencyProofInput): boolean {
  if (typeof input !== "object" || input === null) throw new TypeError("input must be an object");
  const { oldSize, newSize, oldRoot, newRoot, proof } = input;
  assertSizes(oldSize, newSize, Number.MAX_SAFE_INTEGER);
  assertBytes(oldRoot, HASH_SIZE, "oldRoot");
  assertBytes(newRoot, HASH_SIZE, "newRoot");
  if (!Array.isArray(proof)) throw new TypeError("proof must be an array");
  for (let i = 0; i < proof.length; i++) assertBytes(proof[i], HASH_SIZE, `proof[${i}]`);

  if (oldSize === 0) {
    const empty = emptyRoot();
    return proof.length === 0 && equalBytes(oldRoot, empty) &&
      (newSize > 0 || equalBytes(newRoot, empty));
  }
  if (oldSize === newSize) return proof.length === 0 && equalBytes(oldRoot, newRoot);
  if (proof.length === 0) return false; // step 1
  // Step 2: when oldSize is a power of two the old root is the seed, else the proof's first hash.
  const seeded = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : proof;
  // Steps 3-4, in arithmetic rather than bit operators: sizes may exceed 2^31.
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = (fn - 1) / 2;
    sn = Math.floor(sn / 2);
  }
  // Steps 5-7: fr climbs over left siblings only, sr over all of them.
  let fr = seeded[0];
  const sr = chainInclusionProof(
    { index: fn, size: sn + 1, leafHash: seeded[0], proof: seeded.slice(1) },
    ({ sibling, side }) => {
      if (side === "left") fr = hashChildren(sibling, fr);
    },
  );
  return typeof sr !== "string" && equalBytes(fr, oldRoot) && equalBytes(sr, newRoot);
}

function isPowerOfTwo(n: number): boolean {
  let p = 1;
  while (p < n) p *= 2;
  return p === n;
}
