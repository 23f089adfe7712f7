import assert from "node:assert/strict";
import fc from "fast-check";
import { ed25519 } from "@noble/curves/ed25519.js";
import { mulAddUnsafe } from "@noble/curves/abstract/curve.js";
import { G, L } from "../../lib/protocol/keys.ts";
import {
  COMB_BYTES,
  combFromBytes,
  combTable,
  combToBytes,
  multiplyByComb,
  multiplyByCombs,
  NARROW_COMB_BYTES,
  NARROW_TEETH,
} from "../../lib/protocol/comb_table.ts";
import { hostilePoints } from "../helpers/ledger_fixtures.ts";
import { hexToBytes } from "../../lib/protocol/bytes.ts";

const P = G.multiply(0x5eed_c0ffee_1234_5678n);
const LIMIT = 1n << 255n;
const scalar255 = fc.bigInt({ min: 0n, max: LIMIT - 1n });
/** s·point for any s ≥ 0 by noble's own multi-scalar code, which accepts scalars above L. */
const reference = (point: typeof P, s: bigint) =>
  s === 0n ? ed25519.Point.ZERO : mulAddUnsafe(ed25519.Point, [point], [s], true);

Deno.test("comb multiplication agrees with noble for any scalar below 2^255", () => {
  const comb = combTable(P);
  fc.assert(
    fc.property(scalar255, (s) => multiplyByComb(comb, s).equals(reference(P, s))),
    { numRuns: 60 },
  );
});

Deno.test("a comb left in projective form walks to the same products as its affine form", () => {
  const [affine, projective] = [combTable(P), combTable(P, { affine: false })];
  assert.ok(projective.entries.some((entry) => entry.Z !== 1n), "entries keep their Z");
  assert.ok(affine.entries.every((entry) => entry.Z === 1n));
  fc.assert(
    fc.property(
      scalar255,
      scalar255,
      (s, t) =>
        multiplyByComb(projective, s).equals(multiplyByComb(affine, s)) &&
        multiplyByCombs(affine, s, projective, t).equals(reference(P, s + t)),
    ),
    { numRuns: 30 },
  );
});

Deno.test("comb edge scalars: 0, 1, L-1, L, one bit in each row, 2^255-1", () => {
  const comb = combTable(P);
  assert.ok(multiplyByComb(comb, 0n).is0());
  assert.ok(multiplyByComb(comb, 1n).equals(P));
  assert.ok(multiplyByComb(comb, L - 1n).equals(P.negate()));
  assert.ok(multiplyByComb(comb, L).is0());
  for (const bit of [50n, 51n, 101n, 102n, 203n, 204n, 254n]) {
    assert.ok(multiplyByComb(comb, 1n << bit).equals(reference(P, 1n << bit)), `2^${bit}·P`);
  }
  assert.ok(multiplyByComb(comb, LIMIT - 1n).equals(reference(P, LIMIT - 1n)));
});

Deno.test("two comb walks sharing their doublings give s·P + t·Q for any scalars below 2^255", () => {
  const Q = G.multiply(0x0ddba11n);
  const [combP, combQ] = [combTable(P), combTable(Q)];
  fc.assert(
    fc.property(
      scalar255,
      scalar255,
      (s, t) => multiplyByCombs(combP, s, combQ, t).equals(reference(P, s).add(reference(Q, t))),
    ),
    { numRuns: 60 },
  );
  // One scalar zero, both zero, and columns where only the second comb has a tooth.
  assert.ok(multiplyByCombs(combP, 0n, combQ, 0n).is0());
  assert.ok(multiplyByCombs(combP, 0n, combQ, 7n).equals(reference(Q, 7n)));
  assert.ok(multiplyByCombs(combP, 1n << 254n, combQ, 0n).equals(reference(P, 1n << 254n)));
  assert.ok(multiplyByCombs(combP, L, combQ, L - 1n).equals(Q.negate()));
  assert.ok(multiplyByCombs(combP, 1n, combQ, 1n << 50n).equals(P.add(reference(Q, 1n << 50n))));
  for (const bad of [-1n, LIMIT]) {
    assert.throws(() => multiplyByCombs(combP, bad, combQ, 1n), RangeError, `first ${bad}`);
    assert.throws(() => multiplyByCombs(combP, 1n, combQ, bad), RangeError, `second ${bad}`);
  }
});

