// C2SP signed notes, vkeys and cosignature/v1 (lib/protocol/note.ts): the specs' and Go's known
// answers (Go's signature reproduced byte for byte from its published seed), cosignatures checked
// by OpenSSL through node:crypto, negative corpora for notes, vkeys and signatures (each case with
// its expected error or false), key names, and a round-trip property.
import assert from "node:assert/strict";
import { createHash, createPublicKey, verify as opensslVerify } from "node:crypto";
import fc from "fast-check";
import { ed25519 } from "@noble/curves/ed25519.js";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import {
  base64ToBytes,
  bytesToBase64,
  bytesToHex,
  concatBytes,
  u64be,
  utf8,
} from "../../lib/protocol/bytes.ts";
import {
  assertKeyName,
  COSIGNATURE_V1_TYPE,
  cosignatureMessage,
  decodeBase64Strict,
  ED25519_TYPE,
  formatNote,
  formatVerifierKey,
  isKeyName,
  MAX_NOTE_SIGNATURES,
  noteKeyId,
  type NoteSignature,
  parseNote,
  parseVerifierKey,
  signCosignature,
  type SignedNote,
  signerKey,
  signNote,
  verifierKey,
  verifyCosignature,
  verifyNoteSignature,
} from "../../lib/protocol/note.ts";
import vectors from "../vectors/signed_note.json" with { type: "json" };

const { goNote, c2spExample, cosignedNote } = vectors;
/** Go's signer key carries the seed: `PRIVATE+KEY+<name>+<id>+base64(0x01 ‖ seed)`. */
const peterSeed = base64ToBytes(goNote.skey.split("+").slice(4).join("+")).slice(1);
const peter = { name: "PeterNeumann", seed: peterSeed };
const witness = { name: "witness.example.org/w1", seed: new Uint8Array(32).fill(7) };
const checkpointText = "example.org/log\n3\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";

function withSignature(note: SignedNote, i: number, signature: Uint8Array): SignedNote {
  const signatures = note.signatures.slice();
  signatures[i] = { ...signatures[i], signature };
  return { ...note, signatures };
}

function flip(bytes: Uint8Array, at: number, mask = 0x01): Uint8Array {
  const out = bytes.slice();
  out[at] ^= mask;
  return out;
}

Deno.test("the signed-note spec's example verifies under its vkey, and both round-trip", () => {
  const key = parseVerifierKey(c2spExample.vkey);
  assert.equal(key.name, "example.com/foo");
  assert.equal(key.type, ED25519_TYPE);
  assert.equal(bytesToHex(key.keyId), "530d903a");
  assert.equal(formatVerifierKey(key), c2spExample.vkey);
  const note = parseNote(c2spExample.note);
  assert.equal(note.text, "This is an example message.\n");
  assert.equal(formatNote(note), c2spExample.note);
  assert.equal(verifyNoteSignature(note, key), true);
  assert.equal(verifyNoteSignature(parseNote(utf8(c2spExample.note)), key), true, "as bytes");
});

Deno.test("Go's PeterNeumann note: its seed signs the published line byte for byte", () => {
  assert.equal(formatVerifierKey(signerKey(peter, ED25519_TYPE)), goNote.vkey);
  const line = formatNote({ text: goNote.text, signatures: [signNote(goNote.text, peter)] });
  assert.equal(line, `${goNote.text}\n${goNote.peterSig}`);
  const both = parseNote(`${goNote.text}\n${goNote.peterSig}${goNote.enochSig}`);
  const peterKey = parseVerifierKey(goNote.vkey);
  const enochKey = parseVerifierKey(goNote.enochVkey);
  assert.equal(verifyNoteSignature(both, peterKey), true, "Enoch's line is ignored");
  assert.equal(verifyNoteSignature(both, enochKey), true);
  assert.equal(bytesToHex(both.signatures[1].keyId), "af0cfe78");
});

Deno.test("the cosignature spec's example: key ID, timestamp and signed message", () => {
  const note = parseNote(cosignedNote.note);
  assert.equal(note.text, vectors.checkpoint.body);
  const line = note.signatures[1];
  assert.equal(line.name, cosignedNote.witness);
  assert.equal(bytesToHex(line.keyId), cosignedNote.keyId);
  assert.equal(line.signature.length, 72);
  assert.deepEqual(line.signature.subarray(0, 8), u64be(cosignedNote.timestamp));
  const message = cosignatureMessage(note.text, cosignedNote.timestamp);
  assert.equal(new TextDecoder().decode(message), cosignedNote.signedMessage);
});

