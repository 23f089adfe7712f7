// The block sealer (protocol §5 "Close" and "Finalize"): closes the open block when it holds votes
// and writes its proofs and record. Safe to run from several processes at once and to re-run
// after a crash at any point: every step either checks what it replaces or is idempotent.
import { blockHash } from "../lib/protocol/chain.ts";
import { bytesToHex } from "../lib/protocol/bytes.ts";
import { allInclusionProofs, rootFromInclusionProof, voteLeaf } from "../lib/protocol/merkle.ts";
import type { Block, Vote } from "../lib/protocol/schemas.ts";
import {
  backoff,
  type HeadRecord,
  kvKeys,
  type LeafRecord,
  MAX_ATTEMPTS,
  type OpenRecord,
  readRetrying,
  type SealRecord,
  type Store,
  tryCommit,
  type VoteIndex,
} from "./store.ts";

/**
 * Where an injected fault stops a run: after the close commit, or after the k-th commit of
 * proofs (`voteidx:0` stops after listing the votes, before any proof is written).
 */
export type FaultPoint = "close" | `voteidx:${number}`;

/** Options of {@link sealNextBlock}. */
export type SealOptions = {
  /** Throw a {@link SealFault} at this point, to test recovery from a crash. */
  failAfter?: FaultPoint;
  /** Most mutations per proof commit (KV allows 1000). */
  maxMutations?: number;
  /** Most bytes of keys and values per proof commit (KV allows 800 KiB). */
  maxBytes?: number;
};

/** The error an injected fault throws. */
export class SealFault extends Error {
  constructor(point: FaultPoint) {
    super(`Injected fault after ${point}`);
    this.name = "SealFault";
  }
}

const DEFAULT_MAX_MUTATIONS = 900;
const DEFAULT_MAX_BYTES = 700_000;

/**
 * One sealer tick: finishes a block that was closed but not finalized (a crash, or another
 * process mid-way), then closes the open block if it holds votes and finalizes it. Returns the
 * blocks this tick finalized (or found finalized by a concurrent run), in height order.
 */
export async function sealNextBlock(
  store: Store,
  now: number,
  options: SealOptions = {},
): Promise<Block[]> {
  const kv = store.kv;
  const sealed: Block[] = [];
  const pending = await pendingHeight(kv);
  if (pending !== null) sealed.push(await finalizeBlock(kv, pending, options));
  const closed = await closeOpenBlock(kv, now);
  if (closed !== null) {
    if (options.failAfter === "close") throw new SealFault("close");
    sealed.push(await finalizeBlock(kv, closed, options));
  }
  return sealed;
}

async function readPointers(kv: Deno.Kv) {
  const [open, head] = await readRetrying(() =>
    kv.getMany<[OpenRecord, HeadRecord]>([kvKeys.open(), kvKeys.head()])
  );
  if (!open.value || !head.value) throw new Error("The ledger has no genesis block");
  return { open, head };
}

/** The height of a closed-but-unfinalized block, if there is one. */
async function pendingHeight(kv: Deno.Kv): Promise<number | null> {
  const { open, head } = await readPointers(kv);
  return open.value.height === head.value.height + 2 ? head.value.height + 1 : null;
}

/**
 * Close (one commit): moves the guard from N to N+1 and fixes `["seal", N]`, only when block N
 * holds a vote. After it no vote can commit into N. Returns the height to finalize: N, or a
 * block another process closed meanwhile; null when there is nothing to seal.
 */
async function closeOpenBlock(kv: Deno.Kv, now: number): Promise<number | null> {
  for (let attempt = 0;; attempt++) {
    const { open, head } = await readPointers(kv);
    const height = open.value.height;
    if (height === head.value.height + 2) return height - 1;
    if (height !== head.value.height + 1) {
      throw new Error(`Open block ${height} does not follow head ${head.value.height}`);
    }
    if (!(await holdsVotes(kv, height))) return null;
    const res = await tryCommit(
      kv.atomic()
        .check(open)
        .check(head)
        .check({ key: kvKeys.seal(height), versionstamp: null })
        .set(kvKeys.open(), { height: height + 1 } satisfies OpenRecord)
        .set(kvKeys.seal(height), { closedAt: now } satisfies SealRecord),
    );
    if (res?.ok) return height;
    const seal = await readRetrying(() => kv.get<SealRecord>(kvKeys.seal(height)));
    if (seal.value) return height;
    if (attempt >= MAX_ATTEMPTS) throw new Error(`Closing block ${height} kept conflicting`);
    await backoff(attempt);
  }
}

async function holdsVotes(kv: Deno.Kv, height: number): Promise<boolean> {
  return await readRetrying(async () => {
    for await (const _ of kv.list({ prefix: kvKeys.votesOf(height) }, { limit: 1 })) return true;
    return false;
  });
}