Deno.test("comb multiplication refuses scalars outside 0..2^255-1 with RangeError", () => {
  const comb = combTable(P);
  for (const bad of [-1n, LIMIT, 1n << 256n]) {
    assert.throws(() => multiplyByComb(comb, bad), RangeError, String(bad));
  }
  assert.throws(() => multiplyByComb(comb, 5 as unknown as bigint), RangeError);
});

Deno.test("a comb survives its stored bytes, and its walk of L exposes a torsion component", () => {
  const comb = combTable(P);
  const bytes = combToBytes(comb);
  assert.equal(bytes.length, COMB_BYTES);
  // Entry 1 is P: its y is P's encoding without the sign bit, and x's parity is that bit.
  const encoded = P.toBytes();
  assert.deepEqual(bytes.slice(32, 63), encoded.slice(0, 31));
  assert.equal(bytes[63], encoded[31] & 0x7f);
  assert.equal(bytes[0] & 1, encoded[31] >> 7);
  const back = combFromBytes(bytes);
  back.entries.forEach((entry, i) => assert.ok(entry.equals(comb.entries[i]), `entry ${i + 1}`));
  // At an offset inside a longer array, as a stored precomputation holds two combs.
  const padded = new Uint8Array(COMB_BYTES + 7);
  combToBytes(comb, padded, 7);
  assert.ok(combFromBytes(padded, 7).entries[30].equals(comb.entries[30]));
  assert.throws(() => combFromBytes(bytes.slice(1)), RangeError);
  assert.throws(() => combFromBytes(padded, 8), RangeError);
  assert.throws(() => combFromBytes([...bytes] as unknown as Uint8Array), RangeError);
  // The registration torsion check: L·Q through Q's comb is the identity only without torsion.
  const torsioned = ed25519.Point.fromBytes(hexToBytes(hostilePoints().torsioned));
  assert.equal(multiplyByComb(combTable(torsioned), L).is0(), false);
});

Deno.test("narrow combs (3 rows of 85 bits, and every other row count) agree with noble", () => {
  const Q = G.multiply(0x0ddba11n);
  const [narrowP, narrowQ] = [combTable(P, { teeth: NARROW_TEETH }), combTable(Q, { teeth: 3 })];
  assert.equal(narrowP.entries.length, 7);
  fc.assert(
    fc.property(
      scalar255,
      scalar255,
      (s, t) =>
        multiplyByComb(narrowP, s).equals(reference(P, s)) &&
        multiplyByCombs(narrowP, s, narrowQ, t).equals(reference(P, s).add(reference(Q, t))),
    ),
    { numRuns: 40 },
  );
  for (const s of [0n, 1n, L - 1n, L, 1n << 84n, 1n << 85n, 1n << 170n, LIMIT - 1n]) {
    assert.ok(multiplyByComb(narrowP, s).equals(reference(P, s)), `${s}·P`);
  }
  assert.ok(multiplyByComb(narrowP, L).is0(), "the torsion check walks a narrow comb too");
  const torsioned = ed25519.Point.fromBytes(hexToBytes(hostilePoints().torsioned));
  assert.equal(multiplyByComb(combTable(torsioned, { teeth: NARROW_TEETH }), L).is0(), false);
  for (let teeth = 1; teeth <= 8; teeth++) {
    const comb = combTable(P, { teeth, affine: teeth % 2 === 0 });
    assert.equal(comb.entries.length, 2 ** teeth - 1);
    assert.ok(multiplyByComb(comb, LIMIT - 1n).equals(reference(P, LIMIT - 1n)), `${teeth} rows`);
  }
  for (const teeth of [0, 9, 2.5]) {
    assert.throws(() => combTable(P, { teeth }), RangeError, String(teeth));
  }
});

Deno.test("combs of different rows are never walked together", () => {
  assert.throws(
    () => multiplyByCombs(combTable(P), 1n, combTable(P, { teeth: NARROW_TEETH }), 1n),
    RangeError,
  );
});

Deno.test("a narrow comb survives its stored bytes: 7 points, 448 bytes", () => {
  const comb = combTable(P, { teeth: NARROW_TEETH });
  const bytes = combToBytes(comb, new Uint8Array(NARROW_COMB_BYTES));
  assert.equal(NARROW_COMB_BYTES, 448);
  const back = combFromBytes(bytes, 0, NARROW_TEETH);
  back.entries.forEach((entry, i) => assert.ok(entry.equals(comb.entries[i]), `entry ${i + 1}`));
  assert.throws(() => combFromBytes(bytes.slice(1), 0, NARROW_TEETH), RangeError);
  // Read as a wide comb, 448 bytes are too few.
  assert.throws(() => combFromBytes(bytes), RangeError);
});
