// Browser-safe. How often each registered key appears in the sealed ballots' rings, against the
// uniform expectation of a client that picks ring members uniformly from the directory (page §9),
// with Pearson's chi-square test: a small p-value says some keys are picked more often than chance
// allows, so ring selection may be biased and the rings say more than they should (protocol §8).

/** One key's use as a ring member. */
export type KeyUse = { key: string; count: number };

/** Decoy use across the whole record and the chi-square test against a uniform choice. */
export type DecoyUse = {
  /** Registered keys (the test's categories); at least the distinct keys seen in rings. */
  keyCount: number;
  /** Ring slots in all: the sum of the ring sizes. */
  slots: number;
  /** Uses per key expected under a uniform choice: slots ÷ keyCount. */
  expected: number;
  /** Pearson's statistic Σ (observed − expected)² ÷ expected, keys never used included. */
  statistic: number;
  degreesOfFreedom: number;
  /** P(χ² ≥ statistic) under a uniform choice; 1 when there is nothing to test. */
  pValue: number;
  /** False when fewer than 5 uses per key are expected, where the chi-square law is a poor fit. */
  reliable: boolean;
  /** Every key seen in a ring, most used first (then by key). */
  uses: KeyUse[];
};

/** Below this many expected uses per key the chi-square approximation is not trusted. */
export const MIN_EXPECTED_USES = 5;

/**
 * Counts each key's appearances in `rings` and tests them against a uniform choice among
 * `keyCount` registered keys (keys never used count 0). Throws RangeError for a negative or
 * non-integer `keyCount`.
 */
export function decoyUse(
  rings: readonly (readonly string[])[],
  { keyCount }: { keyCount: number },
): DecoyUse {
  if (!Number.isSafeInteger(keyCount) || keyCount < 0) {
    throw new RangeError(`keyCount must be a non-negative integer, got ${keyCount}`);
  }
  const counts = new Map<string, number>();
  let slots = 0;
  for (const ring of rings) {
    for (const key of ring) {
      counts.set(key, (counts.get(key) ?? 0) + 1);
      slots++;
    }
  }
  const categories = Math.max(keyCount, counts.size);
  const uses = [...counts].map(([key, count]) => ({ key, count }))
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1));
  if (categories < 2 || slots === 0) {
    return {
      keyCount: categories,
      slots,
      expected: categories === 0 ? 0 : slots / categories,
      statistic: 0,
      degreesOfFreedom: Math.max(0, categories - 1),
      pValue: 1,
      reliable: false,
      uses,
    };
  }
  const expected = slots / categories;
  let statistic = (categories - counts.size) * expected;
  for (const count of counts.values()) statistic += (count - expected) ** 2 / expected;
  const degreesOfFreedom = categories - 1;
  return {
    keyCount: categories,
    slots,
    expected,
    statistic,
    degreesOfFreedom,
    pValue: chiSquarePValue(statistic, degreesOfFreedom),
    reliable: expected >= MIN_EXPECTED_USES,
    uses,
  };
}

/**
 * P(X ≥ statistic) for X chi-square with `degreesOfFreedom` > 0: Q(k/2, x/2), the regularized
 * upper incomplete gamma function. Throws RangeError for a negative statistic or k ≤ 0.
 */
export function chiSquarePValue(statistic: number, degreesOfFreedom: number): number {
  if (!(degreesOfFreedom > 0)) {
    throw new RangeError(`degreesOfFreedom must be positive, got ${degreesOfFreedom}`);
  }
  if (!(statistic >= 0)) throw new RangeError(`statistic must be ≥ 0, got ${statistic}`);
  return regularizedUpperGamma(degreesOfFreedom / 2, statistic / 2);
}

const EPSILON = 1e-15;
const TINY = 1e-300;
const MAX_TERMS = 100_000;

/**
 * Q(a, x) = Γ(a, x) ÷ Γ(a) for a > 0, x ≥ 0: the power series of P = 1 − Q below x = a + 1,
 * Legendre's continued fraction (modified Lentz) above it — each converges fast on its side
 * (Numerical Recipes §6.2). Throws RangeError outside the domain.
 */
export function regularizedUpperGamma(a: number, x: number): number {
  if (!(a > 0) || !Number.isFinite(a)) throw new RangeError(`a must be positive, got ${a}`);
  if (!(x >= 0)) throw new RangeError(`x must be ≥ 0, got ${x}`);
  if (x === 0) return 1;
  if (x === Infinity) return 0;
  const logPrefix = -x + a * Math.log(x) - logGamma(a);
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < MAX_TERMS; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * EPSILON) return 1 - sum * Math.exp(logPrefix);
    }
  } else {
    let b = x + 1 - a;
    let c = 1 / TINY;
    let d = 1 / b;
    let h = d;
    for (let n = 1; n < MAX_TERMS; n++) {
      const an = -n * (n - a);
      b += 2;
      d = an * d + b;
      if (Math.abs(d) < TINY) d = TINY;
      c = b + an / c;
      if (Math.abs(c) < TINY) c = TINY;
      d = 1 / d;
      const step = d * c;
      h *= step;
      if (Math.abs(step - 1) < EPSILON) return Math.exp(logPrefix) * h;
    }
  }
  throw new RangeError(`Q(${a}, ${x}) did not converge`);
}

/** Lanczos coefficients for g = 7, n = 9 (about 15 significant digits for a > 0). */
const LANCZOS = [
  0.99999999999980993,
  676.5203681218851,
  -1259.1392167224028,
  771.32342877765313,
  -176.61502916214059,
  12.507343278686905,
  -0.13857109526572012,
  9.9843695780195716e-6,
  1.5056327351493116e-7,
];

/** ln Γ(a) for a > 0 (Lanczos approximation, with the reflection formula below 0.5). */
export function logGamma(a: number): number {
  if (a < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * a)) - logGamma(1 - a);
  const z = a - 1;
  let sum = LANCZOS[0];
  for (let i = 1; i < LANCZOS.length; i++) sum += LANCZOS[i] / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}
