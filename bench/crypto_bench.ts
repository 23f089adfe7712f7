// Key generation, signing and verification against the straightforward baseline, by ring size.
//   deno bench -A bench/crypto_bench.ts
// Read the "summary" blocks: each reports lib/ relative to the baseline of the same group.
import assert from "node:assert/strict";
import { generateSeed, keyPairFromSeed } from "../lib/protocol/keys.ts";
import { bytesToHex } from "../lib/protocol/bytes.ts";
import {
  type KeyPrecomputation,
  memberFromPrecomputation,
  precomputeKey,
} from "../lib/protocol/key_precomputation.ts";
import { type Member, signRing, verifyRing } from "../lib/protocol/ring_signature.ts";
import { baselineSign, baselineVerify } from "./baseline_lsag.ts";
import { ringFixture } from "./ring_fixture.ts";

/** The ring's members decoded from their stored precomputations, as a verification does. */
function knownMembers(ring: Uint8Array[], stored: KeyPrecomputation[]): Map<string, Member> {
  return new Map(ring.map((p, i) => [bytesToHex(p), memberFromPrecomputation(stored[i])]));
}

Deno.bench("keygen: seed → RFC 8032 key pair", () => {
  keyPairFromSeed(generateSeed());
});

for (const n of [2, 8, 32, 128]) {
  const { ring, seed, message } = ringFixture(n);
  const maxRing = 128;
  const sig = signRing({ ring, seed, message, maxRing });
  const base = baselineSign(ring, seed, message);
  // Both implementations must accept each other's signatures, or the comparison is meaningless.
  assert.ok(baselineVerify(sig, message) && verifyRing(base, message, { maxRing }));

  Deno.bench(`sign ring ${n} (baseline)`, { group: `sign ${n}`, baseline: true }, () => {
    baselineSign(ring, seed, message);
  });
  Deno.bench(`sign ring ${n}`, { group: `sign ${n}` }, () => {
    signRing({ ring, seed, message, maxRing });
  });
  Deno.bench(`verify ring ${n} (baseline)`, { group: `verify ${n}`, baseline: true }, () => {
    baselineVerify(sig, message);
  });
  Deno.bench(`verify ring ${n}`, { group: `verify ${n}` }, () => {
    verifyRing(sig, message, { maxRing });
  });
  // The server's configuration: members decoded from the combs stored at registration.
  const stored = ring.map((p) => precomputeKey(p) as KeyPrecomputation);
  assert.ok(verifyRing(sig, message, { maxRing, members: knownMembers(ring, stored) }));
  Deno.bench(`verify ring ${n} (stored combs)`, { group: `verify ${n}` }, () => {
    verifyRing(sig, message, { maxRing, members: knownMembers(ring, stored) });
  });
}
