// The worked examples printed in docs/protocol.md are what lib/protocol computes: a reader who
// checks a value by hand against the document checks it against the code too.
import assert from "node:assert/strict";
import { bytesToHex, hexToBytes, utf8 } from "../lib/protocol/bytes.ts";
import { blockHash, genesisBlock } from "../lib/protocol/chain.ts";
import { keyPairFromSeed } from "../lib/protocol/keys.ts";
import {
  emptyRoot,
  hashLeaf,
  inclusionProof,
  merkleRoot,
  voteBytes,
  voteLeaf,
} from "../lib/protocol/merkle.ts";
import { transcript, verifyRing } from "../lib/protocol/ring_signature.ts";
import { decodeSignature } from "../lib/protocol/signature_wire.ts";

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

/** The known-answer signature printed in protocol §2.9: the fenced line that opens `{"c0"`. */
function knownSignature(): string {
  const block = /```\n(\{"c0"[^\n]*)\n```/.exec(section("2.9"));
  assert.ok(block, "protocol §2.9 prints a complete signature");
  return block[1];
}

Deno.test("protocol §2.9: the complete ring-of-two known answer verifies, and only it", () => {
  const wire = knownSignature();
  const text = section("2.9");
  const seeds = hashesIn(text.slice(text.indexOf("A complete known answer"))).slice(0, 2);
  const sig = decodeSignature(wire);
  const ring = seeds.map((seed) => bytesToHex(keyPairFromSeed(hexToBytes(seed, 32)).publicKey));
  assert.deepEqual(sig.ring.map(bytesToHex), ring, "the seeds give the ring, in order");
  assert.equal(verifyRing(sig, ""), true);
  const changed = wire.replace(/"c0":"(.)/, (_, d) => `"c0":"${d === "0" ? "1" : "0"}`);
  assert.equal(verifyRing(decodeSignature(changed), ""), false);
});

Deno.test("protocol §3.1: the known answer's vote bytes and leaf hash", () => {
  const wire = knownSignature();
  const vote = { payload: "", signature: wire, publicKeys: JSON.parse(wire).ring };
  const printed = /```\n(\{"payload"[^\n]*)\n```/.exec(section("3.1"));
  assert.ok(printed);
  assert.equal(new TextDecoder().decode(voteBytes(vote)), printed[1]);
  const leaf = hashesIn(section("3.1").slice(section("3.1").indexOf("leaf hash"))).at(0);
  assert.equal(bytesToHex(voteLeaf(vote)), leaf);
});
