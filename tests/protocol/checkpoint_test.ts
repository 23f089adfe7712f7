// Checkpoints (lib/protocol/checkpoint.ts) and the log of a ledger (lib/protocol/block_log.ts):
// the tlog-checkpoint spec's example, a signed checkpoint opened under its vkey and refused under
// any other, a negative corpus of bodies and of checkpoints to format (each with its expected
// error), extension lines, and the leaf, size and origin rules of protocol §4.10.
import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base64ToBytes, bytesToBase64, bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import {
  DERIVED_ORIGIN_PREFIX,
  derivedOrigin,
  logLeafHash,
  logSize,
} from "../../lib/protocol/block_log.ts";
import {
  type Checkpoint,
  formatCheckpoint,
  isOrigin,
  openCheckpoint,
  parseCheckpoint,
  signCheckpoint,
} from "../../lib/protocol/checkpoint.ts";
import { hashLeaf } from "../../lib/protocol/merkle.ts";
import {
  COSIGNATURE_V1_TYPE,
  ED25519_TYPE,
  formatNote,
  parseNote,
  parseVerifierKey,
  signCosignature,
  signerKey,
  signNote,
  verifierKey,
  verifyCosignature,
  verifyNoteSignature,
} from "../../lib/protocol/note.ts";
import vectors from "../vectors/signed_note.json" with { type: "json" };

const seed = new Uint8Array(32).fill(3);
const root = base64ToBytes(vectors.checkpoint.root);
const checkpoint: Checkpoint = { origin: "vote.example.org/log", size: 5, root };
const logKey = signerKey({ name: checkpoint.origin, seed }, ED25519_TYPE);

Deno.test("the tlog-checkpoint spec's example parses and formats back byte for byte", () => {
  const { body, origin, size } = vectors.checkpoint;
  const parsed = parseCheckpoint(body);
  assert.deepEqual(parsed, { origin, size, root, extensions: [] });
  assert.equal(formatCheckpoint(parsed), body);
});

Deno.test("a signed checkpoint: the body, one line by the origin's key, and it opens", () => {
  const note = signCheckpoint(checkpoint, seed);
  const body = `vote.example.org/log\n5\n${vectors.checkpoint.root}\n`;
  assert.equal(note.startsWith(`${body}\n\u2014 vote.example.org/log `), true);
  assert.equal(note.split("\n").length, 6, "three lines, a blank line, one signature line");
  assert.deepEqual(openCheckpoint(note, logKey), { ...checkpoint, extensions: [] });
});

Deno.test("openCheckpoint answers false for another key, another origin or a changed body", () => {
  const note = signCheckpoint(checkpoint, seed);
  const otherSeed = new Uint8Array(32).fill(4);
  const otherKey = signerKey({ name: checkpoint.origin, seed: otherSeed }, ED25519_TYPE);
  const renamed = verifierKey("vote.example.org/other", ED25519_TYPE, logKey.publicKey);
  const changedSize = note.replace("\n5\n", "\n6\n");
  const byOther = signCheckpoint(checkpoint, otherSeed);
  // Signed by our key over this very body, but under a name other than its origin.
  const text = formatCheckpoint(checkpoint);
  const misnamed = formatNote({ text, signatures: [signNote(text, { name: renamed.name, seed })] });
  assert.equal(verifyNoteSignature(parseNote(misnamed), renamed), true, "the signature holds");
  assert.equal(openCheckpoint(note, otherKey), false, "another key");
  assert.equal(openCheckpoint(note, renamed), false, "the key under another name");
  assert.equal(openCheckpoint(changedSize, logKey), false, "size changed");
  assert.equal(openCheckpoint(byOther, logKey), false, "signed by another key");
  assert.equal(openCheckpoint(misnamed, renamed), false, "origin is not the key's name");
  assert.throws(() => openCheckpoint("no note", logKey), RangeError);
  assert.throws(() => openCheckpoint(note.replace("\n5\n", "\n05\n"), logKey), RangeError);
});

Deno.test("witness cosignatures ride after the log's line and leave it verifiable", () => {
  const witness = { name: "witness.example.org/w1", seed: new Uint8Array(32).fill(9) };
  const text = formatCheckpoint(checkpoint);
  const cosignature = signCosignature(text, witness, 1_767_225_600);
  const note = signCheckpoint(checkpoint, seed, { cosignatures: [cosignature] });
  const parsed = parseNote(note);
  assert.equal(parsed.signatures.length, 2);
  assert.equal(parsed.signatures[1].name, witness.name);
  assert.deepEqual(openCheckpoint(note, logKey), { ...checkpoint, extensions: [] });
  const cosigner = signerKey(witness, COSIGNATURE_V1_TYPE);
  assert.deepEqual(verifyCosignature(parsed, cosigner), { timestamp: 1_767_225_600 });
});

Deno.test("extension lines are parsed and returned, formatted back in order", () => {
  const body = `${formatCheckpoint(checkpoint)}ext one\n— not a signature\n`;
  const parsed = parseCheckpoint(body);
  assert.deepEqual(parsed.extensions, ["ext one", "— not a signature"]);
  assert.equal(formatCheckpoint(parsed), body);
});

