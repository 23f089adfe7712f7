// Browser-safe. RFC 9162 §2.1 Merkle Tree Hash, inclusion proofs (§2.1.3) and their verification
// (§2.1.3.2), plus the vote bytes and vote leaf of protocol §3. Every tree input is checked by type
// (TypeError) and length (RangeError) before any hashing.
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { assertBytes, assertNonNegativeInteger, equalBytes, utf8 } from "./bytes.ts";
import { sha256 } from "./hash.ts";
import type { VoteRecord } from "./schemas.ts";

/** Size in bytes of every hash in the tree (SHA-256). */
export const HASH_SIZE = 32;

const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;
const PUBLIC_KEY_HEX = /^[0-9a-f]{64}$/;

// Node hashing is the hot loop of sealing (n - 1 nodes per block); one reused input buffer avoids
// allocating and concatenating 65 bytes per node. Safe because nobleSha256 reads the buffer
// synchronously and returns a fresh digest.
const nodeInput = new Uint8Array(1 + 2 * HASH_SIZE);
nodeInput[0] = NODE_PREFIX;

function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  nodeInput.set(left, 1);
  nodeInput.set(right, 1 + HASH_SIZE);
  return nobleSha256(nodeInput);
}

/** Leaf hash `SHA-256(0x00 ‖ data)` (RFC 9162 §2.1.1). */
export function hashLeaf(data: Uint8Array): Uint8Array {
  assertBytes(data, undefined, "data");
  return sha256(Uint8Array.of(LEAF_PREFIX), data);
}

/** Interior node hash `SHA-256(0x01 ‖ left ‖ right)`; requires 32-byte `left` and `right`. */
export function hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
  assertBytes(left, HASH_SIZE, "left");
  assertBytes(right, HASH_SIZE, "right");
  return nodeHash(left, right);
}

/** Root of the empty tree, `SHA-256("")` (RFC 9162 §2.1.1). */
export function emptyRoot(): Uint8Array {
  return sha256(new Uint8Array(0));
}

function assertLeafHashes(leafHashes: unknown): Uint8Array[] {
  if (!Array.isArray(leafHashes)) throw new TypeError("leafHashes must be an array");
  for (let i = 0; i < leafHashes.length; i++) {
    assertBytes(leafHashes[i], HASH_SIZE, `leafHashes[${i}]`);
  }
  return leafHashes;
}

/** Largest power of two strictly smaller than n; requires n >= 2. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH(D[lo:hi]) by the RFC 9162 §2.1.1 recursion; requires 0 <= lo < hi <= leaves.length. */
function subtreeHash(leaves: Uint8Array[], lo: number, hi: number): Uint8Array {
  if (hi - lo === 1) return leaves[lo];
  const k = splitPoint(hi - lo);
  const left = subtreeHash(leaves, lo, lo + k);
  const right = subtreeHash(leaves, lo + k, hi);
  return nodeHash(left, right);
}

/**
 * Merkle Tree Hash of a list of leaf hashes (RFC 9162 §2.1.1): the empty root for no leaves, the
 * leaf hash itself for one. Requires every leaf hash to be 32 bytes.
 */
export function merkleRoot(leafHashes: Uint8Array[]): Uint8Array {
  assertLeafHashes(leafHashes);
  if (leafHashes.length === 0) return emptyRoot();
  if (leafHashes.length === 1) return leafHashes[0].slice();
  return subtreeHash(leafHashes, 0, leafHashes.length);
}

/**
 * Audit path of leaf `index` (RFC 9162 §2.1.3.1 PATH(m, D[n])), ordered from the leaf's sibling
 * up to the child of the root. Requires 0 <= index < leafHashes.length. Elements may be the
 * caller's own leaf hash objects: treat them as read-only. Costs O(n) hashes; use
 * {@link allInclusionProofs} for every leaf of a tree.
 */
export function inclusionProof(leafHashes: Uint8Array[], index: number): Uint8Array[] {
  assertLeafHashes(leafHashes);
  assertNonNegativeInteger(index, "index");
  const size = leafHashes.length;
  if (index >= size) throw new RangeError(`index must be < size ${size}, got ${index}`);
  const path: Uint8Array[] = [];
  // Iterative form of PATH(m, D[lo:hi]): the recursion descends into one subtree and appends the
  // other subtree's hash after the deeper part, so siblings are collected top-down and reversed.
  let lo = 0;
  let hi = size;
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (index < lo + k) {
      path.push(subtreeHash(leafHashes, lo + k, hi));
      hi = lo + k;
    } else {
      path.push(subtreeHash(leafHashes, lo, lo + k));
      lo += k;
    }
  }
  return path.reverse();
}

