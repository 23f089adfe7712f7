// Browser-safe. RFC 9162 §2.1 Merkle Tree Hash, inclusion proofs (§2.1.3) and consistency proofs
// (§2.1.4) as a log builds them (their verification, §2.1.3.2 and §2.1.4.2, is in
// merkle_verify.ts), an append-only tree that answers them for any past size, plus the vote bytes
// and vote leaf of protocol §3. Every tree input is checked by type (TypeError) and length
// (RangeError) before any hashing.
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { assertBytes, assertNonNegativeInteger, HEX32_PATTERN, utf8 } from "./bytes.ts";
import { sha256 } from "./hash.ts";
import type { VoteRecord } from "./schemas.ts";

/** Size in bytes of every hash in the tree (SHA-256). */
export const HASH_SIZE = 32;

const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;

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
 * {@link allInclusionProofs} for every leaf of a tree, {@link createAppendOnlyTree} for proofs
 * in a growing tree.
 */
export function inclusionProof(leafHashes: Uint8Array[], index: number): Uint8Array[] {
  assertLeafHashes(leafHashes);
  assertNonNegativeInteger(index, "index");
  const size = leafHashes.length;
  if (index >= size) throw new RangeError(`index must be < size ${size}, got ${index}`);
  return inclusionPath(index, size, (lo, hi) => subtreeHash(leafHashes, lo, hi));
}

/** MTH(D[lo:hi]) of one tree, for 0 <= lo < hi <= its size: how the proof builders read hashes. */
type SubtreeHashes = (lo: number, hi: number) => Uint8Array;

/** PATH(index, D[size]) of RFC 9162 §2.1.3.1 over `hashOf`; requires 0 <= index < size. */
function inclusionPath(index: number, size: number, hashOf: SubtreeHashes): Uint8Array[] {
  const path: Uint8Array[] = [];
  // Iterative form of PATH(m, D[lo:hi]): the recursion descends into one subtree and appends the
  // other subtree's hash after the deeper part, so siblings are collected top-down and reversed.
  let lo = 0;
  let hi = size;
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (index < lo + k) {
      path.push(hashOf(lo + k, hi));
      hi = lo + k;
    } else {
      path.push(hashOf(lo, lo + k));
      lo += k;
    }
  }
  return path.reverse();
}

/**
 * PROOF(m, D[n]) of RFC 9162 §2.1.4.1 over `hashOf`, and the empty list when m = 0 or m = n;
 * requires 0 <= m <= n.
 */
function consistencyPath(m: number, n: number, hashOf: SubtreeHashes): Uint8Array[] {
  if (m === 0 || m === n) return [];
  // Iterative form of SUBPROOF(m, D[lo:hi], b): like PATH, each level appends one subtree hash
  // after the deeper part, so hashes are collected top-down and reversed. `m` stays absolute.
  const path: Uint8Array[] = [];
  let lo = 0;
  let hi = n;
  let complete = true; // b: the old tree is the whole subtree D[lo:hi] seen so far
  while (m !== hi) {
    const k = splitPoint(hi - lo);
    if (m <= lo + k) {
      path.push(hashOf(lo + k, hi));
      hi = lo + k;
    } else {
      path.push(hashOf(lo, lo + k));
      lo += k;
      complete = false;
    }
  }
  // m = hi: SUBPROOF(m, D[m], true) is empty, SUBPROOF(m, D[lo:m], false) is MTH(D[lo:m]).
  if (!complete) path.push(hashOf(lo, hi));
  return path.reverse();
}

/**
 * Checks two tree sizes of a consistency proof: non-negative integers, `oldSize <= newSize <=
 * available`; TypeError or RangeError otherwise.
 */
export function assertSizes(oldSize: unknown, newSize: unknown, available: number): void {
  assertNonNegativeInteger(oldSize, "oldSize");
  assertNonNegativeInteger(newSize, "newSize");
  if ((oldSize as number) > (newSize as number)) {
    throw new RangeError(`oldSize must be <= newSize ${newSize}, got ${oldSize}`);
  }
  if ((newSize as number) > available) {
    throw new RangeError(`newSize must be <= ${available} leaves, got ${newSize}`);
  }
}