Deno.test("a cosignature/v1 is what OpenSSL (node:crypto) verifies over the spec's message", () => {
  const timestamp = 1_767_225_600;
  const line = signCosignature(checkpointText, witness, timestamp);
  const publicKey = ed25519.getPublicKey(witness.seed);
  // Independent key ID: SHA-256(name ‖ "\n" ‖ 0x04 ‖ key)[:4] with node:crypto.
  const id = createHash("sha256").update(`${witness.name}\n`).update(Uint8Array.of(4))
    .update(publicKey).digest().subarray(0, 4);
  assert.equal(bytesToHex(line.keyId), Buffer.from(id).toString("hex"));
  assert.equal(line.signature.length, 72);
  assert.deepEqual(line.signature.subarray(0, 8), u64be(timestamp));
  const message = `cosignature/v1\ntime ${timestamp}\n${checkpointText}`;
  const jwk = { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey).toString("base64url") };
  const key = createPublicKey({ key: jwk, format: "jwk" });
  assert.equal(opensslVerify(null, Buffer.from(message), key, line.signature.subarray(8)), true);

  const note = { text: checkpointText, signatures: [line] };
  const vkey = signerKey(witness, COSIGNATURE_V1_TYPE);
  assert.deepEqual(verifyCosignature(note, vkey), { timestamp });
  assert.deepEqual(verifyCosignature(parseNote(formatNote(note)), vkey), { timestamp });
});

Deno.test("an Ed25519 note signature is what OpenSSL (node:crypto) verifies over the text", () => {
  const line = signNote(checkpointText, witness);
  const x = Buffer.from(ed25519.getPublicKey(witness.seed)).toString("base64url");
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
  assert.equal(opensslVerify(null, Buffer.from(checkpointText), key, line.signature), true);
});

type NoteCase = { desc: string; note: string | Uint8Array; expected: "RangeError" | "TypeError" };

const text = goNote.text;
const sig = goNote.peterSig;
const noteCorpus: NoteCase[] = [
  { desc: "text alone", note: text, expected: "RangeError" },
  { desc: "text and a blank line, no signature", note: `${text}\n`, expected: "RangeError" },
  {
    desc: "signature without its final newline",
    note: `${text}\n${sig.slice(0, -1)}`,
    expected: "RangeError",
  },
  { desc: "a control character", note: `\x01${text}\n${sig}`, expected: "RangeError" },
  {
    desc: "a carriage return",
    note: `${text.replace("\n", "\r\n")}\n${sig}`,
    expected: "RangeError",
  },
  { desc: "a tab", note: `\t${text}\n${sig}`, expected: "RangeError" },
  {
    desc: "invalid UTF-8",
    note: concatBytes(Uint8Array.of(0xff), utf8(`${text}\n${sig}`)),
    expected: "RangeError",
  },
  { desc: "a lone surrogate", note: `\ud800${text}\n${sig}`, expected: "RangeError" },
  {
    desc: "a key name with a space",
    note: `${text}\n${sig.replace("PeterNeumann", "Peter Neumann")}`,
    expected: "RangeError",
  },
  {
    desc: "a key name with a plus",
    note: `${text}\n${sig.replace("PeterNeumann", "Peter+Neumann")}`,
    expected: "RangeError",
  },
  {
    desc: "an empty key name",
    note: `${text}\n${sig.replace("PeterNeumann", "")}`,
    expected: "RangeError",
  },
  {
    desc: "a line after the signatures",
    note: `${text}\n${sig}Unexpected line.\n`,
    expected: "RangeError",
  },
  {
    desc: "a hyphen for the em dash",
    note: `${text}\n${sig.replace("\u2014", "-")}`,
    expected: "RangeError",
  },
  {
    desc: "no space after the em dash",
    note: `${text}\n${sig.replace("\u2014 ", "\u2014")}`,
    expected: "RangeError",
  },
  {
    desc: "no signature after the name",
    note: `${text}\n\u2014 PeterNeumann\n`,
    expected: "RangeError",
  },
  {
    desc: "two spaces before the signature",
    note: `${text}\n${sig.replace("n x08", "n  x08")}`,
    expected: "RangeError",
  },
  {
    desc: "unpadded base64",
    note: `${text}\n${sig.replace("AM=\n", "AM\n")}`,
    expected: "RangeError",
  },
  {
    desc: "non-canonical base64",
    note: `${text}\n${sig.replace("AM=\n", "AN=\n")}`,
    expected: "RangeError",
  },
  { desc: "base64url", note: `${text}\n${sig.replace("/", "_")}`, expected: "RangeError" },
  {
    desc: "a signature of 4 bytes: a key ID only",
    note: `${text}\n\u2014 PeterNeumann x08gow==\n`,
    expected: "RangeError",
  },
  { desc: "an empty text", note: `\n${sig}`, expected: "RangeError" },
  {
    desc: `${MAX_NOTE_SIGNATURES + 1} signatures`,
    note: `${text}\n${sig.repeat(MAX_NOTE_SIGNATURES + 1)}`,
    expected: "RangeError",
  },
  { desc: "a number", note: 42 as never, expected: "TypeError" },
  { desc: "null", note: null as never, expected: "TypeError" },
];

