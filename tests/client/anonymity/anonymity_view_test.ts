/**
 * The anonymity lens in words (lib/client/anonymity/anonymity_view.ts): the voting panel's ring
 * line and its warning, the histogram, the lowest-first order and the ring picture's circle.
 * @module
 */
import assert from "node:assert/strict";
import {
  anonymityHistogram,
  anonymityWarning,
  circlePositions,
  lowestFirst,
  ringLine,
} from "../../../lib/client/anonymity/anonymity_view.ts";

const ring = ["k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"];

Deno.test("the ring line names the voters on this page and counts the others", () => {
  const pageVoters = new Map([["k3", "Ada B. Lovelace"], ["k6", "Alan M. Turing"], ["x", "Z"]]);
  const line = ringLine({ ring, ownKey: "k1", pageVoters, effectiveAnonymity: 8 });
  assert.equal(
    line.hiddenAmong,
    "Hidden among 8 keys: you, Ada B. Lovelace, Alan M. Turing and 5 keys of voters not on this page",
  );
  assert.equal(
    line.anonymity,
    "Effective anonymity: 8 of 8 — the public record rules none of them out",
  );
  assert.equal(line.warning, null);
  const alone = ringLine({ ring, ownKey: "k8", pageVoters: new Map(), effectiveAnonymity: null });
  assert.equal(alone.hiddenAmong, "Hidden among 8 keys: you and 7 keys of voters not on this page");
  assert.equal(alone.anonymity, null);
  const one = ringLine({
    ring: ["k1", "k2"],
    ownKey: "k1",
    pageVoters: new Map(),
    effectiveAnonymity: 2,
  });
  assert.equal(one.hiddenAmong, "Hidden among 2 keys: you and 1 key of a voter not on this page");
});

Deno.test("below 4 possible signers the line carries a plain-words warning", () => {
  const line = ringLine({ ring, ownKey: "k1", pageVoters: new Map(), effectiveAnonymity: 3 });
  assert.equal(line.anonymity, "Effective anonymity: 3 of 8 — the other sealed ballots rule out 5");
  assert.match(
    line.warning!,
    /narrow this ballot down to 3 voters, so it is guessed right one time in 3/,
  );
  assert.match(anonymityWarning(2)!, /half the time/);
  assert.match(anonymityWarning(1)!, /^Not anonymous: .* only one key can have cast this ballot/);
  assert.equal(anonymityWarning(4), null);
});

Deno.test("the histogram has a bar for every anonymity from 1 to the largest", () => {
  const ballots = [8, 8, 1, 3, 8].map((effectiveAnonymity) => ({ effectiveAnonymity }));
  assert.deepEqual(anonymityHistogram(ballots), [
    { anonymity: 1, ballots: 1 },
    { anonymity: 2, ballots: 0 },
    { anonymity: 3, ballots: 1 },
    { anonymity: 4, ballots: 0 },
    { anonymity: 5, ballots: 0 },
    { anonymity: 6, ballots: 0 },
    { anonymity: 7, ballots: 0 },
    { anonymity: 8, ballots: 3 },
  ]);
  assert.deepEqual(anonymityHistogram([]), []);
});

Deno.test("ballots are listed lowest anonymity first, then by vote id", () => {
  const ballots = [
    { id: "c", effectiveAnonymity: 8 },
    { id: "b", effectiveAnonymity: 1 },
    { id: "a", effectiveAnonymity: 8 },
  ];
  assert.deepEqual(lowestFirst(ballots).map((b) => b.id), ["b", "a", "c"]);
  assert.deepEqual(ballots.map((b) => b.id), ["c", "b", "a"], "the input is left as it was");
});

Deno.test("ring members sit evenly on the circle, the first at the top", () => {
  const points = circlePositions(4, 10);
  const rounded = points.map(({ x, y }) => [Math.round(x), Math.round(y)]);
  assert.deepEqual(rounded, [[0, -10], [10, 0], [0, 10], [-10, 0]]);
  for (const { x, y } of circlePositions(8, 3)) assert.ok(Math.abs(Math.hypot(x, y) - 3) < 1e-12);
});
