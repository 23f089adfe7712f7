// The frozen LSAG v1 vectors checked by a verifier written from docs/protocol.md §2 alone
// (spec_literal_lsag.ts, no code shared with lib/): every vector is accepted, a mutated copy of
// each is refused by the check the document names, and lib/protocol/ring_signature.ts reaches the
// same verdict on every case. The known answers printed in protocol §2.10 are recomputed too.
import assert from "node:assert/strict";
import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { checkRing } from "../../lib/protocol/ring_signature.ts";
import { decodeSignature } from "../../lib/protocol/signature_wire.ts";
import lsag from "./lsag_v1.json" with { type: "json" };
import rfc8032 from "./rfc8032_keys.json" with { type: "json" };
import {
  fromHex,
  Hp,
  Hs,
  L,
  littleEndian,
  parseWire,
  publicKeyOf,
  scalarToBytes,
  secretOf,
  tagOf,
  toHex,
  toWire,
  verifySpecLiteral,
  type WireSignature,
} from "./spec_literal_lsag.ts";

const Point = ed25519.Point;

/** A hostile copy of a vector and the check of protocol §2.7 that must refuse it. */
type Mutant = { desc: string; sig: WireSignature; message: string; check: number };

/** The hex of the scalar `hex` with the low bit of its least significant byte flipped. */
function flipLowBit(hex: string): string {
  const bytes = fromHex(hex);
  bytes[0] ^= 1;
  return toHex(bytes);
}

/** `r_i + L`: the same value mod L, no longer canonical (fits: r_i + L < 2^254). */
function plusL(hex: string): string {
  return toHex(scalarToBytes(littleEndian(fromHex(hex)) + L));
}

function replaceAt<T>(list: T[], index: number, value: T): T[] {
  return list.map((v, i) => (i === index ? value : v));
}

/** Every hostile copy of one vector the test runs. */
function mutantsOf(sig: WireSignature, message: string): Mutant[] {
  const n = sig.ring.length;
  const tag = Point.fromBytes(fromHex(sig.I));
  const order8 = Point.fromBytes(fromHex(ED25519_TORSION_SUBGROUP[1]));
  const outsider = toHex(publicKeyOf(new Uint8Array(32).fill(7)));
  // y = p + 1 = 2^255 - 18: a non-canonical spelling of y = 1 (RFC 8032 §5.1.3 requires y < p).
  const nonCanonical = "ee" + "ff".repeat(30) + "7f";
  const mutants: Mutant[] = [
    { desc: "c0 changed", sig: { ...sig, c0: flipLowBit(sig.c0) }, message, check: 7 },
    ...sig.r.map((ri, i) => ({
      desc: `r_${i} changed`,
      sig: { ...sig, r: replaceAt(sig.r, i, flipLowBit(ri)) },
      message,
      check: 7,
    })),
    {
      desc: "the tag replaced by another valid tag (2·I)",
      sig: { ...sig, I: toHex(tag.double().toBytes()) },
      message,
      check: 7,
    },
    {
      desc: "one ring member replaced by a key outside the ring",
      sig: { ...sig, ring: replaceAt(sig.ring, 0, outsider) },
      message,
      check: 7,
    },
    { desc: "the message changed", sig, message: message + "!", check: 7 },
    {
      desc: "the ring order reversed (responses with it)",
      sig: { ...sig, ring: [...sig.ring].reverse(), r: [...sig.r].reverse() },
      message,
      check: 7,
    },
    ...sig.r.map((ri, i) => ({
      desc: `r_${i} replaced by r_${i} + L`,
      sig: { ...sig, r: replaceAt(sig.r, i, plusL(ri)) },
      message,
      check: 6,
    })),
    {
      desc: "the tag plus an order-8 point",
      sig: { ...sig, I: toHex(tag.add(order8).toBytes()) },
      message,
      check: 5,
    },
    {
      desc: "the tag is the identity",
      sig: { ...sig, I: toHex(Point.ZERO.toBytes()) },
      message,
      check: 4,
    },
    { desc: "the tag encoded with y >= p", sig: { ...sig, I: nonCanonical }, message, check: 3 },
    {
      desc: "a ring member repeated",
      sig: { ...sig, ring: replaceAt(sig.ring, n - 1, sig.ring[0]) },
      message,
      check: 2,
    },
    {
      desc: "a ring of one",
      sig: { ...sig, ring: sig.ring.slice(0, 1), r: sig.r.slice(0, 1) },
      message,
      check: 1,
    },
  ];
  return mutants;
}