Deno.test("parseNote: negative corpus", () => {
  for (const { desc, note, expected } of noteCorpus) {
    assert.throws(() => parseNote(note), (e: Error) => e.name === expected, desc);
  }
  const many = parseNote(`${text}\n${sig.repeat(MAX_NOTE_SIGNATURES)}`);
  assert.equal(many.signatures.length, MAX_NOTE_SIGNATURES, "the most signatures are taken");
  const blank = parseNote(`a\n\nb\n\n${sig}`);
  assert.equal(blank.text, "a\n\nb\n", "the text ends at the last blank line");
});

Deno.test("verifyNoteSignature: negative corpus answers false", () => {
  const key = parseVerifierKey(goNote.vkey);
  const note = parseNote(`${text}\n${sig}`);
  const s = note.signatures[0].signature;
  const sPlusL = concatBytes(
    s.subarray(0, 32),
    numberToBytesLE(bytesToNumberLE(s.subarray(32)) + ed25519.Point.Fn.ORDER, 32),
  );
  const other = { name: "PeterNeumann", seed: new Uint8Array(32).fill(1) };
  const cases: [string, SignedNote][] = [
    ["text changed", { ...note, text: text.replace("cryptography", "Cryptography") }],
    ["text with a line added", { ...note, text: `${text}more\n` }],
    ["signature byte changed", withSignature(note, 0, flip(s, 10))],
    ["s + L: the same signature, non-canonical", withSignature(note, 0, sPlusL)],
    ["signature of 63 bytes", withSignature(note, 0, s.subarray(1))],
    ["signature of 65 bytes", withSignature(note, 0, concatBytes(s, Uint8Array.of(0)))],
    ["no line of this key", { ...note, signatures: [signNote(text, other)] }],
    ["a valid and an invalid line of the key", {
      ...note,
      signatures: [note.signatures[0], { ...note.signatures[0], signature: flip(s, 3) }],
    }],
    ["the key ID under another name", {
      ...note,
      signatures: [{ ...note.signatures[0], name: "PeterNeumann2" }],
    }],
  ];
  for (const [desc, input] of cases) assert.equal(verifyNoteSignature(input, key), false, desc);
  assert.equal(verifyNoteSignature(note, key), true, "the unmodified note verifies");
});

