// The block sealer (protocol §5 "Close" and "Finalize"): closes the open block when it holds votes
// and writes its proofs and record. Safe to run from several processes at once and to re-run
// after a crash at any point: every step either checks what it replaces or is idempotent. When the
// database stops answering, a tick's calls wait for it (the store puts no deadline on them; only
// API requests have one) and the tick goes on where it stopped once it answers (protocol §5.5).
import { blockHash } from "../lib/protocol/chain.ts";
import { bytesToHex, concatBytes } from "../lib/protocol/bytes.ts";
import { allInclusionProofs, voteLeaf } from "../lib/protocol/merkle.ts";
import { rootFromInclusionProof } from "../lib/protocol/merkle_verify.ts";
import type { BlockRecord } from "../lib/protocol/schemas.ts";
import { nextTurn } from "./event_loop.ts";
import type { ClosedBlock, ProofToStore, Store } from "./store/mod.ts";

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

/**
 * One sealer tick: finishes a block that was closed but not finalized (a crash, or another
 * process mid-way), then closes the open block if it holds votes and finalizes it. Returns the
 * blocks this tick finalized (or found finalized by a concurrent run), in height order.
 */
export async function sealNextBlock(
  store: Store,
  now: number,
  options: SealOptions = {},
): Promise<BlockRecord[]> {
  const sealed: BlockRecord[] = [];
  // One read of the guard, the head and the work record tells a pending block, or closes the open
  // one; after a pending block is finished, the open block is looked at again.
  for (;;) {
    const step = await store.closeNext(now);
    if (step === null) return sealed;
    if (!step.pending && options.failAfter === "close") throw new SealFault("close");
    sealed.push(await finalizeBlock(store, step.height, options, step.closed ?? undefined));
    if (!step.pending) return sealed;
  }
}

/**
 * Finalize (idempotent): lists the votes of closed block `height` in key (vote id) order, builds
 * the RFC 9162 tree, writes every vote's proof (its path as bytes) and the leaf index every
 * `LEAF_STRIDE` leaves in bounded commits, the last of them with the block and the head, checked
 * against both (the head as read at the start). Re-running it after a crash writes the same
 * bytes, because the vote set is frozen by the close and the timestamp comes from the seal. Given
 * `known`, the close record this tick's own close commit wrote (with the head it checked), it
 * does not read them again.
 */
export async function finalizeBlock(
  store: Store,
  height: number,
  options: SealOptions = {},
  known?: ClosedBlock,
): Promise<BlockRecord> {
  const closed = known ?? await store.closedBlock(height);
  if ("sealed" in closed) return closed.sealed;

  const { voteIds, leaves } = await store.mapBlockVotes(height, voteLeaf);
  if (voteIds.length === 0) throw new Error(`Closed block ${height} holds no votes`);
  // Hashing the tree is the one long computation here (about 60 ms for 10,000 votes): requests
  // waiting since the listing get their turn before it, and again before the writes.
  await nextTurn();
  const proofs = allInclusionProofs(leaves);
  await nextTurn();
  // Leaf 0's path already climbs to the root: a few hashes instead of hashing the tree again.
  const root = bytesToHex(
    rootFromInclusionProof({
      index: 0,
      size: leaves.length,
      leafHash: leaves[0],
      proof: proofs[0],
    }),
  );

  if (options.failAfter === "voteidx:0") throw new SealFault("voteidx:0");
  function* proofsToStore(): Generator<ProofToStore> {
    for (let index = 0; index < voteIds.length; index++) {
      yield { voteId: voteIds[index], proof: { index, path: concatBytes(...proofs[index]) } };
    }
  }
  const header = {
    height,
    timestamp: closed.closedAt,
    merkle_root: root,
    prev_hash: closed.prev.hash,
    size: voteIds.length,
  };
  return await store.writeProofsAndBlock({ ...header, hash: blockHash(header) }, proofsToStore(), {
    closed,
    batch: {
      maxMutations: options.maxMutations,
      maxBytes: options.maxBytes,
      afterCommit: (k) => {
        if (options.failAfter === `voteidx:${k}`) throw new SealFault(`voteidx:${k}`);
      },
    },
  });
}
