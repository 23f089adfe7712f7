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
//
// A narrow comb (NARROW_TEETH = 3 rows of 85 bits) has 7 entries: 85 doublings and at most 85
// additions per product, in 448 bytes. An audit of a directory too large for wide combs keeps
// narrow ones (lib/client/audit/audit_keys.ts): a quarter of the bytes for 1.5× the time.
import { ed25519 } from "@noble/curves/ed25519.js";
import { normalizeZ } from "@noble/curves/abstract/curve.js";
import type { Point } from "./keys.ts";

/** Rows of the comb: bits of the scalar read at once per doubling. */
export const TEETH = 5;
/** Bits per row: 5 rows of 51 bits cover every scalar below 2^255, the group order L included. */
export const SPACING = 51;
/** Entries of a comb: one per nonzero 5-bit column. */
export const COMB_SIZE = (1 << TEETH) - 1;
/** Rows of a narrow comb: 3 rows of 85 bits, 7 entries. */
export const NARROW_TEETH = 3;

/** Scalars a comb multiplies by: below 2^255, whatever its rows. */
const LIMIT = 1n << 255n;

/**
 * A point's comb of T rows (T = log2(entries + 1)) of S = ⌈255/T⌉ bits: `entries[b - 1]` is
 * Σ_{bit j of b set} 2^(S·j)·P, for b = 1..2^T - 1.
 */
export type CombTable = { readonly entries: readonly Point[] };

/** Rows and bits per row of a comb of `teeth` rows (1..8). */
function shape(teeth: number): { teeth: number; spacing: number } {
  if (!Number.isInteger(teeth) || teeth < 1 || teeth > 8) {
    throw new RangeError(`a comb has 1..8 rows, got ${teeth}`);
  }
  return { teeth, spacing: Math.ceil(255 / teeth) };
}

/** The rows of a comb: log2 of its entries plus one. */
export const teethOf = (comb: CombTable): number => Math.log2(comb.entries.length + 1);

/**
 * Builds the comb of `point` with `teeth` rows (5 by default: 204 doublings and 26 additions),
 * entries normalised to Z = 1 (one shared field inversion), as storing them needs.
 * `{ affine: false }` skips the normalisation for a comb that is only walked (noble's addition
 * costs the same whatever Z is).
 */
export function combTable(point: Point, { affine = true, teeth = TEETH } = {}): CombTable {
  const { spacing } = shape(teeth);
  const rows: Point[] = [point];
  for (let j = 1; j < teeth; j++) {
    let row = rows[j - 1];
    for (let i = 0; i < spacing; i++) row = row.double();
    rows.push(row);
  }
  const entries: Point[] = [];
  for (let b = 1; b < 1 << teeth; b++) {
    const low = b & -b;
    const rest = b - low;
    const row = rows[Math.log2(low)];
    entries.push(rest === 0 ? row : entries[rest - 1].add(row));
  }
  return { entries: affine ? normalizeZ(ed25519.Point, entries) : entries };
}

/** s·P from P's comb, for 0 ≤ s < 2^255; RangeError outside that range. Variable time. */
export function multiplyByComb(comb: CombTable, scalar: bigint): Point {
  return multiplyByCombs(comb, scalar);
}

/**
 * s·P + t·Q from the combs of P and Q, for scalars 0 ≤ s, t < 2^255: both walks share one chain
 * of doublings (50 with wide combs). RangeError for a scalar outside that range, or for combs of
 * different rows. Variable time.
 */
