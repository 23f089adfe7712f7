import assert from "node:assert/strict";
import { bytesToHex } from "../../lib/protocol/bytes.ts";
import {
  blockHash,
  checkLink,
  GENESIS_PREV_HASH,
  genesisBlock,
  isGenesis,
  verifyBlockHash,
} from "../../lib/protocol/chain.ts";
import { emptyRoot } from "../../lib/protocol/merkle.ts";
import type { BlockRecord } from "../../lib/protocol/schemas.ts";
import vectors from "../vectors/chain_block.json" with { type: "json" };

const frozen: BlockRecord = vectors.block;

/** A correctly hashed block after `prev`, closed one minute later with `size` votes. */
function nextBlock(prev: BlockRecord, merkleRoot: string, size: number): BlockRecord {
  const header = {
    height: prev.height + 1,
    timestamp: prev.timestamp + 60_000,
    merkle_root: merkleRoot,
    prev_hash: prev.hash,
    size,
  };
  return { ...header, hash: blockHash(header) };
}

Deno.test("blockHash matches the independently computed protocol §3 vector", () => {
  assert.equal(blockHash(frozen), vectors.block.hash);
  assert.equal(verifyBlockHash(frozen), true);
});

Deno.test("genesisBlock has height 0, size 0, the empty-tree root and a zero prev_hash", () => {
  const genesis = genesisBlock(vectors.genesis.timestamp);
  assert.deepEqual(genesis, vectors.genesis);
  assert.equal(genesis.merkle_root, bytesToHex(emptyRoot()));
  assert.equal(genesis.prev_hash, GENESIS_PREV_HASH);
  assert.equal(GENESIS_PREV_HASH, "00".repeat(32));
  assert.equal(verifyBlockHash(genesis), true);
  assert.notEqual(genesisBlock(vectors.genesis.timestamp + 1).hash, genesis.hash);
});

Deno.test("isGenesis accepts any genesis block and refuses each changed genesis field", () => {
  const genesis = genesisBlock(vectors.genesis.timestamp);
  assert.equal(isGenesis(genesis), true);
  assert.equal(isGenesis(genesisBlock(0)), true);
  const changed: [string, Partial<BlockRecord>][] = [
    ["height 1", { height: 1 }],
    ["size 1", { size: 1 }],
    ["a root other than the empty tree's", { merkle_root: vectors.block.merkle_root }],
    ["a non-zero prev_hash", { prev_hash: genesis.hash }],
  ];
  for (const [desc, change] of changed) {
    assert.equal(isGenesis(rehash({ ...genesis, ...change })), false, desc);
  }
  assert.equal(isGenesis({ ...genesis, height: "0" as unknown as number }), false, "height '0'");
  assert.equal(isGenesis(nextBlock(genesis, vectors.block.merkle_root, 8)), false, "block 1");
});

Deno.test("checkLink accepts a correctly hashed next block", () => {
  const genesis = genesisBlock(vectors.genesis.timestamp);
  const first = nextBlock(genesis, vectors.block.merkle_root, 8);
  const second = nextBlock(first, vectors.block.prev_hash, 1);
  assert.equal(checkLink(first, genesis), true);
  assert.equal(checkLink(second, first), true);
});

Deno.test("checkLink rejects every broken link", async (t) => {
  const genesis = genesisBlock(vectors.genesis.timestamp);
  const prev = nextBlock(genesis, vectors.block.merkle_root, 8);
  const block = nextBlock(prev, vectors.block.prev_hash, 3);
  const cases: { desc: string; block: BlockRecord; prev?: BlockRecord }[] = [
    // Re-hashed, so that only the link itself is wrong.
    { desc: "height skips one", block: rehash({ ...block, height: block.height + 1 }) },
    { desc: "height repeats the previous one", block: rehash({ ...block, height: prev.height }) },
    { desc: "prev_hash of another block", block: rehash({ ...block, prev_hash: genesis.hash }) },
    { desc: "previous block is not the one linked", block, prev: genesis },
    { desc: "hash altered", block: { ...block, hash: flipHex(block.hash) } },
    { desc: "size altered (size is committed)", block: { ...block, size: block.size + 1 } },
    { desc: "timestamp altered", block: { ...block, timestamp: block.timestamp - 1 } },
    { desc: "merkle_root altered", block: { ...block, merkle_root: flipHex(block.merkle_root) } },
    { desc: "prev_hash altered", block: rehash({ ...block, prev_hash: flipHex(prev.hash) }) },
  ];
  for (const c of cases) {
    await t.step(c.desc, () => {
      assert.equal(checkLink(c.block, c.prev ?? prev), false);
    });
  }
});

Deno.test("verifyBlockHash is false for any changed committed field", () => {
  const changed: BlockRecord[] = [
    { ...frozen, height: frozen.height + 1 },
    { ...frozen, timestamp: frozen.timestamp + 1 },
    { ...frozen, size: frozen.size - 1 },
    { ...frozen, merkle_root: flipHex(frozen.merkle_root) },
    { ...frozen, prev_hash: flipHex(frozen.prev_hash) },
    { ...frozen, hash: flipHex(frozen.hash) },
  ];
  for (const block of changed) assert.equal(verifyBlockHash(block), false, JSON.stringify(block));
});

Deno.test("malformed blocks throw instead of comparing", () => {
  const cases: [string, unknown, string][] = [
    ["null block", null, "TypeError"],
    ["uppercase hash", { ...frozen, hash: frozen.hash.toUpperCase() }, "RangeError"],
    [
      "63-character merkle_root",
      { ...frozen, merkle_root: frozen.merkle_root.slice(1) },
      "RangeError",
    ],
    ["prev_hash of 33 bytes", { ...frozen, prev_hash: frozen.prev_hash + "00" }, "RangeError"],
    ["prev_hash as bytes", { ...frozen, prev_hash: new Uint8Array(32) }, "TypeError"],
    ["missing hash", { ...frozen, hash: undefined }, "TypeError"],
    ["height as a string", { ...frozen, height: "42" }, "TypeError"],
    ["negative timestamp", { ...frozen, timestamp: -1 }, "RangeError"],
    ["fractional size", { ...frozen, size: 1.5 }, "RangeError"],
    ["timestamp beyond 2^53", { ...frozen, timestamp: 2 ** 53 }, "RangeError"],
  ];
  for (const [desc, block, name] of cases) {
    const isName = (e: Error) => e.name === name;
    assert.throws(() => verifyBlockHash(block as BlockRecord), isName, `verifyBlockHash: ${desc}`);
    assert.throws(
      () => checkLink(block as BlockRecord, frozen),
      isName,
      `checkLink block: ${desc}`,
    );
  }
  assert.throws(() => checkLink(frozen, null as never), TypeError);
  assert.throws(() => checkLink(frozen, { ...frozen, hash: "zz" }), RangeError);
  assert.throws(() => genesisBlock(-5), RangeError);
  assert.throws(() => genesisBlock("0" as never), TypeError);
});

/** `hex` with its first character changed, still lowercase hex. */
function flipHex(hex: string): string {
  return (hex[0] === "0" ? "1" : "0") + hex.slice(1);
}

function rehash(block: BlockRecord): BlockRecord {
  return { ...block, hash: blockHash(block) };
}
