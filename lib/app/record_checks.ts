// Browser-safe. What the public bulletin board re-derives in the browser instead of trusting the
// server (protocol §3–§4): every block's hash from its fields and its link to the previous block; a
// vote's inclusion proof as a walk of steps (leaf → each sibling → root → block hash → previous
// block), each compared with an independently obtained value; the tally recounted from the votes;
// and the voting page's decision about what the board says of its own tag.
import { bytesToHex } from "../protocol/bytes.ts";
import { blockHash, isGenesis } from "../protocol/chain.ts";
import { hashChildren, inclusionProof, voteLeaf } from "../protocol/merkle.ts";
import type { BlockRecord, VoteRecord } from "../protocol/schemas.ts";
import type { StatusLine } from "./status.ts";

/** What the browser found about one block: its own hash, and its link to the block before it. */
export type BlockCheck = {
  height: number;
  /** Hash recomputed from the block's fields; null when a field is malformed. */
  computedHash: string | null;
  /** The served `hash` equals the recomputed one. */
  hashOk: boolean;
  /**
   * "ok": `prev_hash` equals the previous block's `hash` (for genesis: the zero hash) and the
   * heights are contiguous; "broken": they are not; "unknown": the previous block is not loaded.
   */
  link: "ok" | "broken" | "unknown";
  /** One sentence saying what was compared, for a tooltip or a screen reader. */
  reason: string;
};

/**
 * Checks each of `blocks` (any order, any subset of the chain): hash from fields (protocol §3,
 * size included) and link to the block of height − 1 among `blocks`. Never throws: a malformed
 * block is a failed check.
 */
export function checkBlocks(blocks: readonly BlockRecord[]): BlockCheck[] {
  const byHeight = new Map(blocks.map((b) => [b.height, b]));
  return blocks.map((block) => {
    const computedHash = safeBlockHash(block);
    const hashOk = computedHash !== null && computedHash === block.hash;
    if (block.height === 0) {
      const genesisOk = isGenesis(block);
      return {
        height: 0,
        computedHash,
        hashOk,
        link: genesisOk ? "ok" : "broken",
        reason: genesisOk
          ? "Genesis: zero prev_hash, empty tree, size 0"
          : "Not a genesis block: prev_hash, root or size differs from protocol §3",
      };
    }
    const prev = byHeight.get(block.height - 1);
    if (!prev) {
      return {
        height: block.height,
        computedHash,
        hashOk,
        link: "unknown",
        reason: `Block ${block.height - 1} is not loaded`,
      };
    }
    const linked = block.prev_hash === prev.hash;
    return {
      height: block.height,
      computedHash,
      hashOk,
      link: linked ? "ok" : "broken",
      reason: linked
        ? `prev_hash of block ${block.height} equals the hash of block ${prev.height}`
        : `prev_hash of block ${block.height} (${block.prev_hash}) differs from the hash of ` +
          `block ${prev.height} (${prev.hash})`,
    };
  });
}

function safeBlockHash(block: BlockRecord): string | null {
  try {
    return blockHash(block);
  } catch {
    return null;
  }
}

/** One node of an inclusion walk: the sibling combined at this level, its side, the result. */
export type WalkNode = { sibling: Uint8Array; side: "left" | "right"; node: Uint8Array };

/**
 * The nodes RFC 9162 §2.1.3.2 visits from `leafHash` at `index` in a tree of `size` leaves up to
 * the root, one per element of `proof`: the same arithmetic as `rootFromInclusionProof`, keeping
 * every intermediate node so that each can be shown. Requires 0 <= index < size and a path of
 * the length the tree shape fixes; throws RangeError otherwise.
 */
export function inclusionWalk(
  { index, size, leafHash, proof }: {
    index: number;
    size: number;
    leafHash: Uint8Array;
    proof: Uint8Array[];
  },
): WalkNode[] {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) {
    throw new RangeError(`index must be in [0, ${size}), got ${index}`);
  }
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  const walk: WalkNode[] = [];
  for (const p of proof) {
    if (sn === 0) throw new RangeError(`path of ${proof.length} is too long for size ${size}`);
    if (fn % 2 === 1 || fn === sn) {
      r = hashChildren(p, r);
      walk.push({ sibling: p, side: "left", node: r });
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = hashChildren(r, p);
      walk.push({ sibling: p, side: "right", node: r });
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) throw new RangeError(`path of ${proof.length} is too short for size ${size}`);
  return walk;
}

