/**
 * The log of one ledger (protocol §4.10), held in memory per process: the tree of every sealed
 * block's hash, extended from `store.blocks` when the head has moved. Sealed blocks never change,
 * so the root of each size is fixed by the chain; every block read is checked against what is
 * held (its hash recomputed, its link to the one before, the last held block read again), and a
 * mismatch throws — a checkpoint is never signed over a chain this process cannot vouch for.
 * @module
 */
import { blockHash, GENESIS_PREV_HASH } from "../../lib/protocol/chain.ts";
import { logLeafHash } from "../../lib/protocol/block_log.ts";
import { type AppendOnlyTree, createAppendOnlyTree } from "../../lib/protocol/merkle.ts";
import type { BlockRecord } from "../../lib/protocol/schemas.ts";
import type { Store } from "./mod.ts";

/** Blocks read per `store.blocks` call while catching up. */
const PAGE = 100;

/** The log of a ledger; `current()` answers its tree extended to the head. */
export type BlockLog = {
  /**
   * The tree, extended first with every block sealed since the last call. Its size is at least the
   * head height + 1 as read now. Calls run one after another, each reading the store afresh.
   */
  current(): Promise<AppendOnlyTree>;
};

/**
 * The log of the ledger of `store`, empty until its first `current()`. A carded round's genesis
 * links to its card set's sha256 (protocol §2.11), every other genesis to zero.
 */
export function createBlockLog(
  store: Pick<Store, "blocks"> & Partial<Pick<Store, "cards">>,
): BlockLog {
  const genesisPrev = store.cards?.()?.sha256 ?? GENESIS_PREV_HASH;
  const tree = createAppendOnlyTree();
  const hashes: string[] = [];

  const extend = async (): Promise<AppendOnlyTree> => {
    for (;;) {
      // Read the last block held again, so a block changed under us is seen.
      const from = Math.max(hashes.length - 1, 0);
      const { blocks, height } = await store.blocks(from, PAGE);
      if (height < hashes.length - 1) {
        throw logMismatch(`the head is at height ${height}, below block ${hashes.length - 1}`);
      }
      blocks.forEach((block, i) => take(block, from + i));
      if (blocks.length < PAGE) {
        if (hashes.length <= height) throw logMismatch(`block ${hashes.length} was not listed`);
        return tree;
      }
    }
  };

  const take = (block: BlockRecord, height: number) => {
    if (block.height !== height) {
      throw logMismatch(`block ${block.height} was listed at height ${height}`);
    }
    if (height < hashes.length) {
      if (block.hash !== hashes[height]) {
        throw logMismatch(`block ${height} has hash ${block.hash}, not ${hashes[height]}`);
      }
      return;
    }
    const prev = height === 0 ? genesisPrev : hashes[height - 1];
    if (block.prev_hash !== prev) {
      throw logMismatch(`block ${height} links to ${block.prev_hash}, not ${prev}`);
    }
    if (blockHash(block) !== block.hash) {
      throw logMismatch(`block ${height}'s hash is not the hash of its fields`);
    }
    tree.append(logLeafHash(block.hash));
    hashes.push(block.hash);
  };

  let queue: Promise<unknown> = Promise.resolve();
  return {
    current() {
      const run = queue.then(extend);
      queue = run.catch(() => {});
      return run;
    },
  };
}

/** A chain that does not extend what this process holds: a bug or tampering, never signed over. */
function logMismatch(detail: string): Error {
  return new Error(`The ledger does not extend the log held in memory: ${detail}`);
}