Deno.test("parseCheckpoint: negative corpus", () => {
  const r = vectors.checkpoint.root;
  const cases: { desc: string; body: unknown; expected: "RangeError" | "TypeError" }[] = [
    { desc: "no root line", body: "o\n5\n", expected: "RangeError" },
    { desc: "no final newline", body: `o\n5\n${r}`, expected: "RangeError" },
    { desc: "empty origin", body: `\n5\n${r}\n`, expected: "RangeError" },
    { desc: "empty extension line", body: `o\n5\n${r}\n\next\n`, expected: "RangeError" },
    { desc: "trailing blank line", body: `o\n5\n${r}\n\n`, expected: "RangeError" },
    { desc: "size with a leading zero", body: `o\n05\n${r}\n`, expected: "RangeError" },
    { desc: "size 00", body: `o\n00\n${r}\n`, expected: "RangeError" },
    { desc: "negative size", body: `o\n-1\n${r}\n`, expected: "RangeError" },
    { desc: "size with a plus", body: `o\n+5\n${r}\n`, expected: "RangeError" },
    { desc: "size with a space", body: `o\n 5\n${r}\n`, expected: "RangeError" },
    { desc: "size in hex", body: `o\n0x5\n${r}\n`, expected: "RangeError" },
    { desc: "size over 2^53 - 1", body: `o\n9007199254740992\n${r}\n`, expected: "RangeError" },
    {
      desc: "root of 31 bytes",
      body: `o\n5\n${bytesToBase64(root.subarray(1))}\n`,
      expected: "RangeError",
    },
    { desc: "root unpadded", body: `o\n5\n${r.slice(0, -1)}\n`, expected: "RangeError" },
    { desc: "root in hex", body: `o\n5\n${bytesToHex(root)}\n`, expected: "RangeError" },
    { desc: "root with a space", body: `o\n5\n ${r}\n`, expected: "RangeError" },
    { desc: "CRLF line ends", body: `o\r\n5\r\n${r}\r\n`, expected: "RangeError" },
    { desc: "a control character", body: `o\x00\n5\n${r}\n`, expected: "RangeError" },
    { desc: "a lone surrogate", body: `o\ud800\n5\n${r}\n`, expected: "RangeError" },
    { desc: "not a string", body: utf8Bytes(`o\n5\n${r}\n`), expected: "TypeError" },
  ];
  for (const { desc, body, expected } of cases) {
    assert.throws(() => parseCheckpoint(body as string), (e: Error) => e.name === expected, desc);
  }
  assert.equal(parseCheckpoint(`o\n0\n${r}\n`).size, 0, "size 0 is written 0");
  assert.equal(parseCheckpoint(`a b+c\n1\n${r}\n`).origin, "a b+c", "any non-empty origin parses");
});

function utf8Bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

Deno.test("formatCheckpoint refuses what it would not sign", () => {
  const cases: [string, unknown, string][] = [
    ["origin with a space", { ...checkpoint, origin: "vote example" }, "RangeError"],
    ["origin with a plus", { ...checkpoint, origin: "vote+example" }, "RangeError"],
    ["empty origin", { ...checkpoint, origin: "" }, "RangeError"],
    ["origin with a newline", { ...checkpoint, origin: "a\nb" }, "RangeError"],
    ["negative size", { ...checkpoint, size: -1 }, "RangeError"],
    ["fractional size", { ...checkpoint, size: 1.5 }, "RangeError"],
    ["size as a string", { ...checkpoint, size: "5" }, "TypeError"],
    ["root of 31 bytes", { ...checkpoint, root: root.subarray(1) }, "RangeError"],
    ["root as base64", { ...checkpoint, root: vectors.checkpoint.root }, "TypeError"],
    ["empty extension", { ...checkpoint, extensions: [""] }, "RangeError"],
    ["extension with a newline", { ...checkpoint, extensions: ["a\nb"] }, "RangeError"],
    ["extension a number", { ...checkpoint, extensions: [1] }, "TypeError"],
    ["null", null, "TypeError"],
  ];
  for (const [desc, input, error] of cases) {
    assert.throws(
      () => formatCheckpoint(input as Checkpoint),
      (e: Error) => e.name === error,
      desc,
    );
  }
  assert.equal(isOrigin("vote.example.org/log"), true);
  assert.equal(isOrigin("vote.example.org/log 2"), false);
});

Deno.test("the log of a ledger: leaf hashLeaf(block hash), size height + 1, derived origin", () => {
  const genesis = "7d7908d4ed2eb2f14d9e53f0f7db2d2c4ea7d8426016b2a82eff071bbd46c871";
  assert.deepEqual(logLeafHash(genesis), hashLeaf(hexToBytes(genesis)));
  assert.equal(logSize(0), 1);
  assert.equal(logSize(41), 42);
  const key = bytesToHex(ed25519.getPublicKey(seed));
  assert.equal(derivedOrigin(key), `${DERIVED_ORIGIN_PREFIX}${key.slice(0, 16)}`);
  assert.equal(derivedOrigin(key).startsWith("ringvote.local/log/"), true);
  assert.equal(isOrigin(derivedOrigin(key)), true);
  assert.throws(() => derivedOrigin(key.toUpperCase()), RangeError);
  assert.throws(() => logLeafHash(genesis.slice(2)), RangeError);
  assert.throws(() => logSize(-1), RangeError);
});

Deno.test("protocol §4.10's example checkpoint opens under the vkey printed with it", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/protocol.md", import.meta.url));
  const section = doc.slice(doc.indexOf("### 4.10 "), doc.indexOf("## 5. "));
  const note = section.match(/```\n(ringvote\.local\/log\/[\s\S]*?\n)```/)![1];
  const vkey = section.match(/^vkey `([^`]+)`/m)![1];
  const serverKey = section.match(/\(server key `([0-9a-f]{64})`\)/)![1];
  const key = parseVerifierKey(vkey);
  assert.equal(key.name, derivedOrigin(serverKey));
  assert.equal(bytesToHex(key.publicKey), serverKey);
  const opened = openCheckpoint(note, key);
  assert.ok(opened);
  assert.equal(opened.size, 5);
});
