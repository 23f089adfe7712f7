/**
 * Browser-safe. Decoy use (protocol §2.8, §8.2): whether each ring looks like an honest client's
 * draw from the older keys, by a conservative test on the members in the older half.
 * @module
 */

/** One key's use as a ring member, against what honest clients would give it. */
export type KeyUse = {
  key: string;
  /** Its id in the directory; null for a key the directory does not list. */
  id: number | null;
  /** Rings it is in. */
  count: number;
  /**
   * Rings honest clients would put it in, given each ring's newest key: 1 for each ring it is the
   * newest key of, and (size − 1) ÷ (newest id − 1) for each ring whose newest key is younger.
   */
  expected: number;
};

/** Decoy use across the whole record and the test of the rings against an honest draw. */
export type DecoyUse = {
  /** Registered keys: the directory's size. */
  keyCount: number;
  /** Ring places in all: the sum of the ring sizes. */
  slots: number;
  /** Rings tested: those with a choice to make below their newest key. */
  rings: number;
  /** Members of those rings other than the newest key. */
  members: number;
  /** Of those members, how many are in the older half of the keys registered before the newest. */
  older: number;
  /** `older` expected from honest clients (the voter's own key counted as one more random one). */
  expectedOlder: number;
  /** One-sided p-value against rings leaning to older keys. */
  pOlder: number;
  /** One-sided p-value against rings leaning to newer keys. */
  pNewer: number;
  /** The two-sided p-value shown: min(1, 2 × the smaller one-sided one); 1 with nothing to test. */
  pValue: number;
  /** The way the rings lean, by the smaller one-sided p-value. */
  lean: "older" | "newer";
  /** "exact" up to {@link EXACT_MAX_RINGS} rings, "normal" (approximation) beyond. */
  method: "exact" | "normal";
  /** False below {@link MIN_TESTED_RINGS} tested rings, where only a gross bias can show. */
  reliable: boolean;
  /** Ring members the directory does not list: their rings are left out of the test. */
  unlisted: string[];
  /** Every key seen in a ring, most used first (then by id, then by key). */
  uses: KeyUse[];
};

/** Up to this many tested rings the p-values are exact; beyond, a normal approximation. */
export const EXACT_MAX_RINGS = 1000;
/** Below this many tested rings the page says the test cannot say much yet. */
export const MIN_TESTED_RINGS = 10;
/** Probability mass below this is dropped from the exact sums, and added back to every tail. */
const NEGLIGIBLE = 1e-30;

/** A count bounded in law by `shift` + Hyp(`population`, `successes`, `draws`). */
type Bound = { shift: number; population: number; successes: number; draws: number };
/** A ring's term: its members below the newest, how many are older, and the bounds on that. */
type RingTerm = {
  members: number;
  older: number;
  expectedOlder: number;
  /** The bound when the voter's own key is in the older half: the count's largest law. */
  above: Bound;
  /** The bound when it is in the newer half: the count's smallest law. */
  below: Bound;
};
/** A law on the integers `offset … offset + pmf.length − 1`. */
export type Law = { offset: number; pmf: number[] };

/**
 * Counts each key's rings and tests the rings against honest §2.8 clients. `directory` is the key
 * directory in id order (id 1 first).
 *
 * Take a ring whose newest key has id M. An honest client that signs when T keys are registered
 * draws its ring as its own key s plus a uniform set O of n − 1 other ids from 1…T (drawing s, or
 * replacing a random drawn id with it, gives exactly that). Given M: if s = M, O is a uniform
 * (n − 1)-subset of 1…M − 1; if s < M, O minus M is a uniform (n − 2)-subset of 1…M − 1 without s.
 * Either way the members below M are one member a (s, or a random one of O) and a uniform
 * (n − 2)-subset of the other M − 2 ids — whatever T, s, and the order keys were registered and
 * ballots cast, as long as a voter's moment does not depend on other rings' random draws.
 *
 * With h = ⌊(M − 1)/2⌋, the count of members in the older half 1…h is then 1{a older} plus a
 * hypergeometric count, so it lies between Hyp(M − 2, h, n − 2) (a newer) and
 * 1 + Hyp(M − 2, h − 1, n − 2) (a older) in the stochastic order. Summed over rings, each one-sided
 * p-value is taken against the bound on its side: conservative (P(p ≤ α) ≤ α) for every placement of the voters' own keys,
 * and near 1 when they fall on both sides. Rings of 2 members, and rings holding every key older
 * than their newest, carry no information and are left out.
 *
 * Throws TypeError when `directory` is not an array of strings.
 */