/** One step of a shown proof: the value the browser computed and what it was compared with. */
export type ProofStep = {
  kind: "leaf" | "sibling" | "root" | "block" | "previous";
  label: string;
  /** The value this step shows (hex), computed here unless the label says otherwise. */
  value: string;
  /** The value `value` must equal (hex), and where it comes from; absent when nothing to compare. */
  expected?: { value: string; from: string };
  /** Further value shown with the step, e.g. the node a sibling produces. */
  result?: { value: string; label: string };
  ok: boolean;
  note: string;
};

/** What {@link proofSteps} derives a vote's proof from. */
export type ProofInput = {
  /** The block the vote is in. */
  block: BlockRecord;
  /** The block of height `block.height - 1`, null when it could not be read. */
  previous: BlockRecord | null;
  /** Every vote of the block in leaf order, as the block's votes listing served them. */
  votes: readonly VoteRecord[];
  /** The vote's leaf index in `votes`. */
  index: number;
  /** The server's own answer for this vote (GET /api/block/id/{b}/vote/{v}), when it was read. */
  served?: { vote: VoteRecord; index: number; path: string[] } | null;
};

/**
 * The vote's inclusion proof, step by step (protocol §3): its leaf hash; each sibling on its path,
 * computed locally from all the block's leaves and compared with the server's path; the root they
 * lead to against the block's `merkle_root`; the block hash recomputed from its fields against
 * `hash`; and `prev_hash` against the previous block's hash. Never throws: malformed input turns
 * the affected step red with the reason.
 */
export function proofSteps(input: ProofInput): ProofStep[] {
  const { block, previous, votes, index, served } = input;
  const steps: ProofStep[] = [];
  const leaves: Uint8Array[] = [];
  for (const vote of votes) {
    try {
      leaves.push(voteLeaf(vote));
    } catch {
      // A malformed vote still occupies its leaf; its hash cannot be right, so use a value no
      // honest tree holds and let the root comparison fail.
      leaves.push(new Uint8Array(32));
    }
  }

  // 1. The leaf.
  const leaf = leaves[index];
  const leafHex = leaf ? bytesToHex(leaf) : "";
  let servedLeaf: string | null = null;
  if (served) {
    try {
      servedLeaf = bytesToHex(voteLeaf(served.vote));
    } catch {
      servedLeaf = "(malformed vote)";
    }
  }
  const sameIndex = !served || served.index === index;
  steps.push({
    kind: "leaf",
    label: "Leaf hash",
    value: leafHex,
    expected: servedLeaf === null
      ? undefined
      : { value: servedLeaf, from: "leaf of the vote in the server's proof answer" },
    ok: leaf !== undefined && (servedLeaf === null || servedLeaf === leafHex) && sameIndex,
    note: !sameIndex
      ? `The proof answer puts this vote at leaf ${served!.index}, the listing at ${index}`
      : "SHA-256(0x00 ‖ vote bytes) of the vote as listed in the block",
  });
  if (leaf === undefined) return steps;

  // 2. The siblings, computed from every leaf of the block, checked against the server's path.
  const localPath = inclusionProof(leaves, index);
  const servedPath = served?.path ?? null;
  let walk: WalkNode[];
  try {
    walk = inclusionWalk({ index, size: leaves.length, leafHash: leaf, proof: localPath });
  } catch (error) {
    // Cannot happen for a path inclusionProof produced; kept so the page never breaks.
    walk = [];
    steps.push({
      kind: "sibling",
      label: "Path",
      value: "",
      ok: false,
      note: (error as Error).message,
    });
  }
  walk.forEach(({ sibling, side, node }, level) => {
    const value = bytesToHex(sibling);
    const theirs = servedPath?.[level];
    steps.push({
      kind: "sibling",
      label: `Sibling ${level + 1} (${side})`,
      value,
      expected: servedPath === null ? undefined : {
        value: theirs ?? "(missing)",
        from: `element ${level} of the server's path`,
      },
      result: {
        value: bytesToHex(node),
        label: side === "left"
          ? "SHA-256(0x01 ‖ sibling ‖ node)"
          : "SHA-256(0x01 ‖ node ‖ sibling)",
      },
      ok: servedPath === null || theirs === value,
      note: `Subtree hash computed from the block's ${leaves.length} votes`,
    });
  });
  if (servedPath !== null && servedPath.length > walk.length) {
    steps.push({
      kind: "sibling",
      label: "Extra path elements",
      value: servedPath.slice(walk.length).join(" "),
      ok: false,
      note: `The server's path has ${servedPath.length} elements, the tree needs ${walk.length}`,
    });
  }

  // 3. The root.
  const root = walk.length > 0 ? walk[walk.length - 1].node : leaf;
  const rootHex = bytesToHex(root);
  const sizeOk = leaves.length === block.size;
  steps.push({
    kind: "root",
    label: "Merkle root",
    value: rootHex,
    expected: { value: block.merkle_root, from: `merkle_root of block ${block.height}` },
    ok: rootHex === block.merkle_root && sizeOk,
    note: sizeOk
      ? `Root of the tree of ${leaves.length} leaves`
      : `The block's size is ${block.size}, but ${leaves.length} votes are listed`,
  });

  // 4. The block hash over its fields.
  const computed = safeBlockHash(block);
  steps.push({
    kind: "block",
    label: "Block hash",
    value: computed ?? "(malformed block)",
    expected: { value: block.hash, from: `hash of block ${block.height}` },
    ok: computed !== null && computed === block.hash,
    note: "SHA-256(merkle_root ‖ u64be(timestamp) ‖ u64be(height) ‖ prev_hash ‖ u64be(size))",
  });

  // 5. The link to the previous block.
  const linked = previous !== null && previous.height === block.height - 1 &&
    previous.hash === block.prev_hash && safeBlockHash(previous) === previous.hash;
  steps.push({
    kind: "previous",
    label: "Previous block",
    value: block.prev_hash,
    expected: previous === null
      ? undefined
      : { value: previous.hash, from: `hash of block ${previous.height}` },
    ok: linked,
    note: previous === null
      ? `Block ${block.height - 1} could not be read`
      : linked
      ? `prev_hash names block ${previous.height}, whose hash matches its own fields`
      : safeBlockHash(previous) !== previous.hash
      ? `Block ${previous.height}'s hash does not match its own fields`
      : `prev_hash differs from the hash of block ${previous.height}`,
  });
  return steps;
}

