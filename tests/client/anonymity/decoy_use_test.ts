/**
 * Decoy use (lib/client/anonymity/decoy_use.ts) over elections simulated with seeded randomness:
 * its verdict on honest and biased clients, its exact and normal p-values, each key's expected use,
 * and the incomplete gamma function behind the normal tail.
 * @module
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  decoyUse,
  hypergeometric,
  logGamma,
  normalTail,
  regularizedUpperGamma,
} from "../../../lib/client/anonymity/decoy_use.ts";

function near(actual: number, expected: number, relative: number, what: string) {
  assert.ok(
    Math.abs(actual - expected) <= Math.abs(expected) * relative,
    `${what}: ${actual} is not within ${relative * 100}% of ${expected}`,
  );
}

/** xorshift32 from a fixed seed: a uniform integer in 0…n − 1, the same on every run. */
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

const RING = 8;

/**
 * A ring as protocol §2.8 draws it: `RING` distinct ids uniform in 1…`pool` (the whole directory,
 * `total`, for an honest client), then the signer's id in place of a random one if not drawn.
 */
function clientRing(
  random: (n: number) => number,
  { signer, total, pool = total }: { signer: number; total: number; pool?: number },
): number[] {
  assert.ok(signer <= total && pool <= total && RING <= pool);
  const drawn = new Set<number>();
  while (drawn.size < RING) drawn.add(1 + random(pool));
  if (!drawn.has(signer)) {
    drawn.delete([...drawn][random(RING)]);
    drawn.add(signer);
  }
  return [...drawn];
}

/** One event of an election: a key registers, or a registered key votes. */
type Event = "register" | { vote: number };

/**
 * The rings of an election run event by event, each drawn when its ballot is cast from the keys
 * registered then; `biased` clients draw from the oldest tenth of those keys (at least `RING`).
 */
function election(events: readonly Event[], { seed, biased = false }: {
  seed: number;
  biased?: boolean;
}): { rings: string[][]; directory: string[] } {
  const random = seeded(seed);
  const rings: string[][] = [];
  let total = 0;
  for (const event of events) {
    if (event === "register") {
      total++;
      continue;
    }
    const pool = biased ? Math.max(RING, Math.ceil(total / 10)) : total;
    const ring = clientRing(random, { signer: event.vote, total, pool });
    rings.push(ring.sort((a, b) => a - b).map(keyOf));
  }
  return { rings, directory: Array.from({ length: total }, (_, i) => keyOf(i + 1)) };
}

function keyOf(id: number): string {
  return `key-${String(id).padStart(5, "0")}`;
}

/**
 * Voters register and vote in turn: each votes right after registering, the first `RING` once
 * there are `RING` keys to draw from.
 */
function inTurn(voters: number): Event[] {
  const events: Event[] = [];
  for (let id = 1; id <= voters; id++) {
    events.push("register");
    if (id === RING) { for (let v = 1; v <= RING; v++) events.push({ vote: v }); }
    if (id > RING) events.push({ vote: id });
  }
  return events;
}

/** Every key registered first, then `order` votes. */
function registerFirst(voters: number, order: readonly number[]): Event[] {
  return [...Array<Event>(voters).fill("register"), ...order.map((vote) => ({ vote }))];
}

/** Registrations in bursts of random size, each followed by votes of random registered keys. */
function bursts(voters: number, seed: number): Event[] {
  const random = seeded(seed ^ 0x5bd1e995);
  const events: Event[] = [];
  const waiting: number[] = [];
  let total = 0;
  while (total < voters || waiting.length > 0) {
    const burst = Math.min(voters - total, 1 + random(30));
    for (let i = 0; i < burst; i++) {
      events.push("register");
      waiting.push(++total);
    }
    if (total < RING) continue;
    const votes = total === voters ? waiting.length : random(waiting.length + 1);
    for (let i = 0; i < votes; i++) {
      events.push({ vote: waiting.splice(random(waiting.length), 1)[0] });
    }
  }
  return events;
}

/** 1…n in a seeded random order. */
function shuffled(n: number, seed: number): number[] {
  const random = seeded(seed);
  const ids = Array.from({ length: n }, (_, i) => i + 1);
  for (let i = n - 1; i > 0; i--) {
    const j = random(i + 1);
    [ids[i], ids[j]] = [ids[j], ids[i]];
  }
  return ids;
}

