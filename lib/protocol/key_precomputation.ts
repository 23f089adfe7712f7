// Browser-safe. What the server computes once when a key is registered, so that no vote and no
// restart recomputes it: the point checks of protocol §2, Hp(P), and the combs of P and Hp(P)
// (lib/protocol/comb_table.ts) in affine coordinates, stored with the key (protocol §5).
//
// The torsion check L·P = identity is one walk over P's comb, which registration builds anyway.
import {
  combFromAffine,
  type CombTable,
  combTable,
  combToAffine,
  multiplyByComb,
} from "./comb_table.ts";
import { bytesToNumberLE } from "@noble/curves/utils.js";
import { assertBytes } from "./bytes.ts";
import { decodePoint, L } from "./keys.ts";
import { hashToPoint, type Member } from "./ring_signature.ts";

/** Affine coordinates of the combs of a registered key P and of Hp(P); entry 1 is the point. */
export type KeyPrecomputation = { point: bigint[]; hp: bigint[] };

/**
 * Checks a public key as registration must (canonical, not the identity, torsion-free) and
 * precomputes what its votes need. Returns the reason for refusal for bytes that fail a check;
 * TypeError/RangeError only for a non-Uint8Array or a length other than 32.
 */
export function precomputeKey(bytes: Uint8Array): KeyPrecomputation | string {
  let pointComb: CombTable | undefined;
  const decoded = decodePoint(bytes, "key", {
    isTorsionFree(point) {
      pointComb = combTable(point);
      return multiplyByComb(pointComb, L).is0();
    },
  });
  if (!decoded.point) return decoded.reason;
  const hpComb = combTable(hashToPoint(bytes));
  return { point: combToAffine(pointComb!), hp: combToAffine(hpComb) };
}

/**
 * True when `stored` is the precomputation of the key encoded by `bytes` (RFC 8032 §5.1.2: y in
 * the low 255 bits, the parity of x in the top bit): a record handed over for the wrong key is
 * never used for this one.
 */
export function isPrecomputationOf(stored: KeyPrecomputation, bytes: Uint8Array): boolean {
  const encoded = bytesToNumberLE(assertBytes(bytes, 32, "key"));
  const y = encoded & ((1n << 255n) - 1n);
  const xOdd = encoded >> 255n;
  const [x, storedY] = stored.point;
  return storedY === y && typeof x === "bigint" && (x & 1n) === xOdd;
}

/**
 * The ring member of a stored precomputation, trusted as checked: it must come from
 * {@link precomputeKey} through this server's storage. RangeError for a malformed record.
 */
export function memberFromPrecomputation(stored: KeyPrecomputation): Member {
  const combs = { point: combFromAffine(stored.point), hp: combFromAffine(stored.hp) };
  return { point: combs.point.entries[0], hp: combs.hp.entries[0], combs };
}
