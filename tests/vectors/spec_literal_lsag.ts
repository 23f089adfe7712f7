// A second, independent reading of docs/protocol.md §2: keys, Hp, the tag, Hs, the transcript
// and every verifier check, written line by line from the document and sharing no code with
// lib/. Only primitives come from noble: SHA-512, RFC 9380 hash-to-curve, point decoding,
// encoding, addition and doubling. Scalar multiplication is a plain double-and-add loop, and every
// check is spelled out in the document's order, so a reader can hold this file next to §2 and
// tick each line off. It is deliberately slow; it exists to check the vectors and lib/.
import { ed25519, ed25519_hasher } from "@noble/curves/ed25519.js";
import { sha512 } from "@noble/hashes/sha2.js";

type Point = InstanceType<typeof ed25519.Point>;

/** `G`, the Ed25519 base point (protocol §2). */
const G: Point = ed25519.Point.BASE;
/** The identity element. */
const IDENTITY: Point = ed25519.Point.ZERO;
/** `L = 2^252 + 27742317777372353535851937790883648493` (protocol §2). */
export const L = 2n ** 252n + 27742317777372353535851937790883648493n;

/** The three labels of protocol §2.2, §2.5. */
const KEY_IMAGE_DST = "ringvote/v1/key-image";
const TRANSCRIPT_LABEL = "ringvote/v1/lsag";

// ---- Encodings (protocol §2, notation) ----

