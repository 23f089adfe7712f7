// The straightforward LSAG every Ringvote figure is measured against: protocol §2 written the
// obvious way with noble-curves — separate multiplyUnsafe products added together, Hp recomputed
// for every member, the whole transcript rehashed per challenge, no caches or tables. It produces
// and accepts the same signatures as lib/protocol/ring_signature.ts (bench/crypto_bench.ts checks that).
import { ed25519 } from "@noble/curves/ed25519.js";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import { concatBytes } from "../lib/protocol/bytes.ts";
import { sha512 } from "../lib/protocol/hash.ts";
import { keyPairFromSeed, L } from "../lib/protocol/keys.ts";
import { hashToPoint, type RingSignature, transcript } from "../lib/protocol/ring_signature.ts";

const G = ed25519.Point.BASE;
const hs = (...parts: Uint8Array[]) => bytesToNumberLE(sha512(concatBytes(...parts))) % L;
const randomScalar = () => bytesToNumberLE(crypto.getRandomValues(new Uint8Array(64))) % L;

/** Straightforward signer: same output distribution as signRing. */
export function baselineSign(ring: Uint8Array[], seed: Uint8Array, message: string): RingSignature {
  const n = ring.length;
  const { secret: x, publicKey } = keyPairFromSeed(seed);
  const pi = ring.findIndex((p) => p.every((b, i) => b === publicKey[i]));
  const points = ring.map((p) => ed25519.Point.fromBytes(p));
  const tagPoint = hashToPoint(ring[pi]).multiply(x);
  const t = transcript(ring, tagPoint.toBytes(), message);
  const c = new Array<bigint>(n);
  const r = new Array<bigint>(n);
  const alpha = (randomScalar() % (L - 1n)) + 1n;
  c[(pi + 1) % n] = hs(
    t,
    G.multiply(alpha).toBytes(),
    hashToPoint(ring[pi]).multiply(alpha).toBytes(),
  );
  for (let k = 1; k < n; k++) {
    const i = (pi + k) % n;
    r[i] = randomScalar();
    const li = G.multiplyUnsafe(r[i]).add(points[i].multiplyUnsafe(c[i]));
    const ri = hashToPoint(ring[i]).multiplyUnsafe(r[i]).add(tagPoint.multiplyUnsafe(c[i]));
    c[(i + 1) % n] = hs(t, li.toBytes(), ri.toBytes());
  }
  r[pi] = (((alpha - c[pi] * x) % L) + L) % L;
  const le = (s: bigint) => numberToBytesLE(s, 32);
  return { c0: le(c[0]), r: r.map(le), tag: tagPoint.toBytes(), ring };
}

/** Straightforward verifier with the same group checks as checkRing, no caches. */
export function baselineVerify(sig: RingSignature, message: string): boolean {
  const points = sig.ring.map((p) => ed25519.Point.fromBytes(p));
  const tagPoint = ed25519.Point.fromBytes(sig.tag);
  if ([...points, tagPoint].some((p) => p.is0() || !p.isTorsionFree())) return false;
  const c0 = bytesToNumberLE(sig.c0);
  const rs = sig.r.map(bytesToNumberLE);
  if (c0 >= L || rs.some((s) => s >= L)) return false;
  const t = transcript(sig.ring, sig.tag, message);
  let c = c0;
  for (let i = 0; i < sig.ring.length; i++) {
    const li = G.multiplyUnsafe(rs[i]).add(points[i].multiplyUnsafe(c));
    const ri = hashToPoint(sig.ring[i]).multiplyUnsafe(rs[i]).add(tagPoint.multiplyUnsafe(c));
    c = hs(t, li.toBytes(), ri.toBytes());
  }
  return c === c0;
}

/**
 * The straightforward verifier's single-thread rate in verifications/s over `votes` (each must
 * verify): the fastest of `rounds` passes over the whole sample, the pass least disturbed by the
 * rest of the machine. A faster baseline only lowers the ratios reported against it.
 */
export function baselineRate(
  votes: { signature: RingSignature; payload: string }[],
  rounds = 3,
): number {
  let best = Infinity;
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    for (const { signature, payload } of votes) {
      if (!baselineVerify(signature, payload)) throw new Error("The baseline refused a vote");
    }
    best = Math.min(best, performance.now() - started);
  }
  return votes.length / (best / 1000);
}
