// The tally order (lib/protocol/tally.ts, protocol §4): count descending, then payload ascending,
// so equal counts read the same on the server, in the auditor and on the board.
import assert from "node:assert/strict";
import { rankTally, tallyOf } from "../../lib/protocol/tally.ts";

Deno.test("rankTally: the larger count first", () => {
  assert.deepEqual(rankTally(new Map([["no", 1], ["yes", 3], ["maybe", 2]])), [
    { payload: "yes", count: 3 },
    { payload: "maybe", count: 2 },
    { payload: "no", count: 1 },
  ]);
});

Deno.test("rankTally: equal counts in ascending payload order, whatever the insertion order", () => {
  const expected = [
    { payload: "a", count: 2 },
    { payload: "b", count: 2 },
    { payload: "c", count: 2 },
  ];
  assert.deepEqual(rankTally(new Map([["c", 2], ["a", 2], ["b", 2]])), expected);
  assert.deepEqual(rankTally(new Map([["b", 2], ["c", 2], ["a", 2]])), expected);
});

Deno.test("rankTally: payloads compare by UTF-16 code units, case and accents included", () => {
  // "B" (U+0042) < "a" (U+0061) < "é" (U+00E9) < "😀" (units D83D DE00) < "\uFFFD": by code
  // units the emoji comes before U+FFFD, though its code point U+1F600 is larger.
  assert.deepEqual(
    rankTally(new Map([["\uFFFD", 1], ["😀", 1], ["é", 1], ["a", 1], ["B", 1]]))
      .map((r) => r.payload),
    ["B", "a", "é", "😀", "\uFFFD"],
  );
});

Deno.test("tallyOf: one vote per payload counted, in tally order; nothing for no votes", () => {
  assert.deepEqual(tallyOf(["yes", "no", "yes", "abstain", "no", "yes"]), [
    { payload: "yes", count: 3 },
    { payload: "no", count: 2 },
    { payload: "abstain", count: 1 },
  ]);
  assert.deepEqual(tallyOf([]), []);
  assert.deepEqual(tallyOf(["x", "X", "x"]), [{ payload: "x", count: 2 }, {
    payload: "X",
    count: 1,
  }]);
});
