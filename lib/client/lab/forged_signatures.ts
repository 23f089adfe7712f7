/**
 * Browser-safe. The lab's ring-signature manipulations: the LSAG equations of protocol §2 without the
 * signer's guards, a torsioned tag (the 2017 CryptoNote flaw) and a scalar past L. Never for voting.
 * @module
 */
import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import { assertBytes, equalBytes } from "../../protocol/bytes.ts";
import { G, keyPairFromSeed, L, type Point } from "../../protocol/keys.ts";
import {
  hashToPoint,
  hashToScalar,
  type RandomBytes,
  type RingSignature,
  transcript,
} from "../../protocol/ring_signature.ts";

const defaultRandom: RandomBytes = (length) => crypto.getRandomValues(new Uint8Array(length));

/** A point of order exactly 8 (a generator of Ed25519's torsion subgroup). */
export function orderEightPoint(): Point {
  for (const hex of ED25519_TORSION_SUBGROUP) {
    const point = ed25519.Point.fromHex(hex);
    if (!point.multiply(4n).is0()) return point;
  }
  throw new Error("the torsion subgroup has no point of order 8");
}

/** A signature made by {@link signLoose}, and whether its ring equations close. */
export type LooseSignature = { signature: RingSignature; closes: boolean };

/**
 * Runs the signing equations of protocol §2 for the key of `seed` at its first position in
 * `ring`, with tag `x·Hp(P) + tagOffset`. No ring-size or distinctness guard: the verifier is
 * the one that must refuse. With a torsion offset T the signer's own equation gains c_π·T, so
 * the ring closes exactly when 8 divides c_π; `closes` says whether it did.
 */
export function signLoose(
  opts: { ring: Uint8Array[]; seed: Uint8Array; message: string; tagOffset?: Point },
  random: RandomBytes = defaultRandom,
): LooseSignature {
  const { ring, seed, message } = opts;
  const { secret: x, publicKey } = keyPairFromSeed(seed);
  const pi = ring.findIndex((p) => equalBytes(assertBytes(p, 32, "ring member"), publicKey));
  if (pi < 0) throw new RangeError("the signer's key must be in the ring");
  const n = ring.length;
  const points = ring.map((p) => ed25519.Point.fromBytes(p));
  const hp = ring.map(hashToPoint);
  const tagPoint = opts.tagOffset ? hp[pi].multiply(x).add(opts.tagOffset) : hp[pi].multiply(x);
  const tag = tagPoint.toBytes();
  const t = transcript(ring, tag, message);
  const challenge = (li: Point, ri: Point) => hashToScalar([t, li.toBytes(), ri.toBytes()]);
  const scalar = () => bytesToNumberLE(random(64)) % (L - 1n) + 1n;

  const c = new Array<bigint>(n);
  const r = new Array<bigint>(n);
  const alpha = scalar();
  c[(pi + 1) % n] = challenge(G.multiply(alpha), hp[pi].multiply(alpha));
  for (let k = 1; k < n; k++) {
    const i = (pi + k) % n;
    r[i] = scalar();
    const li = G.multiply(r[i]).add(points[i].multiply(c[i]));
    const ri = hp[i].multiply(r[i]).add(tagPoint.multiply(c[i]));
    c[(i + 1) % n] = challenge(li, ri);
  }
  r[pi] = (((alpha - c[pi] * x) % L) + L) % L;
  const signature = {
    c0: numberToBytesLE(c[0], 32),
    r: r.map((s) => numberToBytesLE(s, 32)),
    tag,
    ring: ring.map((p) => p.slice()),
  };
  return { signature, closes: opts.tagOffset === undefined || c[pi] % 8n === 0n };
}

/**
 * The CryptoNote key-image attack: signs with tag `I + T8` (T8 of order 8), signing again with
 * fresh randomness until the ring closes (1 try in 8 on average). Answers the signature and the
 * number of tries.
 */
export function signWithTorsionedTag(
  opts: { ring: Uint8Array[]; seed: Uint8Array; message: string },
  random: RandomBytes = defaultRandom,
): { signature: RingSignature; tries: number } {
  const tagOffset = orderEightPoint();
  for (let tries = 1; tries <= 1000; tries++) {
    const { signature, closes } = signLoose({ ...opts, tagOffset }, random);
    if (closes) return { signature, tries };
  }
  throw new Error("the torsioned ring did not close in 1000 tries");
}

/** `scalar + L` as 32 little-endian bytes: the same value mod L, not its canonical encoding. */
export function scalarPlusL(scalar: Uint8Array): Uint8Array {
  return numberToBytesLE(bytesToNumberLE(assertBytes(scalar, 32, "scalar")) + L, 32);
}