/** Lowercase hex, two characters per byte; throws for anything else. */
export function fromHex(hex: string): Uint8Array {
  if (!/^([0-9a-f]{2})*$/.test(hex)) throw new RangeError(`not lowercase hex: ${hex}`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Lowercase hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** `bytes` read as an unsigned little-endian integer: byte 0 is the least significant. */
export function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = n * 256n + BigInt(bytes[i]);
  return n;
}

/** `n` as 32 little-endian bytes; requires 0 <= n < 2^256. */
export function scalarToBytes(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
}

/** `u32be(n)`: 4 bytes, most significant first. */
function u32be(n: number): Uint8Array {
  return Uint8Array.of((n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}

/** `a ‖ b ‖ …` */
function concat(...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((p) => [...p]));
}

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

// ---- Group arithmetic ----

/** `k·P` by double-and-add from the most significant bit; `0·P` is the identity. */
export function times(k: bigint, P: Point): Point {
  let acc = IDENTITY;
  for (let bit = BigInt(k.toString(2).length - 1); bit >= 0n; bit--) {
    acc = acc.double();
    if ((k >> bit) & 1n) acc = acc.add(P);
  }
  return acc;
}

// ---- §2.1 Keys ----

/** The secret scalar `x` of a 32-byte seed: SHA-512, first 32 bytes, RFC 8032 clamp, mod L. */
export function secretOf(seed: Uint8Array): bigint {
  const a = sha512(seed).slice(0, 32);
  a[0] &= 248;
  a[31] &= 127;
  a[31] |= 64;
  return littleEndian(a) % L;
}

/** `P = x·G`, encoded. */
export function publicKeyOf(seed: Uint8Array): Uint8Array {
  return times(secretOf(seed), G).toBytes();
}

// ---- §2.2 Hp, §2.3 the tag, §2.4 Hs ----

/** `Hp(P)`: RFC 9380 edwards25519_XMD:SHA-512_ELL2_RO_ of P's 32 bytes, DST ringvote/v1/key-image. */
export function Hp(P: Uint8Array): Point {
  return ed25519_hasher.hashToCurve(P, { DST: KEY_IMAGE_DST }) as Point;
}

/** `I = x·Hp(P)`. */
export function tagOf(seed: Uint8Array): Uint8Array {
  return times(secretOf(seed), Hp(publicKeyOf(seed))).toBytes();
}

/** `Hs(b)`: SHA-512 read as a 64-byte little-endian integer, mod L. */
export function Hs(b: Uint8Array): bigint {
  return littleEndian(sha512(b)) % L;
}

// ---- §2.5 The transcript ----

/** `T = utf8("ringvote/v1/lsag") ‖ u32be(n) ‖ P_0 ‖ … ‖ P_{n-1} ‖ I ‖ u32be(len(m)) ‖ m`. */
export function transcript(ring: Uint8Array[], I: Uint8Array, message: string): Uint8Array {
  const m = utf8(message);
  return concat(utf8(TRANSCRIPT_LABEL), u32be(ring.length), ...ring, I, u32be(m.length), m);
}

// ---- §2.7 Verification ----

/** A signature's fields as the wire form names them (protocol §2.9), still in hex. */
export type WireSignature = { c0: string; r: string[]; I: string; ring: string[] };

/** Accepted, or refused by the numbered check of protocol §2.7 with its reason. */
export type Verdict = { ok: true } | { ok: false; check: number; reason: string };

function refuse(check: number, reason: string): Verdict {
  return { ok: false, check, reason };
}

/**
 * Checks 3, 4 and 5 for one point: it decodes canonically (noble's strict RFC 8032 decoding, and
 * re-encoding gives the same 32 bytes back), it is not the identity, and `L·Q` is the identity.
 * Answers the point, or the number of the check that failed.
 */
function decodeGroupElement(bytes: Uint8Array): Point | 3 | 4 | 5 {
  if (bytes.length !== 32) return 3;
  let Q: Point;
  try {
    Q = ed25519.Point.fromBytes(bytes, false);
  } catch {
    return 3;
  }
  if (toHex(Q.toBytes()) !== toHex(bytes)) return 3;
  if (Q.equals(IDENTITY)) return 4;
  if (!times(L, Q).equals(IDENTITY)) return 5;
  return Q;
}

/** Check 6: 32 bytes whose little-endian value is below L. */
function canonicalScalar(bytes: Uint8Array): bigint | null {
  if (bytes.length !== 32) return null;
  const s = littleEndian(bytes);
  return s < L ? s : null;
}

/** Verifies `sig` on `message` with every check of protocol §2.7, in the document's order. */
export function verifySpecLiteral(sig: WireSignature, message: string): Verdict {
  const n = sig.ring.length;

  // Check 1: 2 ≤ n ≤ 64, one response per member.
  if (n < 2 || n > 64) return refuse(1, `ring size ${n} is outside 2..64`);
  if (sig.r.length !== n) return refuse(1, `${sig.r.length} responses for ${n} members`);

  // Check 2: members pairwise distinct.
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (sig.ring[i] === sig.ring[j]) return refuse(2, `members ${i} and ${j} are equal`);
    }
  }

  // Checks 3, 4, 5 for every P_i and for I.
  const ringBytes = sig.ring.map(fromHex);
  const P: Point[] = [];
  for (let i = 0; i < n; i++) {
    const decoded = decodeGroupElement(ringBytes[i]);
    if (typeof decoded === "number") return refuse(decoded, `ring member ${i} fails check`);
    P.push(decoded);
  }
  const tagBytes = fromHex(sig.I);
  const I = decodeGroupElement(tagBytes);
  if (typeof I === "number") return refuse(I, "the tag fails check");

  // Check 6: c0 and every r_i canonical.
  const c0 = canonicalScalar(fromHex(sig.c0));
  if (c0 === null) return refuse(6, "c0 is not a canonical scalar");
  const r: bigint[] = [];
  for (let i = 0; i < n; i++) {
    const ri = canonicalScalar(fromHex(sig.r[i]));
    if (ri === null) return refuse(6, `r_${i} is not a canonical scalar`);
    r.push(ri);
  }

  // Check 7: from c_0, L_i = r_i·G + c_i·P_i, R_i = r_i·Hp(P_i) + c_i·I,
  // c_{i+1} = Hs(T ‖ L_i ‖ R_i); accept iff c_n == c_0.
  const T = transcript(ringBytes, tagBytes, message);
  let c = c0;
  for (let i = 0; i < n; i++) {
    const Li = times(r[i], G).add(times(c, P[i]));
    const Ri = times(r[i], Hp(ringBytes[i])).add(times(c, I));
    c = Hs(concat(T, Li.toBytes(), Ri.toBytes()));
  }
  return c === c0 ? { ok: true } : refuse(7, "c_n differs from c_0: the ring does not close");
}

// ---- §2.9 Wire form ----

/**
 * Reads the wire string: exactly `JSON.stringify({c0, r, I, ring})` of lowercase hex fields.
 * Throws for anything else.
 */
export function parseWire(wire: string): WireSignature {
  const o = JSON.parse(wire);
  const sig: WireSignature = { c0: o.c0, r: o.r, I: o.I, ring: o.ring };
  const hex32 = (v: unknown) => typeof v === "string" && /^[0-9a-f]{64}$/.test(v);
  const ok = hex32(sig.c0) && hex32(sig.I) && Array.isArray(sig.r) && sig.r.every(hex32) &&
    Array.isArray(sig.ring) && sig.ring.every(hex32);
  if (!ok || JSON.stringify(sig) !== wire) throw new RangeError("not the wire form of §2.9");
  return sig;
}

/** The wire string of `sig` (protocol §2.9). */
export function toWire(sig: WireSignature): string {
  return JSON.stringify({ c0: sig.c0, r: sig.r, I: sig.I, ring: sig.ring });
}