/** The chi-square p-value of the old test: each key's uses against slots ÷ keys, for contrast. */
function uniformChiSquareP(rings: readonly string[][], keyCount: number): number {
  const counts = new Map<string, number>();
  for (const ring of rings) for (const key of ring) counts.set(key, (counts.get(key) ?? 0) + 1);
  const expected = (rings.length * RING) / keyCount;
  let statistic = (keyCount - counts.size) * expected;
  for (const count of counts.values()) statistic += (count - expected) ** 2 / expected;
  return regularizedUpperGamma((keyCount - 1) / 2, statistic / 2);
}

Deno.test("160 voters registering and voting in turn pass; the old uniform test failed them", () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const { rings, directory } = election(inTurn(160), { seed });
    const use = decoyUse(rings, { directory });
    assert.equal(use.method, "exact");
    assert.equal(use.rings, 160 - RING, "the first 8 rings hold every key there was");
    assert.ok(use.pValue >= 0.001, `seed ${seed}: honest in-turn voters gave p = ${use.pValue}`);
    // The old statistic: early keys sit in far more rings than late ones, so a uniform choice
    // over today's directory is rejected out of hand although every client was honest.
    const old = uniformChiSquareP(rings, directory.length);
    assert.ok(old < 1e-20, `seed ${seed}: the old test gave p = ${old}`);
    if (seed === 1) console.log(`in turn, 160 voters: p = ${use.pValue}, old test p = ${old}`);
  }
});

Deno.test("a client drawing from the oldest tenth of the keys is flagged", () => {
  for (const seed of [1, 2, 3]) {
    const inTurnRecord = election(inTurn(160), { seed, biased: true });
    const turn = decoyUse(inTurnRecord.rings, { directory: inTurnRecord.directory });
    assert.ok(turn.pValue < 0.01, `seed ${seed}: biased in-turn voters gave p = ${turn.pValue}`);
    assert.equal(turn.lean, "older");
    const first = election(registerFirst(160, shuffled(160, seed)), { seed, biased: true });
    const all = decoyUse(first.rings, { directory: first.directory });
    assert.ok(all.pValue < 0.01, `seed ${seed}: biased voters gave p = ${all.pValue}`);
    if (seed === 1) console.log(`biased, in turn: p = ${turn.pValue}; all first: ${all.pValue}`);
  }
  // Small elections too: 40 voters in turn.
  const small = election(inTurn(40), { seed: 9, biased: true });
  assert.ok(decoyUse(small.rings, { directory: small.directory }).pValue < 0.01);
});

Deno.test("rings drawn from the newest keys only are flagged the other way", () => {
  // A client that takes its decoys among the 20 keys registered last.
  const random = seeded(77);
  const rings: string[][] = [];
  for (let signer = 1; signer <= 150; signer++) {
    const decoys = new Set<number>();
    while (decoys.size < RING - 1) {
      const id = 181 + random(20);
      if (id !== signer) decoys.add(id);
    }
    rings.push([signer, ...decoys].map(keyOf));
  }
  const use = decoyUse(rings, { directory: Array.from({ length: 200 }, (_, i) => keyOf(i + 1)) });
  assert.ok(use.pValue < 1e-6, `p = ${use.pValue}`);
  assert.equal(use.lean, "newer");
});

/** The scenarios of the property test: `kind` chooses how keys register and ballots are cast. */
function scenario(kind: number, voters: number, seed: number): Event[] {
  switch (kind) {
    case 0:
      return inTurn(voters);
    case 1:
      return registerFirst(voters, shuffled(voters, seed));
    case 2:
      return bursts(voters, seed);
    case 3:
      // The oldest third of the keys vote, the rest never do: each voter's own key sits in the
      // older half below its ring's newest key, where the test's bound is tight.
      return registerFirst(voters * 3, Array.from({ length: voters }, (_, i) => i + 1));
    default:
      // The newest keys vote, in order, after everyone registered: the voter's key sits high.
      return registerFirst(voters * 2, Array.from({ length: voters }, (_, i) => voters + i + 1));
  }
}

