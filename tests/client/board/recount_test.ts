/**
 * The bulletin board's own count (lib/client/board/recount.ts): every sealed block's votes counted
 * in the tally's order, and nothing while a block is only partly read.
 * @module
 */
import assert from "node:assert/strict";
import { type LoadedVotes, recount } from "../../../lib/client/board/recount.ts";
import type { BlockVoteEntry } from "../../../lib/client/api_client.ts";

function loaded(payloads: string[], total = payloads.length): LoadedVotes {
  const entries = payloads.map((payload, index) =>
    ({ voteId: `v${index}`, index, vote: { payload } }) as unknown as BlockVoteEntry
  );
  return { entries, total };
}

const tally = { results: [], total: 0 };

Deno.test("the recount counts every sealed block's votes in the tally's order", () => {
  const votes = new Map([[1, loaded(["no", "yes"])], [2, loaded(["yes", "abstain"])]]);
  assert.deepEqual(recount(2, tally, votes), [
    { payload: "yes", count: 2 },
    { payload: "abstain", count: 1 },
    { payload: "no", count: 1 },
  ]);
});

Deno.test("the recount waits for the tally and for every vote of every block", () => {
  assert.deepEqual(recount(0, tally, new Map()), []);
  assert.equal(recount(null, tally, new Map()), null);
  assert.equal(recount(1, null, new Map([[1, loaded(["yes"])]])), null);
  assert.equal(recount(2, tally, new Map([[1, loaded(["yes"])]])), null);
  assert.equal(recount(1, tally, new Map([[1, loaded(["yes"], 2)]])), null);
});
