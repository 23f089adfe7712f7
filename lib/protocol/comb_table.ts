// Browser-safe. Fixed-base comb of one point: 31 points that turn k·P, for any k < 2^255, into 51
// doublings and at most 51 additions, built from noble-curves' own point addition and doubling
// (no field arithmetic here). Variable time: for public scalars only (challenges, responses, L).
//
// With TEETH = 5 and SPACING = 51, write k in 5 rows of 51 bits: k = Σ_j 2^(51·j)·k_j. The comb
// entry for a 5-bit column b is Σ_{j in b} 2^(51·j)·P, so k·P = Σ_i 2^i·entry(column i), one
// doubling per column. A registered key keeps the combs of P and Hp(P) in affine coordinates
// (lib/protocol/key_precomputation.ts): 62 points, about 4 KB, where a window-4 table of both
// takes 1,040 points. That is small enough to store with the key and read with every vote.
// The verifier also builds one for each signature's tag, which multiplies every challenge: R_i's
// two products, r_i·Hp(P_i) and c_i·I, then walk their combs together on one chain of doublings.
import { ed25519 } from "@noble/curves/ed25519.js";
import { normalizeZ } from "@noble/curves/abstract/curve.js";
import type { Point } from "./keys.ts";

/** Rows of the comb: bits of the scalar read at once per doubling. */
export const TEETH = 5;
/** Bits per row: 5 rows of 51 bits cover every scalar below 2^255, the group order L included. */
export const SPACING = 51;
/** Entries of a comb: one per nonzero 5-bit column. */
export const COMB_SIZE = (1 << TEETH) - 1;

const LIMIT = 1n << BigInt(TEETH * SPACING);

/** A point's comb: `entries[b - 1]` is Σ_{bit j of b set} 2^(51·j)·P, for b = 1..31. */
export type CombTable = { readonly entries: readonly Point[] };

/** Builds the comb of `point`: 204 doublings and 26 additions, entries normalised to Z = 1. */
export function combTable(point: Point): CombTable {
  const rows: Point[] = [point];
  for (let j = 1; j < TEETH; j++) {
    let row = rows[j - 1];
    for (let i = 0; i < SPACING; i++) row = row.double();
    rows.push(row);
  }
  const entries: Point[] = [];
  for (let b = 1; b <= COMB_SIZE; b++) {
    const low = b & -b;
    const rest = b - low;
    const row = rows[Math.log2(low)];
    entries.push(rest === 0 ? row : entries[rest - 1].add(row));
  }
  return { entries: normalizeZ(ed25519.Point, entries) };
}

/** s·P from P's comb, for 0 ≤ s < 2^255; RangeError outside that range. Variable time. */
export function multiplyByComb(comb: CombTable, scalar: bigint): Point {
  return multiplyByCombs(comb, scalar);
}

/**
 * s·P + t·Q from the combs of P and Q, for scalars 0 ≤ s, t < 2^255: both walks share one chain
 * of 50 doublings. RangeError for a scalar outside that range. Variable time.
 */
export function multiplyByCombs(...terms: [CombTable, bigint, CombTable?, bigint?]): Point {
  const [first, s, second, t] = terms;
  const columnsOfFirst = columns(s);
  const columnsOfSecond = second ? columns(t as bigint) : undefined;
  let acc = ed25519.Point.ZERO;
  let started = false;
  for (let i = SPACING - 1; i >= 0; i--) {
    if (started) acc = acc.double();
    const a = columnsOfFirst[i];
    if (a !== 0) {
      acc = started ? acc.add(first.entries[a - 1]) : first.entries[a - 1];
      started = true;
    }
    const b = columnsOfSecond?.[i] ?? 0;
    if (b !== 0) {
      acc = started ? acc.add(second!.entries[b - 1]) : second!.entries[b - 1];
      started = true;
    }
  }
  return acc;
}

/** The comb columns of `scalar`: entry i holds bit i + 51·j of the scalar as its bit j. */
function columns(scalar: bigint): Uint8Array {
  if (typeof scalar !== "bigint" || scalar < 0n || scalar >= LIMIT) {
    throw new RangeError("scalar must be a bigint in 0..2^255-1");
  }
  // Bit k of s is bits[top - k]; reading a binary string is cheaper than shifting a bigint.
  const bits = scalar.toString(2).padStart(TEETH * SPACING, "0");
  const top = TEETH * SPACING - 1;
  const out = new Uint8Array(SPACING);
  for (let i = 0; i < SPACING; i++) {
    let column = 0;
    for (let j = 0; j < TEETH; j++) {
      if (bits.charCodeAt(top - (j * SPACING + i)) === 49) column |= 1 << j;
    }
    out[i] = column;
  }
  return out;
}

/** The comb as affine coordinates x_1, y_1, …, x_31, y_31: the form kept with a registered key. */
export function combToAffine(comb: CombTable): bigint[] {
  return comb.entries.flatMap((entry) => {
    const { x, y } = entry.toAffine();
    return [x, y];
  });
}

/**
 * A comb back from {@link combToAffine}'s coordinates. They must come from storage this server
 * wrote: the points are rebuilt without a curve check, as the stored table was built from checked
 * points. RangeError for a list of the wrong length or with a non-bigint.
 */
export function combFromAffine(coordinates: readonly bigint[]): CombTable {
  if (!Array.isArray(coordinates) || coordinates.length !== 2 * COMB_SIZE) {
    throw new RangeError(`a comb has ${2 * COMB_SIZE} coordinates`);
  }
  const entries: Point[] = [];
  for (let i = 0; i < coordinates.length; i += 2) {
    const [x, y] = [coordinates[i], coordinates[i + 1]];
    if (typeof x !== "bigint" || typeof y !== "bigint") {
      throw new RangeError("comb coordinates must be bigints");
    }
    entries.push(ed25519.Point.fromAffine({ x, y }));
  }
  return { entries };
}
