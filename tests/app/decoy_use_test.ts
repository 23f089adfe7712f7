// Decoy use and the chi-square test (lib/app/decoy_use.ts): p-values against published chi-square
// tables, identities of the incomplete gamma function, and the test's verdict on uniform and on
// biased ring selections.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  chiSquarePValue,
  decoyUse,
  logGamma,
  regularizedUpperGamma,
} from "../../lib/app/decoy_use.ts";

function near(actual: number, expected: number, relative: number, what: string) {
  assert.ok(
    Math.abs(actual - expected) <= Math.abs(expected) * relative,
    `${what}: ${actual} is not within ${relative * 100}% of ${expected}`,
  );
}

Deno.test("chi-square p-values match the published upper critical values", () => {
  // NIST/SEMATECH e-Handbook of Statistical Methods, §1.3.6.7.4 "Critical values of the
  // chi-square distribution" (values to 3 decimals), upper tail α.
  const table: [df: number, critical: number, alpha: number][] = [
    [1, 3.841, 0.05],
    [1, 6.635, 0.01],
    [1, 10.828, 0.001],
    [5, 11.070, 0.05],
    [5, 15.086, 0.01],
    [10, 18.307, 0.05],
    [10, 23.209, 0.01],
    [30, 43.773, 0.05],
    [100, 124.342, 0.05],
    [100, 135.807, 0.01],
    [100, 149.449, 0.001],
  ];
  for (const [df, critical, alpha] of table) {
    near(chiSquarePValue(critical, df), alpha, 0.005, `df ${df}, χ² ${critical}`);
  }
  // Lower-tail entries of the same table: P(X ≥ x) = 1 − α_lower.
  near(chiSquarePValue(3.940, 10), 0.95, 0.001, "df 10 lower 0.05");
  near(chiSquarePValue(0.554, 5), 0.99, 0.001, "df 5 lower 0.01");
  // Beyond the table, at the size of a large directory: the Wilson–Hilferty cube-root normal
  // approximation (Abramowitz & Stegun 26.4.17), accurate to well under 1% at 20,000 df.
  const df = 20_000;
  const z = 1.6448536269514722; // upper 5% point of the standard normal
  const critical = df * (1 - 2 / (9 * df) + z * Math.sqrt(2 / (9 * df))) ** 3;
  near(chiSquarePValue(critical, df), 0.05, 0.01, "df 20000 at the 5% point");
});

Deno.test("the incomplete gamma function meets its closed forms", () => {
  near(Math.exp(logGamma(5)), 24, 1e-12, "Γ(5)");
  near(Math.exp(logGamma(0.5)), Math.sqrt(Math.PI), 1e-12, "Γ(1/2)");
  near(logGamma(10_000), 82099.71749644238, 1e-12, "ln Γ(10000)");
  assert.equal(regularizedUpperGamma(3, 0), 1);
  assert.equal(regularizedUpperGamma(3, Infinity), 0);
  fc.assert(
    fc.property(fc.double({ min: 0, max: 200, noNaN: true }), (x) => {
      // Two degrees of freedom: Q(1, x/2) = e^(−x/2); a = 2: Q = (1 + x) e^(−x).
      near(chiSquarePValue(x, 2), Math.exp(-x / 2), 1e-10, `df 2 at ${x}`);
      near(regularizedUpperGamma(2, x), (1 + x) * Math.exp(-x), 1e-10, `a 2 at ${x}`);
    }),
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 5000 }),
      fc.double({ min: 0, max: 10_000, noNaN: true }),
      fc.double({ min: 0, max: 100, noNaN: true }),
      (df, x, step) => {
        const p = chiSquarePValue(x, df);
        assert.ok(p >= 0 && p <= 1, `p ${p} in [0, 1]`);
        assert.ok(chiSquarePValue(x + step, df) <= p + 1e-12, "p falls as the statistic grows");
      },
    ),
  );
  assert.throws(() => chiSquarePValue(-1, 3), RangeError);
  assert.throws(() => chiSquarePValue(1, 0), RangeError);
  assert.throws(() => regularizedUpperGamma(0, 1), RangeError);
});

/** xorshift32 from a fixed seed: the same "random" rings on every run. */
function seeded(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s % n;
  };
}

/** `ballots` rings of 8 distinct keys out of `keyCount`; `favourite` is put in when given. */
function rings(
  { ballots, keyCount, favourite }: { ballots: number; keyCount: number; favourite?: string },
) {
  const random = seeded(12345);
  return Array.from({ length: ballots }, () => {
    const ring = new Set<string>(favourite ? [favourite] : []);
    while (ring.size < 8) ring.add(`k${random(keyCount)}`);
    return [...ring];
  });
}

Deno.test("uniformly chosen rings pass the test and a favoured key fails it", () => {
  const uniform = decoyUse(rings({ ballots: 2000, keyCount: 400 }), { keyCount: 400 });
  assert.equal(uniform.slots, 16_000);
  assert.equal(uniform.expected, 40);
  assert.equal(uniform.degreesOfFreedom, 399);
  assert.ok(uniform.reliable);
  assert.ok(uniform.pValue > 0.01, `uniform rings gave p = ${uniform.pValue}`);

  const biased = decoyUse(rings({ ballots: 2000, keyCount: 400, favourite: "k7" }), {
    keyCount: 400,
  });
  assert.deepEqual(biased.uses[0], { key: "k7", count: 2000 });
  assert.ok(biased.pValue < 1e-10, `a key in every ring gave p = ${biased.pValue}`);
});

Deno.test("keys never used count as zero uses, and small records are marked unreliable", () => {
  const use = decoyUse([["a", "b"], ["a", "c"]], { keyCount: 4 });
  assert.equal(use.expected, 1);
  // a: (2−1)², b and c: 0, d (never used): (0−1)² → 2.
  assert.equal(use.statistic, 2);
  assert.equal(use.degreesOfFreedom, 3);
  near(use.pValue, 0.5724067044708798, 1e-9, "Q(1.5, 1)");
  assert.equal(use.reliable, false);
  assert.deepEqual(use.uses, [{ key: "a", count: 2 }, { key: "b", count: 1 }, {
    key: "c",
    count: 1,
  }]);
  assert.equal(decoyUse([], { keyCount: 10 }).pValue, 1);
  assert.throws(() => decoyUse([], { keyCount: -1 }), RangeError);
});
