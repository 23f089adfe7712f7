import assert from "node:assert/strict";
import { bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import { checkPublicKey, generateSeed, keyPairFromSeed } from "../../lib/protocol/keys.ts";
import {
  isPrecomputationOf,
  type KeyPrecomputation,
  memberFromPrecomputation,
  PRECOMPUTATION_BYTES,
  precomputeKey,
} from "../../lib/protocol/key_precomputation.ts";
import { hashToPoint } from "../../lib/protocol/ring_signature.ts";
import { hostilePoints } from "../helpers/ledger_fixtures.ts";

Deno.test("precomputeKey refuses every hostile point with the reason registration gives", () => {
  for (const [name, hex] of Object.entries(hostilePoints())) {
    const bytes = hexToBytes(hex);
    const refused = precomputeKey(bytes);
    assert.equal(typeof refused, "string", name);
    assert.equal(refused, checkPublicKey(bytes), name);
  }
  assert.throws(() => precomputeKey(new Uint8Array(31)), RangeError);
});

Deno.test("a stored precomputation gives back the key's point and Hp(P)", () => {
  const { publicKey } = keyPairFromSeed(generateSeed());
  const pre = precomputeKey(publicKey) as KeyPrecomputation;
  assert.ok(pre instanceof Uint8Array);
  assert.equal(pre.length, PRECOMPUTATION_BYTES);
  const member = memberFromPrecomputation(structuredClone(pre));
  assert.equal(bytesToHex(member.point.toBytes()), bytesToHex(publicKey));
  assert.ok(member.hp.equals(hashToPoint(publicKey)));
  assert.ok(member.combs);
  assert.throws(() => memberFromPrecomputation(pre.slice(64)), RangeError);
  assert.throws(() => memberFromPrecomputation({} as KeyPrecomputation), RangeError);
});

Deno.test("a precomputation is recognised as its own key's only", () => {
  const [a, b] = [generateSeed(), generateSeed()].map((s) => keyPairFromSeed(s).publicKey);
  const pre = precomputeKey(a) as KeyPrecomputation;
  assert.equal(isPrecomputationOf(pre, a), true);
  assert.equal(isPrecomputationOf(pre, b), false);
  // The same y with the other sign of x is another point.
  const flipped = a.slice();
  flipped[31] ^= 0x80;
  assert.equal(isPrecomputationOf(pre, flipped), false);
  // y differing only in its top bits (the low 7 bits of byte 31), or only in byte 0.
  for (const [byte, mask] of [[31, 0x01], [31, 0x40], [0, 0x01]]) {
    const other = a.slice();
    other[byte] ^= mask;
    assert.equal(isPrecomputationOf(pre, other), false, `byte ${byte} ^ ${mask}`);
  }
  // A record in another form (an earlier release kept bigint coordinates) is not used.
  assert.equal(isPrecomputationOf({ point: [], hp: [] }, a), false);
  assert.equal(isPrecomputationOf(pre.slice(1), a), false);
  assert.equal(isPrecomputationOf(null, a), false);
});
