/**
 * Exact anonymity of ballots from the public record (lib/client/anonymity/anonymity.ts): the
 * closed-set example, a chain reaction set off by one revealed key, a record with no constraint,
 * inconsistent records and reveals, and a property test against exhaustive enumeration of every
 * assignment.
 * @module
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  analyseAnonymity,
  type AnonymityAnalysis,
  anonymityChanges,
  type ConsistentAnalysis,
  type Reveal,
  type RingBallot,
} from "../../../lib/client/anonymity/anonymity.ts";
import { memberStatuses } from "../../../lib/client/anonymity/anonymity_view.ts";

/** Key names stand in for hex public keys: the analysis only compares them. */
const key = (n: number) => `k${n}`;
const keys = (...ns: number[]) => ns.map(key);

function consistent(analysis: AnonymityAnalysis): ConsistentAnalysis {
  if (!analysis.consistent) assert.fail(`expected a consistent record: ${analysis.problem}`);
  return analysis;
}

function anonymityOf(analysis: ConsistentAnalysis): Record<string, number> {
  return Object.fromEntries(analysis.ballots.map((b) => [b.id, b.effectiveAnonymity]));
}

function signersOf(analysis: ConsistentAnalysis, id: string): string[] {
  return analysis.ballots.find((b) => b.id === id)!.possibleSigners;
}

/** Eight ballots over keys 1..8 and a ninth over 9 and 1..7 (the closed-set attack). */
function closedSet(): RingBallot[] {
  const ballots = Array.from({ length: 8 }, (_, i) => ({
    id: `b${i + 1}`,
    ring: keys(1, 2, 3, 4, 5, 6, 7, 8),
  }));
  return [...ballots, { id: "b9", ring: keys(9, 1, 2, 3, 4, 5, 6, 7) }];
}

Deno.test("a closed set of 8 ballots over 8 keys leaves the 9th ballot exactly one signer", () => {
  const analysis = consistent(analyseAnonymity(closedSet()));
  assert.deepEqual(signersOf(analysis, "b9"), [key(9)]);
  assert.equal(anonymityOf(analysis).b9, 1);
  for (let i = 1; i <= 8; i++) {
    assert.deepEqual(signersOf(analysis, `b${i}`), keys(1, 2, 3, 4, 5, 6, 7, 8));
  }
  const certain = new Map(analysis.certainSigners.map((s) => [s.key, s.ballots]));
  assert.deepEqual(certain.get(key(9)), ["b9"]);
  assert.equal(certain.get(key(1))?.length, 8, "key 1 certainly cast one of the 8 ballots");
  const nine = memberStatuses(analysis, "b9");
  assert.deepEqual(nine.filter((m) => m.possible).map((m) => m.key), [key(9)]);
  assert.equal(nine[1].reason, "certainly cast one of 8 other ballots");
  assert.deepEqual(nine[1].ballots, ["b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"]);
});

Deno.test("one revealed key sets off a chain reaction around a cycle of rings", () => {
  // Five ballots over five keys, ring i = {i, i+1} around a cycle: each has two candidates, and
  // either choice for one ballot fixes all the others. A sixth ballot is not connected.
  const ballots = [
    { id: "b1", ring: keys(1, 2) },
    { id: "b2", ring: keys(2, 3) },
    { id: "b3", ring: keys(3, 4) },
    { id: "b4", ring: keys(4, 5) },
    { id: "b5", ring: keys(5, 1) },
    { id: "b6", ring: keys(6, 7, 8) },
  ];
  const before = consistent(analyseAnonymity(ballots));
  assert.deepEqual(anonymityOf(before), { b1: 2, b2: 2, b3: 2, b4: 2, b5: 2, b6: 3 });
  const reveals = [{ key: key(2), ballot: "b1" }];
  const after = consistent(analyseAnonymity(ballots, { reveals }));
  assert.deepEqual(anonymityOf(after), { b1: 1, b2: 1, b3: 1, b4: 1, b5: 1, b6: 3 });
  assert.deepEqual(
    after.ballots.map((b) => b.possibleSigners),
    [keys(2), keys(3), keys(4), keys(5), keys(1), keys(6, 7, 8)],
  );
  assert.deepEqual(anonymityChanges(before, after), [
    { id: "b1", before: 2, after: 1 },
    { id: "b2", before: 2, after: 1 },
    { id: "b3", before: 2, after: 1 },
    { id: "b4", before: 2, after: 1 },
    { id: "b5", before: 2, after: 1 },
  ]);
  const reasons = (id: string) =>
    memberStatuses(after, id, { reveals }).map((m) => `${m.key}: ${m.reason}`);
  assert.deepEqual(reasons("b1"), [
    "k1: this ballot's signer was revealed",
    "k2: revealed as this ballot's signer",
  ]);
  assert.deepEqual(reasons("b2"), [
    "k2: revealed as the signer of ballot b1",
    "k3: the only member that can have cast it",
  ]);
  assert.deepEqual(reasons("b3"), [
    "k3: certainly cast ballot b2",
    "k4: the only member that can have cast it",
  ]);
});

