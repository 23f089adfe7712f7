/**
 * The bulletin board's own count (lib/client/board/recount.ts): every sealed block's votes counted
 * in the tally's order, from each block's payload counts, nothing until every block is counted, and
 * a block whose listing is not the votes its header commits to named as the recount's problem.
 * @module
 */
import assert from "node:assert/strict";
import {
  type CountedBlock,
  countPayloads,
  recount,
  recountProblem,
} from "../../../lib/client/board/recount.ts";
import type { BlockVoteEntry } from "../../../lib/client/api_client.ts";

function entries(payloads: string[]): BlockVoteEntry[] {
  return payloads.map((payload, index) =>
    ({ voteId: `v${index}`, index, vote: { payload } }) as unknown as BlockVoteEntry
  );
}

/**
 * A block whose header commits to `size` votes and whose listing says `total`, of which those of
 * `payloads` were counted.
 */
function counted(
  payloads: string[],
  total = payloads.length,
  size: number | null = total,
): CountedBlock {
  return { size, total, counted: payloads.length, payloads: countPayloads(entries(payloads)) };
}

const tally = { results: [], total: 0 };

Deno.test("the recount counts every sealed block's votes in the tally's order", () => {
  const blocks = new Map([[1, counted(["no", "yes"])], [2, counted(["yes", "abstain"])]]);
  assert.deepEqual(recount(2, tally, blocks), [
    { payload: "yes", count: 2 },
    { payload: "abstain", count: 1 },
    { payload: "no", count: 1 },
  ]);
});

Deno.test("the recount waits for the tally and for every vote of every block", () => {
  assert.deepEqual(recount(0, tally, new Map()), []);
  assert.equal(recount(null, tally, new Map()), null);
  assert.equal(recount(1, null, new Map([[1, counted(["yes"])]])), null);
  assert.equal(recount(2, tally, new Map([[1, counted(["yes"])]])), null);
});

Deno.test("a listing that is not the votes its header commits to is the recount's problem", () => {
  const whole = counted(["yes", "no"]);
  assert.equal(recountProblem(2, new Map([[1, whole], [2, whole]])), null);
  assert.equal(recountProblem(null, new Map([[1, counted(["yes"], 1, 2)]])), null);
  const cases: [CountedBlock, { size: number | null; total: number; counted: number }][] = [
    // A vote left out, the listing's total lowered to match: the header still says 3.
    [counted(["yes", "yes"], 2, 3), { size: 3, total: 2, counted: 2 }],
    // Every vote served, the total another.
    [counted(["yes", "no", "yes"], 4, 3), { size: 3, total: 4, counted: 3 }],
    // One vote more than the header's size.
    [counted(["yes", "no", "yes", "no"], 4, 3), { size: 3, total: 4, counted: 4 }],
    // A header that does not check.
    [counted(["yes"], 1, null), { size: null, total: 1, counted: 1 }],
  ];
  for (const [block, found] of cases) {
    const blocks = new Map([[1, whole], [2, block], [3, counted(["no"], 1, 2)]]);
    assert.deepEqual(recountProblem(3, blocks), { height: 2, ...found });
    // The recount still counts what was read: the served tally may well agree with it.
    assert.notEqual(recount(3, tally, blocks), null);
  }
});

Deno.test("a block is kept as its payloads' counts, added to page by page", () => {
  const block = counted(["yes", "no", "yes"], 5);
  assert.deepEqual(block, {
    size: 5,
    total: 5,
    counted: 3,
    payloads: new Map([["yes", 2], ["no", 1]]),
  });
  const payloads = countPayloads(entries(["no", "maybe"]), new Map(block.payloads));
  assert.deepEqual(payloads, new Map([["yes", 2], ["no", 2], ["maybe", 1]]));
  assert.deepEqual(recount(1, tally, new Map([[1, { size: 5, total: 5, counted: 5, payloads }]])), [
    { payload: "no", count: 2 },
    { payload: "yes", count: 2 },
    { payload: "maybe", count: 1 },
  ]);
});