/**
 * Consistency proof between the tree of the first `oldSize` leaves and that of the first
 * `newSize` (RFC 9162 §2.1.4.1 PROOF(m, D[n])): empty when oldSize = 0 (the empty tree is
 * consistent with every tree) or oldSize = newSize. Requires 0 <= oldSize <= newSize <=
 * leafHashes.length. Costs O(newSize) hashes; elements may be the caller's leaf hash objects.
 */
export function consistencyProof(
  leafHashes: Uint8Array[],
  oldSize: number,
  newSize: number,
): Uint8Array[] {
  assertLeafHashes(leafHashes);
  assertSizes(oldSize, newSize, leafHashes.length);
  return consistencyPath(oldSize, newSize, (lo, hi) => subtreeHash(leafHashes, lo, hi));
}

/**
 * Merkle Tree Hash of the first `size` leaves, MTH(D[0:size]); requires 0 <= size <=
 * leafHashes.length and 32-byte leaf hashes.
 */
export function rootOfSize(leafHashes: Uint8Array[], size: number): Uint8Array {
  assertLeafHashes(leafHashes);
  assertNonNegativeInteger(size, "size");
  if (size > leafHashes.length) {
    throw new RangeError(`size must be <= ${leafHashes.length} leaves, got ${size}`);
  }
  if (size === 0) return emptyRoot();
  return size === 1 ? leafHashes[0].slice() : subtreeHash(leafHashes, 0, size);
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

/**
 * A tree that grows by appending leaf hashes and answers roots and proofs for any size it has
 * had. It stores every complete subtree's hash (as Go's `sumdb/tlog` stores hashes), so appending
 * costs one hash amortized and a root or proof O(log² n) hashes. Returned hashes may be shared
 * with the tree: treat them as read-only.
 */
export type AppendOnlyTree = {
  /** The number of leaves. */
  readonly size: number;
  /** Appends a 32-byte leaf hash. */
  append(leafHash: Uint8Array): void;
  /** MTH(D[0:size]); requires 0 <= size <= this.size. */
  root(size: number): Uint8Array;
  /** PATH(index, D[0:size]); requires 0 <= index < size <= this.size. */
  inclusionProof(index: number, size: number): Uint8Array[];
  /** PROOF(oldSize, D[0:newSize]), empty for oldSize 0; requires 0 <= oldSize <= newSize <= this.size. */
  consistencyProof(oldSize: number, newSize: number): Uint8Array[];
};

/** An empty {@link AppendOnlyTree}. */
export function createAppendOnlyTree(): AppendOnlyTree {
  // levels[k][j] = MTH of the 2^k leaves from j·2^k: only complete subtrees are stored.
  const levels: Uint8Array[][] = [[]];
  const hashOf = (lo: number, hi: number): Uint8Array => {
    const width = hi - lo;
    let level = 0;
    while (2 ** level < width) level++;
    if (2 ** level === width && lo % width === 0) return levels[level][lo / width];
    // RFC 9162's left subtree is always complete and aligned: one stored read, then the right.
    const k = splitPoint(width);
    return nodeHash(hashOf(lo, lo + k), hashOf(lo + k, hi));
  };
  const assertSize = (size: unknown, name: string) => {
    assertNonNegativeInteger(size, name);
    if ((size as number) > levels[0].length) {
      throw new RangeError(`${name} must be <= tree size ${levels[0].length}, got ${size}`);
    }
    return size as number;
  };
  return {
    get size() {
      return levels[0].length;
    },
    append(leafHash) {
      levels[0].push(assertBytes(leafHash, HASH_SIZE, "leafHash").slice());
      for (let k = 0; levels[k].length % 2 === 0; k++) {
        const level = levels[k];
        (levels[k + 1] ??= []).push(nodeHash(level[level.length - 2], level[level.length - 1]));
      }
    },
    root(size) {
      assertSize(size, "size");
      return size === 0 ? emptyRoot() : hashOf(0, size).slice();
    },
    inclusionProof(index, size) {
      assertSize(size, "size");
      assertNonNegativeInteger(index, "index");
      if (index >= size) throw new RangeError(`index must be < size ${size}, got ${index}`);
      return inclusionPath(index, size, hashOf);
    },
    consistencyProof(oldSize, newSize) {
      assertSizes(oldSize, newSize, levels[0].length);
      return consistencyPath(oldSize, newSize, hashOf);
    },
  };
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
    if (!HEX32_PATTERN.test(key)) {
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