Deno.test("a reveal removes anonymity only where the record forces it", () => {
  // Keys 1..5 are closed over b1..b5; key 1 cast b2 forces b1 to key 2, so b3 loses key 2, while
  // b4 keeps all three members.
  const ballots = [
    { id: "b1", ring: keys(1, 2) },
    { id: "b2", ring: keys(1, 3) },
    { id: "b3", ring: keys(2, 3, 4) },
    { id: "b4", ring: keys(3, 4, 5) },
    { id: "b5", ring: keys(4, 5) },
  ];
  const before = consistent(analyseAnonymity(ballots));
  assert.deepEqual(anonymityOf(before), { b1: 2, b2: 2, b3: 3, b4: 3, b5: 2 });
  const reveals = [{ key: key(1), ballot: "b2" }];
  const after = consistent(analyseAnonymity(ballots, { reveals }));
  assert.deepEqual(anonymityOf(after), { b1: 1, b2: 1, b3: 2, b4: 3, b5: 2 });
  assert.deepEqual(signersOf(after, "b3"), keys(3, 4));
  const b3 = memberStatuses(after, "b3", { reveals });
  assert.equal(b3[0].reason, "certainly cast ballot b1");
});

Deno.test("a record with no constraint leaves every ballot its whole ring", () => {
  // 20 ballots, rings of 8 drawn from 40 keys with plenty of unused keys in every ring.
  const ballots = Array.from({ length: 20 }, (_, i) => ({
    id: `b${i}`,
    ring: Array.from({ length: 8 }, (_, j) => key((i * 2 + j * 5) % 40)),
  }));
  const analysis = consistent(analyseAnonymity(ballots));
  for (const b of analysis.ballots) {
    assert.deepEqual(b.possibleSigners, b.ring);
    assert.equal(b.effectiveAnonymity, 8);
  }
  assert.deepEqual(analysis.certainSigners, []);
});

Deno.test("more ballots than keys is reported as an inconsistent record, naming them", () => {
  const ballots = [
    { id: "a", ring: keys(1, 2) },
    { id: "b", ring: keys(1, 2) },
    { id: "c", ring: keys(2, 1) },
    { id: "d", ring: keys(3, 4) },
  ];
  const analysis = analyseAnonymity(ballots);
  assert.equal(analysis.consistent, false);
  if (analysis.consistent) return;
  assert.deepEqual([...analysis.ballots].sort(), ["a", "b", "c"]);
  assert.deepEqual([...analysis.keys].sort(), keys(1, 2));
  assert.equal(
    analysis.problem,
    "3 ballots (a, b, c) can only have been cast by 2 distinct keys, " +
      "but each key signs at most one ballot",
  );
});

Deno.test("reveals that contradict the record or each other are reported, not analysed", async (t) => {
  const ballots = [
    { id: "a", ring: keys(1, 2) },
    { id: "b", ring: keys(1, 2) },
    { id: "c", ring: keys(2, 3) },
  ];
  const cases: { desc: string; reveals: Reveal[]; problem: RegExp }[] = [
    {
      desc: "key outside the ring",
      reveals: [{ key: key(3), ballot: "a" }],
      problem: /^Key k3 is revealed as the signer of ballot a, but it is not in that ring$/,
    },
    {
      desc: "unknown ballot",
      reveals: [{ key: key(1), ballot: "z" }],
      problem: /^Ballot z is not in the record$/,
    },
    {
      desc: "one key, two ballots",
      reveals: [{ key: key(1), ballot: "a" }, { key: key(1), ballot: "b" }],
      problem: /^Key k1 is revealed as the signer of two ballots, a and b/,
    },
    {
      desc: "one ballot, two keys",
      reveals: [{ key: key(1), ballot: "a" }, { key: key(2), ballot: "a" }],
      problem: /^Ballot a is revealed as cast by two keys, k1 and k2$/,
    },
    {
      desc: "a reveal that leaves three ballots two keys",
      reveals: [{ key: key(2), ballot: "c" }],
      problem:
        /^3 ballots \(a, b, c\) can only have been cast by 2 distinct keys, once the revealed/,
    },
  ];
  for (const c of cases) {
    await t.step(c.desc, () => {
      const analysis = analyseAnonymity(ballots, { reveals: c.reveals });
      assert.equal(analysis.consistent, false);
      if (!analysis.consistent) assert.match(analysis.problem, c.problem);
    });
  }
  await t.step("the same record without those reveals is consistent", () => {
    assert.deepEqual(anonymityOf(consistent(analyseAnonymity(ballots))), { a: 2, b: 2, c: 1 });
  });
});

Deno.test("malformed input throws: repeated or empty ballot ids, empty rings", () => {
  assert.throws(
    () => analyseAnonymity([{ id: "a", ring: [key(1)] }, { id: "a", ring: [key(2)] }]),
    RangeError,
  );
  assert.throws(() => analyseAnonymity([{ id: "", ring: [key(1)] }]), TypeError);
  assert.throws(() => analyseAnonymity([{ id: "a", ring: [] }]), RangeError);
  assert.throws(
    () => analyseAnonymity([{ id: "a", ring: [1 as unknown as string] }]),
    TypeError,
  );
});

