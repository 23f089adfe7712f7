/**
 * Browser-safe. What the bulletin board re-derives instead of trusting the server (protocol §3–§4):
 * block hashes and links, a vote's inclusion proof as steps, and the tally's rows.
 * @module
 */
import { bytesToHex } from "../../protocol/bytes.ts";
import { blockHash, isGenesis } from "../../protocol/chain.ts";
import type { BlockRecord, VoteRecord } from "../../protocol/schemas.ts";
import { inclusionProof, voteLeaf } from "../../protocol/merkle.ts";
import {
  chainInclusionProof,
  type InclusionProofInput,
  type InclusionStep,
} from "../../protocol/merkle_verify.ts";

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

/** True when `check` fails: its hash does not match its fields, or its link is broken. */
export function failsCheck(check: BlockCheck): boolean {
  return !check.hashOk || check.link === "broken";
}

/**
 * Checks each of `blocks` (a run of the chain as served, in any order): hash from fields (protocol
 * §3, size included) and link to the block of height − 1 among `blocks`. Only the lowest block may
 * lack its predecessor ("unknown"): a height missing above it breaks the next block's link, and a
 * height served twice breaks its second copy. Never throws: a malformed block is a failed check.
 */
export function checkBlocks(blocks: readonly BlockRecord[]): BlockCheck[] {
  const byHeight = new Map<number, BlockRecord>();
  for (const block of blocks) if (!byHeight.has(block.height)) byHeight.set(block.height, block);
  let lowest = Infinity;
  for (const height of byHeight.keys()) lowest = Math.min(lowest, height);
  const seen = new Set<number>();
  return blocks.map((block) => {
    const computedHash = safeBlockHash(block);
    const hashOk = computedHash !== null && computedHash === block.hash;
    const twice = seen.has(block.height);
    seen.add(block.height);
    const link: Pick<BlockCheck, "link" | "reason"> = twice
      ? { link: "broken", reason: `Block ${block.height} is served twice` }
      : linkOf(block, byHeight, lowest);
    return { height: block.height, computedHash, hashOk, ...link };
  });
}

/**
 * The link check of `block`: genesis by its fixed fields, any other against its predecessor, which
 * only the `lowest` block of those served may lack.
 */
function linkOf(
  block: BlockRecord,
  byHeight: ReadonlyMap<number, BlockRecord>,
  lowest: number,
): Pick<BlockCheck, "link" | "reason"> {
  if (block.height === 0) {
    const genesisOk = isGenesis(block);
    return genesisOk ? { link: "ok", reason: "Genesis: zero prev_hash, empty tree, size 0" } : {
      link: "broken",
      reason: "Not a genesis block: prev_hash, root or size differs from protocol §3",
    };
  }
  const prev = byHeight.get(block.height - 1);
  if (!prev) {
    return block.height > lowest
      ? { link: "broken", reason: `Block ${block.height - 1} is missing from the blocks served` }
      : { link: "unknown", reason: `Block ${block.height - 1} is not loaded` };
  }
  return block.prev_hash === prev.hash
    ? {
      link: "ok",
      reason: `prev_hash of block ${block.height} equals the hash of block ${prev.height}`,
    }
    : {
      link: "broken",
      reason: `prev_hash of block ${block.height} (${block.prev_hash}) differs from the hash of ` +
        `block ${prev.height} (${prev.hash})`,
    };
}

function safeBlockHash(block: BlockRecord): string | null {
  try {
    return blockHash(block);
  } catch {
    return null;
  }
}

/**
 * The steps RFC 9162 §2.1.3.2 takes from `leafHash` at `index` in a tree of `size` leaves up to
 * the root, one per element of `proof`, each with the node it makes, so that each can be shown.
 * Requires 0 <= index < size and a path of the length the tree shape fixes; throws RangeError
 * otherwise.
 */
export function inclusionWalk(input: InclusionProofInput): InclusionStep[] {
  const walk: InclusionStep[] = [];
  const root = chainInclusionProof(input, (step) => walk.push(step));
  if (typeof root === "string") {
    throw new RangeError(`path of ${input.proof.length} is ${root} for size ${input.size}`);
  }
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
  let walk: InclusionStep[];
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
