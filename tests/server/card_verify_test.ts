// The server's card signature check (server/card_verify.ts) against the strict RFC 8032 check of
// lib/protocol/head.ts on honest and hostile signatures: s + L, R with a point of order 8 added,
// R the identity (with every small-order key-less forgery), a non-canonical R, another message,
// another key. Both must answer the same, every time.
import assert from "node:assert/strict";
import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import fc from "fast-check";
import { bytesToBase64url, bytesToHex } from "../../lib/protocol/bytes.ts";
import { sha512 } from "../../lib/protocol/hash.ts";
import { cardAdmitMessage, cardKeyPair, verifyCardAdmission } from "../../lib/protocol/cards.ts";
import { createCardVerifier } from "../../server/card_verify.ts";

const L = ed25519.Point.Fn.ORDER;
const P = 2n ** 255n - 19n;
const setHash = new Uint8Array(32).fill(9);
const round = 5;

/** A signature by the card of `seed` (scalar a, key A) with nonce r and R = rB + extra. */
function crafted(
  cardSeed: Uint8Array,
  voter: Uint8Array,
  extra: InstanceType<typeof ed25519.Point>,
) {
  const { scalar, pointBytes } = ed25519.utils.getExtendedPublicKey(cardSeed);
  const r = 1234567n;
  const R = ed25519.Point.BASE.multiply(r).add(extra).toBytes();
  const message = cardAdmitMessage(setHash, round, voter);
  const k = bytesToNumberLE(sha512(R, pointBytes, message)) % L;
  const s = (r + k * scalar) % L;
  const sig = new Uint8Array(64);
  sig.set(R);
  sig.set(numberToBytesLE(s, 32), 32);
  return sig;
}

async function bothAgree(cardKey: Uint8Array, sig: Uint8Array, voter: Uint8Array) {
  const fast = createCardVerifier();
  const strict = verifyCardAdmission(cardKey, sig, setHash, round, voter);
  const answer = await fast({
    cardKey: bytesToBase64url(cardKey),
    sig: bytesToBase64url(sig),
    setHash: bytesToHex(setHash),
    roundId: round,
    voterKey: bytesToHex(voter),
  });
  assert.equal(answer, strict, bytesToHex(sig));
  return answer;
}

Deno.test("the server's card check agrees with the strict check on honest and hostile signatures", async () => {
  const card = cardKeyPair(new Uint8Array(10).fill(4));
  const voter = cardKeyPair(new Uint8Array(10).fill(5)).publicKey;
  const honest = crafted(card.seed, voter, ed25519.Point.ZERO);
  assert.equal(await bothAgree(card.publicKey, honest, voter), true);
  // s + L: the same signature, another encoding.
  const bumped = honest.slice();
  bumped.set(numberToBytesLE(bytesToNumberLE(honest.subarray(32)) + L, 32), 32);
  assert.equal(await bothAgree(card.publicKey, bumped, voter), false);
  // R plus each point of small order, s unchanged: a cofactored check would accept them.
  for (const hex of ED25519_TORSION_SUBGROUP.slice(1)) {
    const torsion = ed25519.Point.fromHex(hex);
    assert.equal(await bothAgree(card.publicKey, crafted(card.seed, voter, torsion), voter), false);
  }
  // R the identity with s = 0 and k·A = identity cannot hold for a prime-order A; refused anyway.
  const identity = new Uint8Array(64);
  identity[0] = 1;
  assert.equal(await bothAgree(card.publicKey, identity, voter), false);
  // A non-canonical R: y + p for a small y on the curve.
  const nonCanonical = honest.slice();
  const y = bytesToNumberLE(honest.subarray(0, 32)) & ((1n << 255n) - 1n);
  if (y + P < 1n << 255n) {
    nonCanonical.set(numberToBytesLE(y + P, 32), 0);
    assert.equal(await bothAgree(card.publicKey, nonCanonical, voter), false);
  }
  const identityPlusP = new Uint8Array(64);
  identityPlusP.set(numberToBytesLE(1n + P, 32), 0);
  assert.equal(await bothAgree(card.publicKey, identityPlusP, voter), false);
  // Another voter key, another card.
  const other = cardKeyPair(new Uint8Array(10).fill(6)).publicKey;
  assert.equal(await bothAgree(card.publicKey, honest, other), false);
  assert.equal(await bothAgree(other, honest, voter), false);
});

Deno.test("the server's card check agrees with the strict check on random changes of a signature", async () => {
  const card = cardKeyPair(new Uint8Array(10).fill(7));
  const voter = cardKeyPair(new Uint8Array(10).fill(8)).publicKey;
  const honest = crafted(card.seed, voter, ed25519.Point.ZERO);
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 63 }),
      fc.integer({ min: 1, max: 255 }),
      async (at, x) => {
        const changed = honest.slice();
        changed[at] ^= x;
        assert.equal(await bothAgree(card.publicKey, changed, voter), false);
      },
    ),
    { numRuns: 200 },
  );
});