Deno.test("verifyCosignature: negative corpus answers false", () => {
  const vkey = signerKey(witness, COSIGNATURE_V1_TYPE);
  const line = signCosignature(checkpointText, witness, 1_700_000_000);
  const note = { text: checkpointText, signatures: [line] };
  const s = line.signature;
  const retimed = concatBytes(u64be(1_700_000_001), s.subarray(8));
  const farFuture = concatBytes(u64be(2n ** 53n), s.subarray(8));
  const ed25519Line = { ...signNote(checkpointText, witness), keyId: vkey.keyId };
  const cases: [string, SignedNote][] = [
    ["timestamp changed", withSignature(note, 0, retimed)],
    ["timestamp over 2^53 - 1", withSignature(note, 0, farFuture)],
    ["signature byte changed", withSignature(note, 0, flip(s, 40))],
    ["no timestamp: 64 bytes", withSignature(note, 0, s.subarray(8))],
    ["73 bytes", withSignature(note, 0, concatBytes(s, Uint8Array.of(0)))],
    ["a plain Ed25519 signature under the cosigner's ID", { ...note, signatures: [ed25519Line] }],
    ["text changed", { ...note, text: checkpointText.replace("\n3\n", "\n4\n") }],
    ["only the type 0x01 line of the same key", {
      ...note,
      signatures: [signNote(checkpointText, witness)],
    }],
  ];
  for (const [desc, input] of cases) assert.equal(verifyCosignature(input, vkey), false, desc);
  assert.deepEqual(verifyCosignature(note, vkey), { timestamp: 1_700_000_000 });
  // The type is part of the key ID: the same key and name as an Ed25519 vkey is another key.
  const asEd25519 = signerKey(witness, ED25519_TYPE);
  assert.notDeepEqual(asEd25519.keyId, vkey.keyId);
  assert.throws(() => verifyCosignature(note, asEd25519), RangeError, "a 0x01 key is refused");
  assert.throws(() => verifyNoteSignature(note, vkey), RangeError, "a 0x04 key is refused");
});

Deno.test("parseVerifierKey: negative corpus", () => {
  const good = goNote.vkey;
  const [name, id, material] = ["PeterNeumann", "c74f20a3", good.split("+").slice(2).join("+")];
  const key = base64ToBytes(material);
  const cases: [string, unknown, string][] = [
    ["key ID of another key", good.replace("c74f20a3", "c74f20a4"), "RangeError"],
    ["upper-case key ID", good.replace("c74f20a3", "C74F20A3"), "RangeError"],
    ["7-digit key ID", `${name}+c74f20a+${material}`, "RangeError"],
    ["no key", `${name}+${id}`, "RangeError"],
    ["name only", name, "RangeError"],
    ["empty name", `+${id}+${material}`, "RangeError"],
    ["name with a space", `Peter Neumann+${id}+${material}`, "RangeError"],
    [
      "unknown type 0x02",
      `${name}+${id}+${bytesToBase64(concatBytes(Uint8Array.of(2), key.subarray(1)))}`,
      "RangeError",
    ],
    ["key of 31 bytes", `${name}+${id}+${bytesToBase64(key.subarray(0, 32))}`, "RangeError"],
    ["non-canonical base64", `${name}+${id}+${material.slice(0, -1)}X`, "RangeError"],
    ["a number", 7, "TypeError"],
  ];
  for (const [desc, vkey, error] of cases) {
    assert.throws(() => parseVerifierKey(vkey), (e: Error) => e.name === error, desc);
  }
  // The base64 key may hold "+": only the first two "+" separate.
  const plus = verifierKey("a", ED25519_TYPE, base64ToBytes("+".repeat(43) + "="));
  assert.deepEqual(parseVerifierKey(formatVerifierKey(plus)), plus);
});

Deno.test("formatNote and signing refuse what no note may hold", () => {
  const line = signNote(text, peter);
  const cases: [string, () => unknown, string][] = [
    [
      "text without a final newline",
      () => formatNote({ text: "a", signatures: [line] }),
      "RangeError",
    ],
    ["empty text", () => formatNote({ text: "", signatures: [line] }), "RangeError"],
    [
      "text with a control character",
      () => formatNote({ text: "a\x7f\x00\n", signatures: [line] }),
      "RangeError",
    ],
    ["no signature", () => formatNote({ text, signatures: [] }), "RangeError"],
    [
      "a 3-byte key ID",
      () => formatNote({ text, signatures: [{ ...line, keyId: line.keyId.subarray(1) }] }),
      "RangeError",
    ],
    [
      "an empty signature",
      () => formatNote({ text, signatures: [{ ...line, signature: new Uint8Array(0) }] }),
      "RangeError",
    ],
    [
      "a name with a plus",
      () => formatNote({ text, signatures: [{ ...line, name: "a+b" }] }),
      "RangeError",
    ],
    ["signatures not an array", () => formatNote({ text, signatures: line as never }), "TypeError"],
    ["sign a text without newline", () => signNote("a", peter), "RangeError"],
    [
      "sign with a 31-byte seed",
      () => signNote(text, { name: "a", seed: new Uint8Array(31) }),
      "RangeError",
    ],
    [
      "sign under a name with a space",
      () => signNote(text, { name: "a b", seed: peterSeed }),
      "RangeError",
    ],
    ["cosign at -1", () => signCosignature(text, witness, -1), "RangeError"],
    ["cosign at 1.5", () => signCosignature(text, witness, 1.5), "RangeError"],
    ["key ID of a 0x02 type", () => noteKeyId("a", 2 as never, new Uint8Array(32)), "RangeError"],
  ];
  for (const [desc, run, error] of cases) {
    assert.throws(run, (e: Error) => e.name === error, desc);
  }
  assert.equal(
    formatNote({ text: "a\x7f\n", signatures: [line] }).startsWith("a\x7f\n\n"),
    true,
    "DEL is no control character of the spec",
  );
});