Deno.test("a chain of 20,000 ballots analyses without exhausting the call stack", () => {
  // Ballot i's ring is {i, i+1}; revealing key 1 for ballot 0 forces ballot i to key i+1.
  const n = 20_000;
  const ballots = Array.from({ length: n }, (_, i) => ({ id: `b${i}`, ring: keys(i + 1, i) }));
  const free = consistent(analyseAnonymity(ballots));
  assert.ok(free.ballots.every((b) => b.effectiveAnonymity === 2));
  const forced = consistent(
    analyseAnonymity(ballots, { reveals: [{ key: key(1), ballot: "b0" }] }),
  );
  assert.ok(forced.ballots.every((b) => b.effectiveAnonymity === 1));
  assert.deepEqual(signersOf(forced, `b${n - 1}`), [key(n)]);
  const closed = consistent(analyseAnonymity([...ballots, { id: "last", ring: keys(n) }]));
  assert.ok(closed.ballots.every((b) => b.effectiveAnonymity === 1));
  assert.deepEqual(signersOf(closed, "b0"), [key(0)]);
});

/** Every assignment of distinct keys to all ballots, within their rings and the reveals. */
function bruteForce(ballots: RingBallot[], reveals: Reveal[]) {
  const domains = ballots.map((b) => {
    const shown = reveals.find((r) => r.ballot === b.id);
    return shown ? [shown.key] : [...new Set(b.ring)];
  });
  const possible = ballots.map(() => new Set<string>());
  const used = new Set<string>();
  const usedInAll = new Map<string, number>();
  const keyBallots = new Map<string, Set<string>>();
  const chosen: string[] = [];
  let count = 0;
  function walk(b: number) {
    if (b === ballots.length) {
      count++;
      chosen.forEach((k, i) => {
        possible[i].add(k);
        usedInAll.set(k, (usedInAll.get(k) ?? 0) + 1);
        if (!keyBallots.has(k)) keyBallots.set(k, new Set());
        keyBallots.get(k)!.add(ballots[i].id);
      });
      return;
    }
    for (const k of domains[b]) {
      if (used.has(k)) continue;
      used.add(k);
      chosen.push(k);
      walk(b + 1);
      chosen.pop();
      used.delete(k);
    }
  }
  walk(0);
  const certain = [...usedInAll].filter(([, n]) => n === count).map(([k]) => k);
  return { count, possible, certain, keyBallots };
}

/** Random small records: up to 8 ballots over up to 12 keys, rings of 1 to 8, up to 2 reveals. */
const smallRecord = fc.integer({ min: 1, max: 12 }).chain((keyCount) =>
  fc.record({
    ballots: fc.array(
      fc.uniqueArray(fc.integer({ min: 1, max: keyCount }), {
        minLength: 1,
        maxLength: Math.min(8, keyCount),
      }),
      { minLength: 1, maxLength: 8 },
    ),
    reveals: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 2 }),
  })
).map(({ ballots, reveals }) => {
  const record = ballots.map((ring, i) => ({ id: `b${i}`, ring: ring.map(key) }));
  const shown: Reveal[] = [];
  for (const [which, member] of reveals) {
    const ballot = record[which % record.length];
    const revealed = { key: ballot.ring[member % ballot.ring.length], ballot: ballot.id };
    if (!shown.some((r) => r.ballot === revealed.ballot || r.key === revealed.key)) {
      shown.push(revealed);
    }
  }
  return { record, reveals: shown };
});

Deno.test("possible signers equal those of exhaustive enumeration on random small records", () => {
  fc.assert(
    fc.property(smallRecord, ({ record, reveals }) => {
      const truth = bruteForce(record, reveals);
      const analysis = analyseAnonymity(record, { reveals });
      if (truth.count === 0) {
        assert.equal(analysis.consistent, false);
        if (analysis.consistent) return;
        // Hall's condition fails on the named ballots: fewer keys than ballots, and every one of
        // their domains lies within those keys.
        assert.ok(analysis.keys.length < analysis.ballots.length);
        const named = new Set(analysis.keys);
        for (const id of analysis.ballots) {
          const shown = reveals.find((r) => r.ballot === id);
          const domain = shown ? [shown.key] : record.find((b) => b.id === id)!.ring;
          assert.ok(domain.every((k) => named.has(k)), `${id}'s domain is within the keys named`);
        }
        return;
      }
      const result = consistent(analysis);
      result.ballots.forEach((b, i) => {
        const expected = record[i].ring.filter((k) => truth.possible[i].has(k));
        assert.deepEqual(b.possibleSigners, expected, `ballot ${b.id}`);
        assert.equal(b.effectiveAnonymity, expected.length);
      });
      const certain = new Map(result.certainSigners.map((s) => [s.key, s.ballots]));
      assert.deepEqual([...certain.keys()].sort(), [...truth.certain].sort());
      for (const [k, ids] of certain) {
        assert.deepEqual([...ids].sort(), [...truth.keyBallots.get(k)!].sort(), `key ${k}`);
      }
    }),
    { numRuns: 300 },
  );
});
