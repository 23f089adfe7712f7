import assert from "node:assert/strict";
import fc from "fast-check";
import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { mulAddUnsafe } from "@noble/curves/abstract/curve.js";
import { G, L } from "../../lib/protocol/keys.ts";
import { multiplyByTable, pointTable } from "../../lib/protocol/point_table.ts";

const P = G.multiply(0x5eed_c0ffee_1234_5678n);
const scalar256 = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n });
/** s·point for any s ≥ 0 by noble's own multi-scalar code, which accepts scalars above L. */
const reference = (point: typeof P, s: bigint) =>
  s === 0n ? ed25519.Point.ZERO : mulAddUnsafe(ed25519.Point, [point], [s], true);

Deno.test("table multiplication agrees with noble for every window and any 256-bit scalar", () => {
  for (const window of [2, 3, 4, 5, 8]) {
    const table = pointTable(P, window);
    fc.assert(
      fc.property(scalar256, (s) => multiplyByTable(table, s).equals(reference(P, s))),
      { numRuns: 40 },
    );
  }
});

Deno.test("edge scalars: 0, 1, L-1, L, every signed-digit carry, 2^256-1", () => {
  for (const window of [2, 3, 5, 8]) {
    const table = pointTable(P, window);
    assert.ok(multiplyByTable(table, 0n).is0(), `0·P, W=${window}`);
    assert.ok(multiplyByTable(table, 1n).equals(P), `1·P, W=${window}`);
    assert.ok(multiplyByTable(table, L - 1n).equals(P.negate()), `(L-1)·P, W=${window}`);
    assert.ok(multiplyByTable(table, L).is0(), `L·P, W=${window}`);
    // All-ones windows turn into -1 digits with a carry rippling through every window.
    const allOnes = (1n << 256n) - 1n;
    assert.ok(multiplyByTable(table, allOnes).equals(reference(P, allOnes)), `W=${window}`);
    const half = 1n << BigInt(window - 1);
    for (const s of [half, half + 1n, (half << BigInt(window)) + half + 1n]) {
      assert.ok(multiplyByTable(table, s).equals(reference(P, s)), `${s}·P, W=${window}`);
    }
  }
});

Deno.test("L times a point with a small-order component is not the identity", () => {
  // This is the tag's torsion check in checkRing: L·(P + T) = L·T = 5·T for T of order 8.
  const T = ed25519.Point.fromHex(ED25519_TORSION_SUBGROUP[1]);
  const dirty = P.add(T);
  const product = multiplyByTable(pointTable(dirty, 3), L);
  assert.ok(!product.is0());
  assert.ok(product.equals(T.multiplyUnsafe(5n)));
});

Deno.test("tables refuse windows and scalars they do not cover", () => {
  assert.throws(() => pointTable(P, 1), RangeError);
  assert.throws(() => pointTable(P, 13), RangeError);
  assert.throws(() => pointTable(P, 2.5), RangeError);
  const table = pointTable(P, 4);
  assert.throws(() => multiplyByTable(table, -1n), RangeError);
  assert.throws(() => multiplyByTable(table, 1n << 256n), RangeError);
  assert.throws(() => multiplyByTable(table, 5 as unknown as bigint), RangeError);
});
