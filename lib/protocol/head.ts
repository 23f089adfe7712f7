// Browser-safe. Signed block heads (protocol §4 "Signed heads"): the server's RFC 8032 Ed25519
// signature over `utf8("ringvote/v1/head") ‖ u64be(height) ‖ hash`, and fork evidence — two heads
// signed by one key at one height with different hashes — that anyone can check with the key.
//
// Verification is RFC 8032 §5.1.7 cofactorless ([s]B = R + [k]A exactly) with canonical A and R,
// s < L, and A and R torsion-free and not of small order: everything it accepts, OpenSSL and
// libsodium accept too, so fork evidence has one meaning and its signer cannot deny it.
import { ed25519 } from "@noble/curves/ed25519.js";
import { bytesToNumberLE } from "@noble/curves/utils.js";
import { assertBytes, bytesToHex, concatBytes, hexToBytes, u64be, utf8 } from "./bytes.ts";
import { sha512 } from "./hash.ts";
import { FORK_EVIDENCE_KIND, ForkEvidence, type SignedHead } from "./schemas.ts";

/** Domain label opening every signed head message. */
export const HEAD_LABEL = "ringvote/v1/head";

const labelBytes = utf8(HEAD_LABEL);

/**
 * The signed bytes `utf8("ringvote/v1/head") ‖ u64be(height) ‖ hash`. Requires `height` a
 * non-negative safe integer (RangeError) and `hash` 32 bytes (TypeError / RangeError).
 */
export function headMessage(height: number, hash: Uint8Array): Uint8Array {
  if (typeof height !== "number") throw new TypeError("height must be a number");
  if (!Number.isSafeInteger(height) || height < 0) {
    throw new RangeError(`height must be a non-negative integer, got ${height}`);
  }
  return concatBytes(labelBytes, u64be(height), assertBytes(hash, 32, "hash"));
}

/** The hex public key of the server signing key `seed` (32 bytes, RFC 8032 secret key). */
export function serverPublicKey(seed: Uint8Array): string {
  return bytesToHex(ed25519.getPublicKey(assertBytes(seed, 32, "seed")));
}

/** Hex of the RFC 8032 signature by `seed` over the head message of `height` and `hash` (hex). */
export function signHead(seed: Uint8Array, head: { height: number; hash: string }): string {
  assertBytes(seed, 32, "seed");
  const message = headMessage(head.height, hexToBytes(head.hash, 32, "hash"));
  return bytesToHex(ed25519.sign(message, seed));
}

/**
 * True when `head.head_signature` is a valid RFC 8032 signature by `key` over the head message,
 * checked by {@link verifyStrict}. False for well-formed values that do not verify (another key,
 * another height or hash, a non-canonical, torsioned or small-order key or R, s >= L); throws
 * TypeError/RangeError when `key` is not 32 bytes of hex, `hash` not 32 bytes, `head_signature`
 * not 64 bytes or `height` not a non-negative integer.
 */
export function verifyHead(key: string, head: SignedHead): boolean {
  const publicKey = hexToBytes(key, 32, "key");
  const signature = hexToBytes(head.head_signature, 64, "head_signature");
  const message = headMessage(head.height, hexToBytes(head.hash, 32, "hash"));
  return verifyStrict(signature, message, publicKey);
}

/**
 * RFC 8032 §5.1.7 cofactorless: true when [s]B = R + [k]A with k = SHA-512(R ‖ A ‖ M) mod L.
 * False when s >= L, when A or R is not a canonical encoding (§5.1.3: y < p, no x = 0 with the
 * sign bit set), or has a torsion component or small order (the identity included). Unlike
 * noble's cofactored `verify`, it refuses a torsioned R, as OpenSSL and libsodium do; it is stricter
 * than both on A. Throws TypeError/RangeError unless `signature` is 64 bytes and `publicKey` 32.
 */
export function verifyStrict(
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: Uint8Array,
): boolean {
  assertBytes(signature, 64, "signature");
  assertBytes(message, undefined, "message");
  assertBytes(publicKey, 32, "publicKey");
  const { Point } = ed25519;
  const rBytes = signature.subarray(0, 32);
  const s = bytesToNumberLE(signature.subarray(32));
  if (!Point.Fn.isValid(s)) return false;
  const r = primeOrderPoint(rBytes);
  const a = primeOrderPoint(publicKey);
  if (r === null || a === null) return false;
  const k = Point.Fn.create(bytesToNumberLE(sha512(rBytes, publicKey, message)));
  // All inputs are public, so the variable-time multiplication is fine; it also takes s or k = 0.
  return Point.BASE.multiplyUnsafe(s).equals(r.add(a.multiplyUnsafe(k)));
}

/** The point `bytes` encodes when canonical, torsion-free and not of small order; else null. */
function primeOrderPoint(bytes: Uint8Array): InstanceType<typeof ed25519.Point> | null {
  let point;
  try {
    point = ed25519.Point.fromBytes(bytes, false); // zip215 false: y < p, no negative zero
  } catch {
    return null;
  }
  return point.isSmallOrder() || !point.isTorsionFree() ? null : point;
}

/** The outcome of {@link checkForkEvidence}: proven, or why the file proves nothing. */
export type ForkCheck = { ok: true; height: number } | { ok: false; reason: string };

/**
 * Checks fork evidence as anyone can: the shape of protocol §4, both heads at one height with
 * different hashes, and both signatures valid under the evidence's key. Never throws.
 * The caller compares `evidence.key` with the server key it trusts (GET /api/server-key).
 */
export function checkForkEvidence(evidence: unknown): ForkCheck {
  const parsed = ForkEvidence.safeParse(evidence);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, reason: `Not fork evidence: ${issue.path.join(".")} ${issue.message}` };
  }
  const { key, heads: [a, b] } = parsed.data;
  if (a.height !== b.height) {
    return { ok: false, reason: `The heads are at different heights: ${a.height} and ${b.height}` };
  }
  if (a.hash === b.hash) return { ok: false, reason: "The heads name the same hash" };
  for (const [i, head] of [a, b].entries()) {
    if (!verifyHead(key, head)) {
      return { ok: false, reason: `Head ${i + 1} is not signed by key ${key}` };
    }
  }
  return { ok: true, height: a.height };
}

/** Fork evidence from two signed heads at one height, in the order given: the earlier seen first. */
export function forkEvidence(key: string, heads: [SignedHead, SignedHead]): ForkEvidence {
  const pick = ({ height, hash, head_signature }: SignedHead) => ({ height, hash, head_signature });
  return { kind: FORK_EVIDENCE_KIND, key, heads: [pick(heads[0]), pick(heads[1])] };
}
