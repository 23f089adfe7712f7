import assert from "node:assert/strict";
import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import {
  checkPublicKey,
  decodePoint,
  generateSeed,
  keyPairFromSeed,
  publicKeyFromPrivate,
  storedKeysFromSeed,
} from "../../lib/protocol/keys.ts";
import rfc8032 from "../vectors/rfc8032_keys.json" with { type: "json" };

Deno.test("RFC 8032 §7.1 seeds give their published public keys", () => {
  for (const v of rfc8032.vectors) {
    assert.equal(bytesToHex(keyPairFromSeed(hexToBytes(v.seed)).publicKey), v.publicKey, v.name);
  }
});

Deno.test("the secret scalar times G is the public key", () => {
  const { secret, publicKey } = keyPairFromSeed(generateSeed());
  assert.equal(ed25519.Point.BASE.multiply(secret).toHex(), bytesToHex(publicKey));
});

Deno.test("storage forms round-trip and detect a broken pair", () => {
  const seed = generateSeed();
  const stored = storedKeysFromSeed(seed);
  assert.match(stored.publicKey, /^[0-9a-f]{64}$/);
  assert.equal(publicKeyFromPrivate(stored.privateKey), stored.publicKey);
  const other = storedKeysFromSeed(generateSeed());
  assert.notEqual(publicKeyFromPrivate(other.privateKey), stored.publicKey);
});

Deno.test("publicKeyFromPrivate refuses malformed private keys", () => {
  assert.throws(() => publicKeyFromPrivate("not base64!"), RangeError);
  assert.throws(() => publicKeyFromPrivate(btoa("short")), RangeError);
});

Deno.test("generateSeed returns 32 fresh bytes", () => {
  const a = generateSeed();
  assert.equal(a.length, 32);
  assert.notDeepEqual(a, generateSeed());
});

const torsion = ED25519_TORSION_SUBGROUP.map((h) => hexToBytes(h));
const rejectedKeys = [
  { desc: "identity", bytes: hexToBytes("01".padEnd(64, "0")), reason: /identity/ },
  ...torsion.slice(1).map((bytes, i) => ({
    desc: `small-order point ${i + 1}`,
    bytes,
    reason: /small-order|identity|canonical/,
  })),
  {
    desc: "y = p (non-canonical, RFC 8032 §5.1.3)",
    bytes: hexToBytes("ed" + "ff".repeat(30) + "7f"),
    reason: /canonical/,
  },
  {
    desc: "identity with the x sign bit set (negative zero)",
    bytes: hexToBytes("01" + "00".repeat(30) + "80"),
    reason: /canonical/,
  },
  {
    desc: "y not on the curve",
    bytes: (() => {
      // y = 2 has no x on edwards25519
      const b = new Uint8Array(32);
      b[0] = 2;
      return b;
    })(),
    reason: /canonical/,
  },
  {
    desc: "a valid key plus an order-8 point",
    bytes: ed25519.Point.fromBytes(keyPairFromSeed(generateSeed()).publicKey)
      .add(ed25519.Point.fromBytes(torsion[1])).toBytes(),
    reason: /small-order/,
  },
];

Deno.test("checkPublicKey refuses every hostile encoding with its reason", async (t) => {
  for (const c of rejectedKeys) {
    await t.step(c.desc, () => assert.match(checkPublicKey(c.bytes) ?? "accepted", c.reason));
  }
  assert.equal(checkPublicKey(keyPairFromSeed(generateSeed()).publicKey), null);
});

Deno.test("decodePoint throws only for wrong types and lengths", () => {
  assert.throws(() => decodePoint(new Uint8Array(31)), RangeError);
  assert.throws(() => decodePoint("00" as unknown as Uint8Array), TypeError);
});