export function decoyUse(
  rings: readonly (readonly string[])[],
  { directory, exactMaxRings = EXACT_MAX_RINGS }: {
    directory: readonly string[];
    /** Above this many tested rings the p-values use the normal approximation. */
    exactMaxRings?: number;
  },
): DecoyUse {
  if (!Array.isArray(directory) || directory.some((k) => typeof k !== "string")) {
    throw new TypeError("directory must be an array of strings");
  }
  const idOf = new Map<string, number>();
  for (const [i, key] of directory.entries()) if (!idOf.has(key)) idOf.set(key, i + 1);
  const counts = new Map<string, number>();
  const unlisted = new Set<string>();
  // Per id: rings it is the newest key of, and the share of a ring's places each older key expects.
  const newestOf = new Float64Array(directory.length + 2);
  const shareBelow = new Float64Array(directory.length + 2);
  const terms: RingTerm[] = [];
  let slots = 0;
  for (const ring of rings) {
    const sorted: number[] = [];
    let listed = true;
    for (const key of new Set(ring)) {
      slots++;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      const id = idOf.get(key);
      if (id === undefined) {
        unlisted.add(key);
        listed = false;
      } else sorted.push(id);
    }
    if (!listed || sorted.length === 0) continue;
    sorted.sort((x, y) => x - y);
    const n = sorted.length;
    const newest = sorted[n - 1];
    newestOf[newest]++;
    if (n > 1) shareBelow[newest] += (n - 1) / (newest - 1);
    const term = ringTerm(sorted);
    if (term) terms.push(term);
  }
  // Expected uses of id k: rings it is the newest of, plus the shares of rings with a newer newest.
  const expectedOf = new Float64Array(directory.length + 2);
  for (let id = directory.length, below = 0; id >= 1; id--) {
    expectedOf[id] = newestOf[id] + below;
    below += shareBelow[id];
  }
  const uses = [...counts].map(([key, count]) => {
    const id = idOf.get(key) ?? null;
    return { key, id, count, expected: id === null ? 0 : expectedOf[id] };
  }).sort((a, b) =>
    b.count - a.count || (a.id ?? Infinity) - (b.id ?? Infinity) || (a.key < b.key ? -1 : 1)
  );
  const sum = (f: (t: RingTerm) => number) => terms.reduce((total, t) => total + f(t), 0);
  const older = sum((t) => t.older);
  const method = terms.length <= exactMaxRings ? "exact" : "normal";
  const pOlder = tail(terms.map((t) => t.above), { observed: older, method });
  const pNewer = tail(terms.map((t) => t.below), { observed: older, method, lower: true });
  return {
    keyCount: directory.length,
    slots,
    rings: terms.length,
    members: sum((t) => t.members),
    older,
    expectedOlder: sum((t) => t.expectedOlder),
    pOlder,
    pNewer,
    pValue: Math.min(1, 2 * Math.min(pOlder, pNewer)),
    lean: pOlder <= pNewer ? "older" : "newer",
    method,
    reliable: terms.length >= MIN_TESTED_RINGS,
    unlisted: [...unlisted].sort(),
    uses,
  };
}

/**
 * One ring's term of the test, from its ids in ascending order; null for a ring that carries no
 * information: fewer than 3 members, or every key older than its newest in it.
 */
function ringTerm(sorted: readonly number[]): RingTerm | null {
  const n = sorted.length;
  const older = sorted[n - 1] - 1;
  if (n < 3 || older <= n - 1) return null;
  const half = Math.floor(older / 2);
  let count = 0;
  for (let i = 0; i < n - 1; i++) if (sorted[i] <= half) count++;
  return {
    members: n - 1,
    older: count,
    expectedOlder: ((n - 1) * half) / older,
    above: { shift: 1, population: older - 1, successes: half - 1, draws: n - 2 },
    below: { shift: 0, population: older - 1, successes: half, draws: n - 2 },
  };
}