/**
 * Audit path of every leaf, `result[i]` equal to `inclusionProof(leafHashes, i)`, in n - 1 node
 * hashes and O(n log n) total work. Requires every leaf hash to be 32 bytes. Paths share node
 * hash objects with each other: treat them as read-only.
 *
 * The tree is built level by level: pairing nodes left to right and carrying an unpaired last
 * node up unchanged gives exactly the RFC 9162 tree (split at the largest power of two < n),
 * and a node's sibling at each level is the next element of its leaf's path.
 */
export function allInclusionProofs(leafHashes: Uint8Array[]): Uint8Array[][] {
  assertLeafHashes(leafHashes);
  const size = leafHashes.length;
  const paths: Uint8Array[][] = new Array(size);
  for (let i = 0; i < size; i++) paths[i] = [];
  let level: Uint8Array[] = leafHashes;
  // Leaves [first, first + span) lie under node j of the current level, with span = 2^depth.
  let span = 1;
  while (level.length > 1) {
    const width = level.length;
    const next: Uint8Array[] = new Array((width + 1) >> 1);
    for (let j = 0; j + 1 < width; j += 2) {
      const left = level[j];
      const right = level[j + 1];
      next[j >> 1] = nodeHash(left, right);
      const leftEnd = (j + 1) * span;
      const rightEnd = Math.min((j + 2) * span, size);
      for (let leaf = j * span; leaf < leftEnd; leaf++) paths[leaf].push(right);
      for (let leaf = leftEnd; leaf < rightEnd; leaf++) paths[leaf].push(left);
    }
    if (width % 2 === 1) next[width >> 1] = level[width - 1];
    level = next;
    span *= 2;
  }
  return paths;
}

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

/** RFC 9162 §2.1.3.2 steps 2-5 on checked input; null when the path length does not fit. */
function rootFromCheckedProof({ index, size, leafHash, proof }: InclusionProofInput) {
  // Arithmetic instead of bit operators: sizes may exceed 2^31.
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return null; // path too long
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      // fn === sn with fn even: the right edge of the tree, where the RFC 9162 tree has no node
      // at these levels; climb until this node is a right child or the leftmost.
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return null; // path too short
  return r === leafHash ? leafHash.slice() : r;
}

/**
 * Root implied by an audit path (RFC 9162 §2.1.3.2). Requires 0 <= index < size, 32-byte hashes
 * and a path of exactly the length the tree shape fixes for (index, size); throws TypeError or
 * RangeError otherwise.
 */
export function rootFromInclusionProof(input: InclusionProofInput): Uint8Array {
  const root = rootFromCheckedProof(assertProofInput(input));
  if (root === null) {
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
  assertProofInput(input);
  assertBytes(input.root, HASH_SIZE, "root");
  const root = rootFromCheckedProof(input);
  return root !== null && equalBytes(root, input.root);
}

/**
 * Vote bytes `utf8(JSON.stringify({payload, signature, publicKeys: sorted}))` (protocol §3), with
 * `sorted` the ring keys in ascending order. Requires string fields and 64-character lowercase hex
 * keys, so that string order equals byte order.
 */
export function voteBytes(vote: VoteRecord): Uint8Array {
  if (typeof vote !== "object" || vote === null) throw new TypeError("vote must be an object");
  const { payload, signature, publicKeys } = vote;
  if (typeof payload !== "string") throw new TypeError("vote.payload must be a string");
  if (typeof signature !== "string") throw new TypeError("vote.signature must be a string");
  if (!Array.isArray(publicKeys)) throw new TypeError("vote.publicKeys must be an array");
  for (const [i, key] of publicKeys.entries()) {
    if (typeof key !== "string") throw new TypeError(`vote.publicKeys[${i}] must be a string`);
    if (!PUBLIC_KEY_HEX.test(key)) {
      throw new RangeError(
        `vote.publicKeys[${i}] must be 64 lowercase hex characters, got "${key}"`,
      );
    }
  }
  const sorted = [...publicKeys].sort();
  return utf8(JSON.stringify({ payload, signature, publicKeys: sorted }));
}

/** Leaf hash of a vote, `hashLeaf(voteBytes(vote))` (protocol §3). */
export function voteLeaf(vote: VoteRecord): Uint8Array {
  return hashLeaf(voteBytes(vote));
}
