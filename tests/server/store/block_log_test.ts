// The log held in memory per process (server/store/block_log.ts) over a scripted `store.blocks`:
// it reads page after page and then only what was sealed since, gives every size the root of its
// first blocks, and throws — never extends — on a chain that does not extend what it holds.
import assert from "node:assert/strict";
import { logLeafHash } from "../../../lib/protocol/block_log.ts";
import { bytesToHex } from "../../../lib/protocol/bytes.ts";
import { blockHash, genesisBlock } from "../../../lib/protocol/chain.ts";
import { sha256 } from "../../../lib/protocol/hash.ts";
import { merkleRoot, rootOfSize } from "../../../lib/protocol/merkle.ts";
import type { BlockList, BlockRecord } from "../../../lib/protocol/schemas.ts";
import { createBlockLog } from "../../../server/store/block_log.ts";

/** A chain of genesis and `n` blocks, each linked to the one before. */
function chain(n: number, from: BlockRecord[] = [genesisBlock(1_700_000_000_000)]): BlockRecord[] {
  const blocks = from.slice();
  while (blocks.length <= n) {
    const prev = blocks.at(-1)!;
    const header = {
      height: prev.height + 1,
      timestamp: prev.timestamp + 60_000,
      merkle_root: bytesToHex(sha256(new Uint8Array([prev.height % 256, 1]))),
      prev_hash: prev.hash,
      size: 1 + (prev.height % 3),
    };
    blocks.push({ ...header, hash: blockHash(header) });
  }
  return blocks;
}

/** A scripted store: `blocks` as listed, `head` as the head height (the last block's by default). */
function scripted(state: { blocks: BlockRecord[]; head?: number }) {
  const reads: [number, number][] = [];
  return {
    reads,
    store: {
      blocks(from: number, limit: number): Promise<BlockList> {
        reads.push([from, limit]);
        const height = state.head ?? state.blocks.length - 1;
        return Promise.resolve({ blocks: state.blocks.slice(from, from + limit), height });
      },
    },
  };
}

function leavesOf(blocks: BlockRecord[]) {
  return blocks.map((b) => logLeafHash(b.hash));
}

Deno.test("the log reads every page once, then only from its last block", async () => {
  const state = { blocks: chain(250) };
  const { store, reads } = scripted(state);
  const log = createBlockLog(store);
  const tree = await log.current();
  assert.equal(tree.size, 251);
  assert.deepEqual(tree.root(251), merkleRoot(leavesOf(state.blocks)));
  assert.deepEqual(reads, [[0, 100], [99, 100], [198, 100]]);

  state.blocks = chain(260, state.blocks);
  reads.length = 0;
  const grown = await log.current();
  assert.equal(grown.size, 261);
  assert.deepEqual(reads, [[250, 100]], "the last held block is read again, then the new ones");
  for (const size of [1, 2, 100, 251, 261]) {
    assert.deepEqual(grown.root(size), rootOfSize(leavesOf(state.blocks), size), `root ${size}`);
  }
});

Deno.test("concurrent calls run one after another and all see the head", async () => {
  const state = { blocks: chain(30) };
  const { store, reads } = scripted(state);
  const log = createBlockLog(store);
  const trees = await Promise.all(Array.from({ length: 5 }, () => log.current()));
  for (const tree of trees) assert.equal(tree.size, 31);
  assert.deepEqual(reads[0], [0, 100]);
  assert.deepEqual(reads.slice(1), Array(4).fill([30, 100]));
});

Deno.test("a chain that does not extend what the log holds throws, whatever it breaks", async () => {
  const honest = chain(12);
  const tamper = (height: number, change: Partial<BlockRecord>, rehash = true) => {
    const blocks = honest.slice();
    const block = { ...blocks[height], ...change };
    blocks[height] = rehash ? { ...block, hash: blockHash(block) } : block;
    return blocks;
  };
  const cases: { desc: string; held: number; then: { blocks: BlockRecord[]; head?: number } }[] = [
    {
      desc: "a held block's hash changed",
      held: 12,
      then: { blocks: tamper(12, { timestamp: 1 }) },
    },
    {
      desc: "a new block links elsewhere",
      held: 10,
      then: { blocks: tamper(11, { prev_hash: "00".repeat(32) }) },
    },
    {
      desc: "a new block's hash is not its fields'",
      held: 10,
      then: { blocks: tamper(11, { size: 9 }, false) },
    },
    {
      desc: "a new block at another height",
      held: 10,
      then: { blocks: tamper(11, { height: 12 }) },
    },
    { desc: "the head went back", held: 12, then: { blocks: honest, head: 8 } },
    {
      desc: "a block below the head is not listed",
      held: 5,
      then: { blocks: honest.slice(0, 9), head: 12 },
    },
    {
      desc: "a block skipped",
      held: 5,
      then: { blocks: [...honest.slice(0, 8), ...honest.slice(9)] },
    },
    { desc: "another genesis", held: 0, then: { blocks: chain(3, [genesisBlock(1)]) } },
  ];
  for (const { desc, held, then } of cases) {
    const state: { blocks: BlockRecord[]; head?: number } = { blocks: honest.slice(0, held + 1) };
    const { store } = scripted(state);
    const log = createBlockLog(store);
    assert.equal((await log.current()).size, held + 1, desc);
    Object.assign(state, then);
    await assert.rejects(log.current(), /does not extend the log held in memory/, desc);
    // Still refused on the next call, and what it held is unchanged.
    await assert.rejects(log.current(), /does not extend the log held in memory/, desc);
    Object.assign(state, { blocks: honest, head: undefined });
    const healed = await log.current();
    assert.equal(healed.size, 13, `${desc}: the honest chain is taken again`);
    assert.deepEqual(healed.root(13), merkleRoot(leavesOf(honest)), desc);
  }
});

Deno.test("a genesis that is not the chain's first block is refused from the first call", async () => {
  const blocks = chain(3);
  const { store } = scripted({ blocks: [{ ...blocks[0], prev_hash: "11".repeat(32) }] });
  await assert.rejects(createBlockLog(store).current(), /block 0 links to/);
});
