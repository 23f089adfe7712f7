/**
 * The projector view's tally (lib/client/board/room.ts): every choice in asked order, at 0 too, a
 * payload that is no choice still shown, a free-text tally in served order, and what does not fit
 * summed up.
 * @module
 */
import assert from "node:assert/strict";
import { roomTally } from "../../../lib/client/board/room.ts";

const tally = (results: [string, number][]) => ({
  total: results.reduce((sum, [, count]) => sum + count, 0),
  results: results.map(([payload, count]) => ({ payload, count })),
});

Deno.test("a round with choices shows every choice in the asked order, at 0 too", () => {
  assert.deepEqual(roomTally(["Red", "Green", "Blue"], tally([["Blue", 4], ["Red", 2]])), {
    rows: [
      { payload: "Red", count: 2, share: 0.5 },
      { payload: "Green", count: 0, share: 0 },
      { payload: "Blue", count: 4, share: 1 },
    ],
    more: null,
  });
});

Deno.test("before the tally is read, or with no votes, every choice stands at 0", () => {
  const zero = [{ payload: "Yes", count: 0, share: 0 }, { payload: "No", count: 0, share: 0 }];
  assert.deepEqual(roomTally(["Yes", "No"], null).rows, zero);
  assert.deepEqual(roomTally(["Yes", "No"], tally([])).rows, zero);
});

Deno.test("a counted payload that is not a choice is shown after the choices", () => {
  assert.deepEqual(roomTally(["Yes", "No"], tally([["Maybe", 3], ["Yes", 1]])).rows, [
    { payload: "Yes", count: 1, share: 1 / 3 },
    { payload: "No", count: 0, share: 0 },
    { payload: "Maybe", count: 3, share: 1 },
  ]);
});

Deno.test("a free-text round keeps the served order and sums up what does not fit", () => {
  const served = tally([["a", 5], ["b", 4], ["c", 2], ["d", 1], ["e", 1]]);
  assert.deepEqual(roomTally([], served, { limit: 3 }), {
    rows: [
      { payload: "a", count: 5, share: 1 },
      { payload: "b", count: 4, share: 0.8 },
      { payload: "c", count: 2, share: 0.4 },
    ],
    more: { answers: 2, votes: 2 },
  });
  assert.deepEqual(roomTally([], null), { rows: [], more: null });
});
