// Browser-safe. What the server computes once when a key is registered, so that no vote and no
// restart recomputes it: the point checks of protocol §2, Hp(P), and the combs of P and Hp(P)
// (lib/protocol/comb_table.ts) as affine coordinates in bytes, stored with the key (protocol §5).
//
// The torsion check L·P = identity is one walk over P's comb, which registration builds anyway.
import {
  COMB_BYTES,
  combBytes,
  combFromBytes,
  type CombTable,
  combTable,
  combToBytes,
  multiplyByComb,
  TEETH,
} from "./comb_table.ts";
import { assertBytes } from "./bytes.ts";
import { decodePoint, L } from "./keys.ts";
import { hashToPoint, type Member } from "./ring_signature.ts";

/** Bytes of a stored precomputation: the combs of P and of Hp(P), in that order. */
export const PRECOMPUTATION_BYTES = 2 * COMB_BYTES;

/**
 * The combs of a registered key P and of Hp(P) in their stored form (lib/protocol/comb_table.ts,
 * combToBytes): {@link PRECOMPUTATION_BYTES} bytes, entry 1 of P's comb being P itself.
 */
export type KeyPrecomputation = Uint8Array;

/** True when `value` has the current stored form: {@link PRECOMPUTATION_BYTES} bytes. */
export function isStoredPrecomputation(value: unknown): value is KeyPrecomputation {
  return value instanceof Uint8Array && value.length === PRECOMPUTATION_BYTES;
}

/**
 * Checks a public key as registration must (canonical, not the identity, torsion-free) and
 * precomputes what its votes need. Returns the reason for refusal for bytes that fail a check;
 * TypeError/RangeError only for a non-Uint8Array or a length other than 32. With `teeth` other
 * than the stored form's 5, the same with combs of those rows (an audit's narrow combs,
 * lib/client/audit/audit_keys.ts), which is not a stored precomputation.
 */
export function precomputeKey(
  bytes: Uint8Array,
  { teeth = TEETH }: { teeth?: number } = {},
): KeyPrecomputation | string {
  let pointComb: CombTable | undefined;
  const decoded = decodePoint(bytes, "key", {
    isTorsionFree(point) {
      pointComb = combTable(point, { teeth });
      return multiplyByComb(pointComb, L).is0();
    },
  });
  if (!decoded.point) return decoded.reason;
  const size = combBytes(teeth);
  const out = combToBytes(pointComb!, new Uint8Array(2 * size));
  return combToBytes(combTable(hashToPoint(bytes), { teeth }), out, size);
}

/**
 * True when `stored` is a precomputation in the current form of the key encoded by `bytes`
 * (RFC 8032 §5.1.2: y in the low 255 bits, the parity of x in the top bit): a record handed over
 * for the wrong key, or written in an earlier form, is never used for this one.
 */
export function isPrecomputationOf(stored: unknown, bytes: Uint8Array): boolean {
  assertBytes(bytes, 32, "key");
  // Entry 1 of P's comb is P.
  return isStoredPrecomputation(stored) && startsWithPoint(stored, bytes);
}

/**
 * True when the first point stored in `stored` (x at bytes 0..31, y at 32..63, as
 * comb_table.ts's pointsToBytes writes it) is the point encoded by `bytes` (RFC 8032 §5.1.2: y in
 * the low 255 bits, the parity of x in the top bit).
 */
export function startsWithPoint(stored: Uint8Array, bytes: Uint8Array): boolean {
  if (stored.length < 64) return false;
  for (let i = 0; i < 31; i++) if (stored[32 + i] !== bytes[i]) return false;
  return stored[63] === (bytes[31] & 0x7f) && (stored[0] & 1) === bytes[31] >> 7;
}

/**
 * The ring member of a stored precomputation, trusted as checked: it must come from
 * {@link precomputeKey} through this server's storage. RangeError for a malformed record.
 */
export function memberFromPrecomputation(stored: KeyPrecomputation): Member {
  if (!isStoredPrecomputation(stored)) {
    throw new RangeError(`a stored precomputation is ${PRECOMPUTATION_BYTES} bytes`);
  }
  return memberFromCombs(stored);
}

/**
 * The ring member of the combs of P and Hp(P) with `teeth` rows as {@link precomputeKey} wrote them,
 * trusted as checked. RangeError when they are fewer bytes.
 */
export function memberFromCombs(stored: Uint8Array, teeth = TEETH): Member {
  const combs = {
    point: combFromBytes(stored, 0, teeth),
    hp: combFromBytes(stored, combBytes(teeth), teeth),
  };
  return { point: combs.point.entries[0], hp: combs.hp.entries[0], combs };
}
