// Browser-safe. Scalar multiplication of one point by many public scalars through a table of its
// multiples, built from noble-curves' own point addition and doubling (no field arithmetic here).
//
// The table holds, for every W-bit window w, the multiples k·2^(wW)·P for k = 1..2^(W-1). A scalar
// is recoded into signed W-bit digits, so k·P for any k < 2^256 is one table addition per nonzero
// digit and no doublings. Variable time: for public scalars only (challenges, responses, L).
//
// The verifier uses it for the base point, at a window noble's constant-time table walk would
// scan slowly: r_i·G for every ring member.
import { ed25519 } from "@noble/curves/ed25519.js";
import type { Point } from "./keys.ts";

/** Largest scalar a table covers, exclusive: every 256-bit value, the group order L included. */
const LIMIT = 1n << 256n;

/** A point's window table: `entries[w·2^(W-1) + k-1]` is k·2^(wW)·P. */
export type PointTable = { readonly window: number; readonly entries: readonly Point[] };

/** Builds the width-`window` table of `point` (2 ≤ window ≤ 12): about 256/W·2^(W-1) additions. */
export function pointTable(point: Point, window: number): PointTable {
  if (!Number.isInteger(window) || window < 2 || window > 12) {
    throw new RangeError(`window must be an integer 2..12, got ${window}`);
  }
  const half = 1 << (window - 1);
  // One window more than 256/W absorbs the carry of the last signed digit.
  const windows = Math.ceil(256 / window) + 1;
  const entries: Point[] = [];
  let base = point;
  for (let w = 0; w < windows; w++) {
    let multiple = base;
    for (let k = 0; k < half; k++) {
      entries.push(multiple);
      multiple = multiple.add(base);
    }
    base = entries[entries.length - 1].double(); // 2·2^(W-1)·base: the next window's base
  }
  return { window, entries };
}

/** s·P from P's table, for 0 ≤ s < 2^256; RangeError outside that range. Variable time. */
export function multiplyByTable(table: PointTable, scalar: bigint): Point {
  if (typeof scalar !== "bigint" || scalar < 0n || scalar >= LIMIT) {
    throw new RangeError("scalar must be a bigint in 0..2^256-1");
  }
  const { window, entries } = table;
  const size = 1 << window;
  const half = size >> 1;
  const mask = BigInt(size - 1);
  const shift = BigInt(window);
  let acc = ed25519.Point.ZERO;
  let s = scalar;
  for (let w = 0; s > 0n; w++) {
    let digit = Number(s & mask);
    s >>= shift;
    if (digit > half) {
      digit -= size; // negative digit, carried into the next window
      s += 1n;
    }
    if (digit !== 0) {
      const entry = entries[w * half + Math.abs(digit) - 1];
      acc = acc.add(digit < 0 ? entry.negate() : entry);
    }
  }
  return acc;
}