/** lib's verdict on the same wire string and message. */
function libAccepts(sig: WireSignature, message: string): boolean {
  return checkRing(decodeSignature(toWire(sig)), message).ok;
}

Deno.test("the spec-literal key derivation gives the RFC 8032 public keys", () => {
  for (const v of rfc8032.vectors) {
    assert.equal(toHex(publicKeyOf(fromHex(v.seed))), v.publicKey, v.name);
  }
});

Deno.test("the spec-literal verifier accepts every frozen LSAG v1 vector, as lib does", () => {
  assert.ok(lsag.vectors.length >= 3);
  for (const v of lsag.vectors) {
    const sig = parseWire(v.signature);
    const seeds = v.seeds.map(fromHex);
    assert.deepEqual(sig.ring, seeds.map((s) => toHex(publicKeyOf(s))), "ring = P of each seed");
    assert.equal(sig.I, toHex(tagOf(seeds[v.signer])), "I = x·Hp(P) of the signer");
    assert.deepEqual(verifySpecLiteral(sig, v.message), { ok: true }, v.randomLabel);
    assert.equal(libAccepts(sig, v.message), true, v.randomLabel);
  }
});

Deno.test("a mutated copy of every vector is refused by the check protocol §2.7 names", async (t) => {
  for (const v of lsag.vectors) {
    const sig = parseWire(v.signature);
    for (const mutant of mutantsOf(sig, v.message)) {
      await t.step(`ring of ${sig.ring.length}: ${mutant.desc}`, () => {
        const verdict = verifySpecLiteral(mutant.sig, mutant.message);
        assert.equal(verdict.ok, false);
        assert.equal(!verdict.ok && verdict.check, mutant.check, JSON.stringify(verdict));
        assert.equal(libAccepts(mutant.sig, mutant.message), false, "lib agrees");
      });
    }
  }
});

Deno.test("the wire form is read only in its exact JSON.stringify spelling", () => {
  const wire = lsag.vectors[0].signature;
  assert.equal(toWire(parseWire(wire)), wire);
  assert.throws(() => parseWire(wire.replace(":", ": ")), RangeError);
  assert.throws(() =>
    parseWire(wire.replace(/"c0":"([0-9a-f])/, (_, d) => `"c0":"${d.toUpperCase()}`))
  );
});

Deno.test("the known answers printed in protocol §2.10 are recomputed", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/protocol.md", import.meta.url));
  const section = doc.split("### 2.10")[1]?.split("\n## ")[0];
  assert.ok(section, "protocol §2.10 exists");
  const printed = new Map<string, string>();
  for (const line of section.split("\n")) {
    const row = /^\|\s*(.+?)\s*\|\s*`([^`]+)`\s*\|$/.exec(line);
    if (row) printed.set(row[1], row[2]);
  }
  const seed = fromHex(printed.get("seed") ?? "");
  const P = publicKeyOf(seed);
  const computed = new Map([
    ["seed", toHex(seed)],
    ["`privateKey` as stored (base64 of the seed)", btoa(String.fromCharCode(...seed))],
    ["`x` (scalar, little-endian)", toHex(scalarToBytes(secretOf(seed)))],
    ["`P`", toHex(P)],
    ["`Hp(P)`", toHex(Hp(P).toBytes())],
    ["`I = x·Hp(P)`", toHex(tagOf(seed))],
    [
      '`Hs(utf8("abc"))` (scalar, little-endian)',
      toHex(scalarToBytes(Hs(new TextEncoder().encode("abc")))),
    ],
  ]);
  assert.deepEqual([...printed.keys()].sort(), [...computed.keys()].sort());
  for (const [label, value] of computed) assert.equal(printed.get(label), value, label);
  assert.equal(toHex(seed), rfc8032.vectors[0].seed, "the key is RFC 8032 TEST 1");
  assert.equal(toHex(P), rfc8032.vectors[0].publicKey);
});