export function multiplyByCombs(...terms: [CombTable, bigint, CombTable?, bigint?]): Point {
  const [first, s, second, t] = terms;
  const { teeth, spacing } = shape(teethOf(first));
  if (second && second.entries.length !== first.entries.length) {
    throw new RangeError("two combs walked together must have the same rows");
  }
  const columnsOfFirst = columns(s, teeth, spacing);
  const columnsOfSecond = second ? columns(t as bigint, teeth, spacing) : undefined;
  let acc = ed25519.Point.ZERO;
  let started = false;
  for (let i = spacing - 1; i >= 0; i--) {
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

/** The comb columns of `scalar`: entry i holds bit i + spacing·j of the scalar as its bit j. */
function columns(scalar: bigint, teeth: number, spacing: number): Uint8Array {
  if (typeof scalar !== "bigint" || scalar < 0n || scalar >= LIMIT) {
    throw new RangeError("scalar must be a bigint in 0..2^255-1");
  }
  // Bit k of s is bits[top - k]; reading a binary string is cheaper than shifting a bigint.
  const bits = scalar.toString(2).padStart(teeth * spacing, "0");
  const top = teeth * spacing - 1;
  const out = new Uint8Array(spacing);
  for (let i = 0; i < spacing; i++) {
    let column = 0;
    for (let j = 0; j < teeth; j++) {
      if (bits.charCodeAt(top - (j * spacing + i)) === 49) column |= 1 << j;
    }
    out[i] = column;
  }
  return out;
}

/** Bytes of a comb of `teeth` rows in its stored form: its points, each x then y, 32 bytes each. */
export const combBytes = (teeth: number): number => ((1 << shape(teeth).teeth) - 1) * 64;
/** Bytes of a comb in its stored form: 31 points. */
export const COMB_BYTES = combBytes(TEETH);
/** Bytes of a narrow comb in the same form: 7 points. */
export const NARROW_COMB_BYTES = combBytes(NARROW_TEETH);

/** Bytes of a coordinate mod p (p < 2^255) in the stored form. */
const COORDINATE_BYTES = 32;
const WORD = (1n << 64n) - 1n;

/**
 * The comb in the form kept with a registered key: the affine x and y of entries 1..31, each 32
 * bytes little-endian (RFC 8032's integer encoding, without its sign bit), written at `offset` of
 * `out` (a new array of {@link COMB_BYTES} by default).
 */
export function combToBytes(
  comb: CombTable,
  out: Uint8Array<ArrayBuffer> = new Uint8Array(COMB_BYTES),
  offset = 0,
): Uint8Array<ArrayBuffer> {
  return pointsToBytes(comb.entries, out, offset);
}

/**
 * Points in the comb's stored form, each its affine x then y, 32 bytes little-endian, written at
 * `offset` of `out`.
 */
export function pointsToBytes<T extends Uint8Array>(
  points: readonly Point[],
  out: T,
  offset = 0,
): T {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  points.forEach((entry, i) => {
    const { x, y } = entry.toAffine();
    [x, y].forEach((coordinate, k) => {
      const at = offset + (2 * i + k) * COORDINATE_BYTES;
      for (let word = 0; word < 4; word++) {
        view.setBigUint64(at + 8 * word, (coordinate >> BigInt(64 * word)) & WORD, true);
      }
    });
  });
  return out;
}

/**
 * A comb of `teeth` rows back from {@link combToBytes}' form, read from `offset` of `bytes`. They
 * must come from storage this server wrote: the points are rebuilt without a curve check, as the
 * stored comb was built from checked points. RangeError when fewer than its bytes
 * ({@link COMB_BYTES} for a wide comb) follow `offset`.
 */
export function combFromBytes(bytes: Uint8Array, offset = 0, teeth = TEETH): CombTable {
  return { entries: pointsFromBytes(bytes, offset, combBytes(teeth) / 64) };
}

/**
 * `count` points back from {@link pointsToBytes}' form, read from `offset` of `bytes`, without a
 * curve check: they must have been written from checked points. RangeError when fewer bytes follow
 * `offset`.
 */
export function pointsFromBytes(bytes: Uint8Array, offset: number, count: number): Point[] {
  const length = count * 2 * COORDINATE_BYTES;
  if (!(bytes instanceof Uint8Array) || bytes.length - offset < length || offset < 0) {
    throw new RangeError(`${count} stored points are ${length} bytes`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, length);
  const read = (at: number) =>
    view.getBigUint64(at, true) | (view.getBigUint64(at + 8, true) << 64n) |
    (view.getBigUint64(at + 16, true) << 128n) | (view.getBigUint64(at + 24, true) << 192n);
  const points: Point[] = [];
  for (let at = 0; at < length; at += 2 * COORDINATE_BYTES) {
    points.push(ed25519.Point.fromAffine({ x: read(at), y: read(at + COORDINATE_BYTES) }));
  }
  return points;
}
