// The worked examples printed in docs/protocol.md are what lib/protocol computes: a reader who
// checks a value by hand against the document checks it against the code too.
import assert from "node:assert/strict";
import { bytesToHex, utf8 } from "../lib/protocol/bytes.ts";
import { blockHash, genesisBlock } from "../lib/protocol/chain.ts";
import { emptyRoot, hashLeaf, inclusionProof, merkleRoot } from "../lib/protocol/merkle.ts";
import { transcript } from "../lib/protocol/ring_signature.ts";

const doc = await Deno.readTextFile(new URL("../docs/protocol.md", import.meta.url));

/** The text of protocol section `number` (e.g. "3.2"), up to the next heading. */
function section(number: string): string {
  const start = doc.search(new RegExp(`^#+ ${number.replace(".", "\\.")} `, "m"));
  assert.ok(start >= 0, `protocol §${number} exists`);
  const rest = doc.slice(doc.indexOf("\n", start));
  const end = rest.search(/^#/m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** Every 64-character hex value in `text`, in order. */
function hashesIn(text: string): string[] {
  return [...text.matchAll(/\b[0-9a-f]{64}\b/g)].map((m) => m[0]);
}

Deno.test("protocol §3.2: the three-leaf example and the empty root", () => {
  const leaves = ["a", "b", "c"].map((s) => hashLeaf(utf8(s)));
  const node01 = bytesToHex(inclusionProof(leaves, 2)[0]);
  const expected = [
    ...leaves.map(bytesToHex),
    node01,
    bytesToHex(merkleRoot(leaves)),
  ];
  const printed = hashesIn(section("3.2"));
  assert.equal(printed[0], bytesToHex(emptyRoot()), "empty tree");
  assert.deepEqual(printed.slice(1), expected);
  assert.deepEqual(inclusionProof(leaves, 0), [leaves[1], leaves[2]], "path of leaf 0");
});

Deno.test("protocol §3.3 and §3.4: the block and genesis hashes", () => {
  const [root, prev, hash] = hashesIn(section("3.3"));
  const printedBlock = { height: 42, timestamp: 1767225600000, size: 8 };
  assert.equal(blockHash({ ...printedBlock, merkle_root: root, prev_hash: prev }), hash);
  const [genesisHash] = hashesIn(section("3.4"));
  assert.equal(genesisBlock(1767225600000).hash, genesisHash);
});

Deno.test("protocol §2.5: the transcript length of the example", () => {
  const printed = /a ring of 2 and the message `yes` give (\d+) bytes/.exec(section("2.5"));
  assert.ok(printed);
  const key = new Uint8Array(32);
  assert.equal(transcript([key, key], key, "yes").length, Number(printed[1]));
});