Deno.test("honest clients are not flagged whatever the registration order", () => {
  let small = 0;
  let runs = 0;
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 4 }),
      fc.integer({ min: 20, max: 160 }),
      fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      (kind, voters, seed) => {
        const { rings, directory } = election(scenario(kind, voters, seed), { seed });
        const use = decoyUse(rings, { directory });
        assert.ok(use.pValue >= 0 && use.pValue <= 1);
        assert.ok(
          use.pValue >= 1e-4,
          `kind ${kind}, ${voters} voters, seed ${seed}: ${use.pValue}`,
        );
        runs++;
        if (use.pValue < 0.05) small++;
      },
    ),
    { seed: 20261123, numRuns: 200 },
  );
  console.log(`${small} of ${runs} honest elections gave p < 0.05`);
  assert.ok(small / runs <= 0.08, `${small} of ${runs} honest elections gave p < 0.05`);
});

Deno.test("where the bound is tight, p is still valid: at most 5% of honest elections below 0.05", () => {
  // The oldest 80 of 200 keys vote: the voter's own key is always in the older half, the worst
  // case the older-side p-value allows for, so that p-value is close to uniform — but not below.
  let small = 0;
  const runs = 400;
  for (let seed = 1; seed <= runs; seed++) {
    const { rings, directory } = election(scenario(3, 80, seed), { seed });
    if (decoyUse(rings, { directory }).pOlder < 0.05) small++;
  }
  console.log(`tight case: ${small} of ${runs} gave p(older) < 0.05`);
  assert.ok(small / runs <= 0.05 + 2 * Math.sqrt(0.05 * 0.95 / runs), `${small} of ${runs}`);
  assert.ok(small > 0, "the bound is tight: some honest elections come near 0.05");
});

Deno.test("the normal approximation agrees with the exact sums on a large record", () => {
  const { rings, directory } = election(scenario(3, 1200, 2), { seed: 2 });
  const exact = decoyUse(rings, { directory, exactMaxRings: Infinity });
  const normal = decoyUse(rings, { directory, exactMaxRings: 0 });
  assert.equal(exact.method, "exact");
  assert.equal(normal.method, "normal");
  assert.equal(decoyUse(rings, { directory }).method, "normal", "over 1,000 rings by default");
  assert.ok(Math.abs(exact.pOlder - normal.pOlder) < 1e-4, `${exact.pOlder} ${normal.pOlder}`);
  assert.ok(Math.abs(exact.pNewer - normal.pNewer) < 1e-4, `${exact.pNewer} ${normal.pNewer}`);
  assert.ok(exact.pOlder > 0.01 && exact.pOlder < 0.99, `a p-value inside (0, 1): ${exact.pOlder}`);
});

Deno.test("a small record tested exactly by hand", () => {
  // Keys 1…10. Ring {1, 2, 10}: newest 10, 9 older keys, older half 1…4; both members below 10
  // are in it. Ring {1, 2, 3}: every key older than 3 is in it, nothing to test.
  const directory = Array.from({ length: 10 }, (_, i) => keyOf(i + 1));
  const use = decoyUse([[1, 2, 10].map(keyOf), [3, 1, 2].map(keyOf)], { directory });
  assert.equal(use.rings, 1);
  assert.equal(use.members, 2);
  assert.equal(use.older, 2);
  near(use.expectedOlder, (2 * 4) / 9, 1e-12, "2 members × 4 ÷ 9");
  // Older side: 1 + (one draw from 8 ids, 3 of them older): P(≥ 2) = 3/8. Newer side: one draw
  // from 8 ids, 4 older, P(≤ 2) = 1.
  near(use.pOlder, 3 / 8, 1e-12, "p(older)");
  assert.equal(use.pNewer, 1);
  near(use.pValue, 3 / 4, 1e-12, "two-sided");
  assert.equal(use.reliable, false);
  assert.equal(use.slots, 6);
  // Expected uses: 10 is the newest of its ring (1); 3 too (1), each key below 3 gets 2 ÷ 2 from
  // that ring, and each key below 10 gets 2 ÷ 9 from the first.
  const expected = new Map(use.uses.map((u) => [u.id, u.expected]));
  near(expected.get(10)!, 1, 1e-12, "key 10");
  near(expected.get(3)!, 1 + 2 / 9, 1e-12, "key 3");
  near(expected.get(1)!, 1 + 2 / 9, 1e-12, "key 1");
  assert.deepEqual(use.uses.map((u) => [u.id, u.count]), [[1, 2], [2, 2], [3, 1], [10, 1]]);
});

