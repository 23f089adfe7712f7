/**
 * The bulletin board's own count (lib/client/board/recount.ts): every sealed block's votes counted
 * in the tally's order, from each block's payload counts, and nothing while a block is only partly
 * read.
 * @module
 */
import assert from "node:assert/strict";
import { type CountedBlock, countPayloads, recount } from "../../../lib/client/board/recount.ts";
import type { BlockVoteEntry } from "../../../lib/client/api_client.ts";

function entries(payloads: string[]): BlockVoteEntry[] {
  return payloads.map((payload, index) =>
    ({ voteId: `v${index}`, index, vote: { payload } }) as unknown as BlockVoteEntry
  );
}

/** A block whose listing holds `total` votes, of which those of `payloads` were counted. */
function counted(payloads: string[], total = payloads.length): CountedBlock {
  return { total, counted: payloads.length, payloads: countPayloads(entries(payloads)) };
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
  assert.equal(recount(1, tally, new Map([[1, counted(["yes"], 2)]])), null);
});

Deno.test("a block is kept as its payloads' counts, added to page by page", () => {
  const block = counted(["yes", "no", "yes"], 5);
  assert.deepEqual(block, { total: 5, counted: 3, payloads: new Map([["yes", 2], ["no", 1]]) });
  const payloads = countPayloads(entries(["no", "maybe"]), new Map(block.payloads));
  assert.deepEqual(payloads, new Map([["yes", 2], ["no", 2], ["maybe", 1]]));
  assert.deepEqual(recount(1, tally, new Map([[1, { total: 5, counted: 5, payloads }]])), [
    { payload: "no", count: 2 },
    { payload: "yes", count: 2 },
    { payload: "maybe", count: 1 },
  ]);
});
