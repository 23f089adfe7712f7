// Browser-safe. Signed block heads (protocol §4 "Signed heads"): the server's RFC 8032 Ed25519
// signature over `utf8("ringvote/v1/head") ‖ u64be(height) ‖ hash`, and fork evidence — two heads
// signed by one key at one height with different hashes — that anyone can check with the key.
//
// Verification is strict RFC 8032 (noble's `zip215: false`): canonical encodings of the key and
// of R, s < L, and a small-order server key is refused, so one signature has one meaning.
import { ed25519 } from "@noble/curves/ed25519.js";
import { assertBytes, bytesToHex, concatBytes, hexToBytes, u64be, utf8 } from "./bytes.ts";
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
 * True when `head.head_signature` is a valid RFC 8032 signature by `key` over the head message.
 * False for well-formed values that do not verify (another key, another height or hash, a
 * non-canonical or small-order key); throws TypeError/RangeError when `key` is not 32 bytes of
 * hex, `hash` not 32 bytes, `head_signature` not 64 bytes or `height` not a non-negative integer.
 */
export function verifyHead(key: string, head: SignedHead): boolean {
  const publicKey = hexToBytes(key, 32, "key");
  const signature = hexToBytes(head.head_signature, 64, "head_signature");
  const message = headMessage(head.height, hexToBytes(head.hash, 32, "hash"));
  return ed25519.verify(signature, message, publicKey, { zip215: false });
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