Deno.test("expected uses add up to the ring places, and keys outside the directory are named", () => {
  const { rings, directory } = election(bursts(120, 3), { seed: 3 });
  const use = decoyUse(rings, { directory });
  const seen = use.uses.reduce((sum, u) => sum + u.expected, 0);
  assert.ok(seen <= use.slots + 1e-9);
  assert.equal(use.uses.reduce((sum, u) => sum + u.count, 0), use.slots);
  const strangers = decoyUse([...rings, ["stranger", keyOf(1), keyOf(2)]], { directory });
  assert.deepEqual(strangers.unlisted, ["stranger"]);
  assert.equal(strangers.rings, use.rings, "the ring with a stranger is left out of the test");
  assert.equal(strangers.uses.find((u) => u.key === "stranger")?.id, null);
  assert.equal(decoyUse([], { directory }).pValue, 1);
  assert.throws(() => decoyUse([], { directory: [1] as unknown as string[] }), TypeError);
});

Deno.test("hypergeometric laws sum to one and have the textbook mean", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 500 }).chain((n) =>
        fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }), fc.integer({ min: 0, max: n }))
      ),
      ([population, successes, draws]) => {
        const { offset, pmf } = hypergeometric(population, successes, draws);
        const total = pmf.reduce((a, b) => a + b, 0);
        near(total, 1, 1e-12, "total");
        const mean = pmf.reduce((sum, p, i) => sum + (offset + i) * p, 0);
        assert.ok(Math.abs(mean - (draws * successes) / population) < 1e-9, `mean ${mean}`);
      },
    ),
    { seed: 7 },
  );
  // C(4,2)·C(6,1) ÷ C(10,3) = 36 ÷ 120.
  const { offset, pmf } = hypergeometric(10, 4, 3);
  near(pmf[2 - offset], 36 / 120, 1e-12, "P(2)");
});

Deno.test("the normal tail and the incomplete gamma function meet their closed forms", () => {
  // Standard normal upper tail (Abramowitz & Stegun table 26.1).
  near(normalTail(1.959963984540054), 0.025, 1e-9, "z 1.96");
  near(normalTail(3.090232306167813), 0.001, 1e-9, "z 3.09");
  near(normalTail(-1), 0.8413447460685429, 1e-12, "z −1");
  assert.equal(normalTail(0), 0.5);
  near(Math.exp(logGamma(5)), 24, 1e-12, "Γ(5)");
  near(Math.exp(logGamma(0.5)), Math.sqrt(Math.PI), 1e-12, "Γ(1/2)");
  near(logGamma(10_000), 82099.71749644238, 1e-12, "ln Γ(10000)");
  assert.equal(regularizedUpperGamma(3, 0), 1);
  assert.equal(regularizedUpperGamma(3, Infinity), 0);
  fc.assert(
    fc.property(fc.double({ min: 0, max: 200, noNaN: true }), (x) => {
      // Q(1, x) = e^(−x); Q(2, x) = (1 + x) e^(−x).
      near(regularizedUpperGamma(1, x), Math.exp(-x), 1e-10, `a 1 at ${x}`);
      near(regularizedUpperGamma(2, x), (1 + x) * Math.exp(-x), 1e-10, `a 2 at ${x}`);
    }),
    { seed: 11 },
  );
  fc.assert(
    fc.property(fc.double({ min: -30, max: 30, noNaN: true }), (z) => {
      near(normalTail(z) + normalTail(-z), 1, 1e-12, `symmetry at ${z}`);
    }),
    { seed: 13 },
  );
  assert.throws(() => regularizedUpperGamma(0, 1), RangeError);
  assert.throws(() => regularizedUpperGamma(1, -1), RangeError);
  assert.throws(() => normalTail(NaN), RangeError);
});