/** A tally row as shown: served count, recounted count (null when not recounted), agreement. */
export type TallyRow = { payload: string; served: number; counted: number | null; ok: boolean };

/**
 * Rows of the tally chart: every payload the server or the recount names, in the served order
 * (count descending) then recount-only payloads. With no recount (`counted` null) every served
 * row is taken as shown and `ok`.
 */
export function tallyRows(
  served: readonly { payload: string; count: number }[],
  counted: readonly { payload: string; count: number }[] | null,
): TallyRow[] {
  const mine = counted === null ? null : new Map(counted.map((t) => [t.payload, t.count]));
  const rows: TallyRow[] = served.map(({ payload, count }) => {
    const c = mine === null ? null : mine.get(payload) ?? 0;
    return { payload, served: count, counted: c, ok: c === null || c === count };
  });
  if (counted !== null) {
    const listed = new Set(served.map((t) => t.payload));
    for (const { payload, count } of counted) {
      if (!listed.has(payload)) rows.push({ payload, served: 0, counted: count, ok: false });
    }
  }
  return rows;
}

/** The tag (`I`, hex) of a stored wire signature, or null when it is absent or malformed. */
export function tagOfSignature(signature: string | null): string | null {
  if (signature === null) return null;
  try {
    const I = (JSON.parse(signature) as { I?: unknown })?.I;
    return typeof I === "string" && /^[0-9a-f]{64}$/.test(I) ? I : null;
  } catch {
    return null;
  }
}

/** Statuses of the voting page's tag check. */
export type TagCheck = "once" | "reused" | "missing";

/**
 * What the board's answer for a voter's own tag means (GET /api/tag/{tag}): the vote under the
 * tag is the voter's stored vote → green "once"; another vote → red "reused" (the key signed a
 * vote this voter did not cast); no vote at all → red "missing". `answer` is the answer's
 * `voteId`, or null for 404 `unknown_tag`.
 */
export function tagCheckLine(
  storedVoteId: string,
  answer: { voteId: string } | null,
): StatusLine<TagCheck> {
  if (answer === null) {
    return {
      status: "missing",
      text: "Tag not found on the board: the server lists no vote under this key",
      colour: "red",
    };
  }
  if (answer.voteId !== storedVoteId) {
    return {
      status: "reused",
      text: `Your key was used for another vote: ${answer.voteId}`,
      colour: "red",
    };
  }
  return { status: "once", text: "Tag checked: this key voted once", colour: "green" };
}