Deno.test("key names: non-empty, no Unicode space, no plus, no control character", () => {
  const valid = ["example.com/foo", "PeterNeumann", "é/ü", "a\u2014b", "a\u200bb", "x".repeat(300)];
  const invalid = [
    "",
    "a b",
    "a+b",
    "a\tb",
    "a\u00a0b",
    "a\u0085b",
    "a\u2028b",
    "a\u3000b",
    "a\x01b",
    "a\ud800",
    7,
    null,
  ];
  for (const name of valid) assert.equal(isKeyName(name), true, JSON.stringify(name));
  for (const name of invalid) assert.equal(isKeyName(name), false, JSON.stringify(name));
  assert.throws(() => assertKeyName(7), TypeError);
  assert.throws(() => assertKeyName("a b"), RangeError);
});

Deno.test("decodeBase64Strict takes padded, canonical standard base64 only", () => {
  assert.deepEqual(decodeBase64Strict("AQI="), Uint8Array.of(1, 2));
  assert.deepEqual(decodeBase64Strict(""), new Uint8Array(0));
  for (const bad of ["AQI", "AQJ=", "AQ I=", "AQI=\n", "AQ==AQ==", "-_8=", "A==="]) {
    assert.throws(() => decodeBase64Strict(bad), RangeError, JSON.stringify(bad));
  }
  assert.throws(() => decodeBase64Strict(1), TypeError);
});

Deno.test("property: a signed note round-trips and verifies; any changed signature byte fails", () => {
  // Note texts: lines of printable text (spaces, em dashes, non-ASCII, emoji), each ending "\n".
  const line = fc.string({
    unit: fc.constantFrom("a", "Z", "0", " ", "+", "\u2014", "é", "\u00a0", "🗳️", "=", "/"),
    maxLength: 20,
  });
  const name = fc.string({
    unit: fc.constantFrom("a", "b", ".", "/", "-", "é", "\u2014", "1"),
    minLength: 1,
    maxLength: 12,
  });
  fc.assert(
    fc.property(
      fc.array(line, { minLength: 1, maxLength: 5 }),
      name,
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.nat(),
      fc.integer({ min: 1, max: 255 }),
      fc.nat({ max: 2 ** 40 }),
      (lines, keyName, seed, at, mask, timestamp) => {
        const noteText = lines.map((l) => `${l}\n`).join("");
        const signer = { name: keyName, seed };
        const signatures: NoteSignature[] = [
          signNote(noteText, signer),
          signCosignature(noteText, signer, timestamp),
        ];
        const note = parseNote(formatNote({ text: noteText, signatures }));
        assert.equal(note.text, noteText);
        const key = signerKey(signer, ED25519_TYPE);
        const cosigner = signerKey(signer, COSIGNATURE_V1_TYPE);
        assert.equal(verifyNoteSignature(note, key), true);
        assert.deepEqual(verifyCosignature(note, cosigner), { timestamp });
        const changed = withSignature(note, 0, flip(note.signatures[0].signature, at % 64, mask));
        assert.equal(verifyNoteSignature(changed, key), false);
        const recosigned = withSignature(
          note,
          1,
          flip(note.signatures[1].signature, at % 72, mask),
        );
        assert.equal(verifyCosignature(recosigned, cosigner), false);
      },
    ),
    { numRuns: 100 },
  );
});