/**
 * The law of the number of successes in `draws` draws without replacement from `population` items,
 * `successes` of them successes. Requires 0 ≤ successes ≤ population and 0 ≤ draws ≤ population.
 */
export function hypergeometric(population: number, successes: number, draws: number): Law {
  const lo = Math.max(0, draws - (population - successes));
  const hi = Math.min(draws, successes);
  const pmf = [1];
  let sum = 1;
  // P(j + 1) ÷ P(j) = (S − j)(d − j) ÷ ((j + 1)(N − S − d + j + 1)), then normalised.
  for (let j = lo; j < hi; j++) {
    const next = pmf[j - lo] * (successes - j) * (draws - j) /
      ((j + 1) * (population - successes - draws + j + 1));
    pmf.push(next);
    sum += next;
  }
  return { offset: lo, pmf: pmf.map((p) => p / sum) };
}

/** P(Σ Xᵢ ≥ observed), or with `lower` P(Σ Xᵢ ≤ observed), for independent Xᵢ within `bounds`. */
function tail(
  bounds: readonly Bound[],
  { observed, method, lower = false }: {
    observed: number;
    method: "exact" | "normal";
    lower?: boolean;
  },
): number {
  if (bounds.length === 0) return 1;
  if (method === "normal") {
    let mean = 0;
    let variance = 0;
    for (const { shift, population: n, successes: s, draws: d } of bounds) {
      mean += shift + (d * s) / n;
      if (n > 1) variance += (d * (s / n) * (1 - s / n) * (n - d)) / (n - 1);
    }
    // Continuity-corrected: the sum takes integer values.
    const z = lower ? mean - observed - 0.5 : observed - 0.5 - mean;
    if (variance <= 0) return z <= 0 ? 1 : 0;
    return normalTail(z / Math.sqrt(variance));
  }
  const { offset, pmf, lost } = convolution(bounds);
  const at = observed - offset;
  let p = lost;
  if (lower) { for (let i = 0; i <= Math.min(pmf.length - 1, at); i++) p += pmf[i]; }
  else for (let i = Math.max(0, at); i < pmf.length; i++) p += pmf[i];
  return Math.min(1, p);
}

/**
 * The law of the sum of independent counts with the laws `bounds` give, entries below
 * {@link NEGLIGIBLE} dropped at either end as it is built; `lost` is the mass dropped, which bounds
 * the error of any tail read from it (tails add it, so they stay conservative).
 */
function convolution(bounds: readonly Bound[]): Law & { lost: number } {
  const size = bounds.reduce((total, b) => total + b.draws + 1, 1);
  let from = new Float64Array(size);
  let to = new Float64Array(size);
  from[0] = 1;
  let start = 0;
  let length = 1;
  let offset = 0;
  let lost = 0;
  for (const bound of bounds) {
    const law = hypergeometric(bound.population, bound.successes, bound.draws);
    const pmf = law.pmf;
    const width = length + pmf.length - 1;
    to.fill(0, 0, width);
    for (let i = 0; i < length; i++) {
      const p = from[start + i];
      for (let j = 0; j < pmf.length; j++) to[i + j] += p * pmf[j];
    }
    let first = 0;
    let end = width;
    while (first < end - 1 && to[first] < NEGLIGIBLE) lost += to[first++];
    while (end - 1 > first && to[end - 1] < NEGLIGIBLE) lost += to[--end];
    [from, to] = [to, from];
    start = first;
    length = end - first;
    offset += bound.shift + law.offset + first;
  }
  return { offset, pmf: Array.from(from.subarray(start, start + length)), lost };
}

/** P(Z ≥ z) for a standard normal Z: ½ Q(½, z²/2) above 0, its complement below. */
export function normalTail(z: number): number {
  if (Number.isNaN(z)) throw new RangeError(`z must be a number, got ${z}`);
  const half = 0.5 * regularizedUpperGamma(0.5, (z * z) / 2);
  return z >= 0 ? half : 1 - half;
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
