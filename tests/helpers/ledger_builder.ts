// A ledger of any size for browser tests and benchmarks: real keys, real ring signatures, written
// through the store (the API's signature check is skipped, the signatures are valid anyway) and
// sealed into blocks, so a 10,000-vote ledger costs its signing time and little else.
import { bytesToHex } from "../../lib/protocol/bytes.ts";
import { blockHash } from "../../lib/protocol/chain.ts";
import { emptyRoot } from "../../lib/protocol/merkle.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import type { Store } from "../../server/store/mod.ts";
import { makeVoters, ringFor, signedVote, type TestVoter } from "./ledger_fixtures.ts";

/** Options of {@link buildLedger}. */
export type LedgerOptions = {
  /** Number of votes, one per voter. */
  votes: number;
  /** Ring size of every vote; default 8. */
  ringSize?: number;
  /** Votes per sealed block; default 100. */
  perBlock?: number;
  /** Payloads, used in turn; default three choices. */
  payloads?: string[];
  /** Timestamp of the first block, ms since the epoch. */
  startAt?: number;
};

/** A vote the builder cast: its id, block and signer. */
export type BuiltVote = { voteId: string; blockId: number; voter: TestVoter; payload: string };

/**
 * Registers one key per vote, casts every vote over a ring of `ringSize` registered keys and seals
 * a block each `perBlock` votes. Answers the votes in the order cast.
 */
export async function buildLedger(store: Store, opts: LedgerOptions): Promise<BuiltVote[]> {
  const { votes, ringSize = 8, perBlock = 100 } = opts;
  const payloads = opts.payloads ?? ["Choice A", "Choice B", "Choice C"];
  let now = opts.startAt ?? 1_700_000_000_000;
  const voters = makeVoters(votes);
  for (const v of voters) await store.registerKey(v.key);
  const built: BuiltVote[] = [];
  for (const [i, voter] of voters.entries()) {
    const payload = payloads[i % payloads.length];
    const vote = signedVote(voter, ringFor(voter, voters, ringSize, i * 7), payload);
    const { voteId, blockId } = await store.submitVote({
      payload,
      signature: vote.signature,
      publicKeys: vote.publicKeys,
    }, vote.tag);
    built.push({ voteId, blockId, voter, payload });
    if ((i + 1) % perBlock === 0 || i === voters.length - 1) {
      await sealNextBlock(store, now += 60_000);
    }
  }
  return built;
}

/**
 * Appends empty blocks (no votes, the empty tree's root) through the store until the chain holds
 * `size` blocks, genesis included: a long log, cheaply, for the log's checks and proofs.
 */
export async function appendEmptyBlocks(store: Store, size: number, startAt = 1_700_000_000_000) {
  const { height } = await store.blocks(0, 1);
  let head = (await store.blocks(height, 1)).blocks[0];
  for (let h = height + 1; h < size; h++) {
    const header = {
      height: h,
      timestamp: startAt + h * 1000,
      merkle_root: bytesToHex(emptyRoot()),
      prev_hash: head.hash,
      size: 0,
    };
    head = await store.appendBlock({ ...header, hash: blockHash(header) });
  }
}