/**
 * Finalize (idempotent): lists the votes of closed block `height` in key (vote id) order, builds
 * the RFC 9162 tree, writes every vote's proof and leaf in bounded commits, then the block and
 * the head in one commit checked against both. Re-running it after a crash writes the same
 * bytes, because the vote set is frozen by the close and the timestamp comes from the seal.
 */
export async function finalizeBlock(
  kv: Deno.Kv,
  height: number,
  options: SealOptions = {},
): Promise<Block> {
  const [seal, head, existing] = await readRetrying(() =>
    kv.getMany<[SealRecord, HeadRecord, Block]>([
      kvKeys.seal(height),
      kvKeys.head(),
      kvKeys.block(height),
    ])
  );
  if (existing.value) return existing.value;
  if (!seal.value) throw new Error(`Block ${height} is not closed`);
  if (!head.value || head.value.height !== height - 1) {
    throw new Error(`Block ${height} cannot follow head ${head.value?.height}`);
  }

  const voteIds: string[] = [];
  const leafHashes: Uint8Array[] = [];
  await readRetrying(async () => {
    voteIds.length = leafHashes.length = 0;
    for await (const entry of kv.list<Vote>({ prefix: kvKeys.votesOf(height) })) {
      voteIds.push(entry.key[2] as string);
      leafHashes.push(voteLeaf(entry.value));
    }
  });
  if (voteIds.length === 0) throw new Error(`Closed block ${height} holds no votes`);
  const proofs = allInclusionProofs(leafHashes);
  // Leaf 0's path already climbs to the root: a few hashes instead of hashing the tree again.
  const root = bytesToHex(
    rootFromInclusionProof({
      index: 0,
      size: leafHashes.length,
      leafHash: leafHashes[0],
      proof: proofs[0],
    }),
  );

  let batches = 0;
  if (options.failAfter === "voteidx:0") throw new SealFault("voteidx:0");
  const maxMutations = options.maxMutations ?? DEFAULT_MAX_MUTATIONS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  let batch: [Deno.KvKey, unknown][] = [];
  let batchBytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await commitIdempotent(kv, batch);
    batch = [];
    batchBytes = 0;
    batches++;
    if (options.failAfter === `voteidx:${batches}`) throw new SealFault(`voteidx:${batches}`);
  };
  for (let index = 0; index < voteIds.length; index++) {
    const voteId = voteIds[index];
    const proof: VoteIndex = { index, path: proofs[index].map(bytesToHex) };
    const leaf: LeafRecord = { voteId };
    // Generous size estimate: key bytes plus JSON value bytes plus per-entry overhead.
    const bytes = 2 * (voteId.length + 48) + JSON.stringify(proof).length +
      JSON.stringify(leaf).length;
    if (batch.length + 2 > maxMutations || batchBytes + bytes > maxBytes) await flush();
    batch.push([kvKeys.voteIndex(voteId), proof], [kvKeys.leaf(height, index), leaf]);
    batchBytes += bytes;
  }
  await flush();

  const header = {
    height,
    timestamp: seal.value.closedAt,
    merkle_root: root,
    prev_hash: head.value.hash,
    size: voteIds.length,
  };
  const block: Block = { ...header, hash: blockHash(header) };
  for (let attempt = 0;; attempt++) {
    const res = await tryCommit(
      kv.atomic()
        .check({ key: kvKeys.block(height), versionstamp: null })
        .check(head)
        .set(kvKeys.block(height), block)
        .set(kvKeys.head(), { height, hash: block.hash } satisfies HeadRecord),
    );
    if (res?.ok) return block;
    const stored = await readRetrying(() => kv.get<Block>(kvKeys.block(height)));
    if (stored.value) {
      if (stored.value.hash !== block.hash) {
        throw new Error(`Block ${height} was sealed with a different hash`);
      }
      return stored.value;
    }
    if (res !== null || attempt >= MAX_ATTEMPTS) {
      // The checks failed yet no block is stored: the head moved without this block.
      throw new Error(`Block ${height} could not be written: the head changed`);
    }
    await backoff(attempt);
  }
}

/** Sets `entries` in one commit, retrying while the database is locked (sets are idempotent). */
async function commitIdempotent(kv: Deno.Kv, entries: [Deno.KvKey, unknown][]): Promise<void> {
  for (let attempt = 0;; attempt++) {
    const op = kv.atomic();
    for (const [key, value] of entries) op.set(key, value);
    const res = await tryCommit(op);
    if (res?.ok) return;
    if (res !== null || attempt >= MAX_ATTEMPTS) throw new Error("A proof commit failed");
    await backoff(attempt);
  }
}
