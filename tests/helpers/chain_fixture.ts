/**
 * A made-up chain for tests of what the board re-derives: genesis and blocks of sample votes (not
 * signed), each block's hash, root and link computed as protocol §3 says.
 * @module
 */
import { bytesToHex } from "../../lib/protocol/bytes.ts";
import { blockHash, genesisBlock } from "../../lib/protocol/chain.ts";
import { merkleRoot, voteLeaf } from "../../lib/protocol/merkle.ts";
import type { BlockRecord, VoteRecord } from "../../lib/protocol/schemas.ts";

/** A vote whose ring keys are derived from `n`, so every vote differs. */
export function sampleVote(n: number, payload = `Choice ${"ABC"[n % 3]}`): VoteRecord {
  const key = (k: number) => bytesToHex(new Uint8Array(32).fill((n * 7 + k) % 256));
  return {
    payload,
    signature: JSON.stringify({ c0: key(1), r: [key(2), key(3)], I: key(4), ring: [] }),
    publicKeys: [key(5), key(6)],
  };
}

/** A chain of genesis plus one block per entry of `sizes`, with the votes of each block. */
export function makeChain(sizes: number[]): { blocks: BlockRecord[]; votes: VoteRecord[][] } {
  const blocks = [genesisBlock(1_700_000_000_000)];
  const votes: VoteRecord[][] = [[]];
  let n = 0;
  for (const size of sizes) {
    const own = Array.from({ length: size }, () => sampleVote(n++));
    const prev = blocks[blocks.length - 1];
    const header = {
      height: prev.height + 1,
      timestamp: prev.timestamp + 60_000,
      merkle_root: bytesToHex(merkleRoot(own.map(voteLeaf))),
      prev_hash: prev.hash,
      size,
    };
    blocks.push({ ...header, hash: blockHash(header) });
    votes.push(own);
  }
  return { blocks, votes };
}
