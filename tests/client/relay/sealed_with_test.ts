// The set a timing observer can narrow a ballot to (protocol §7.4): the ballots of its group sealed
// in its block, counted from the block's listing, and the sentence that says so.
import assert from "node:assert/strict";
import type { BlockVoteEntry } from "../../../lib/client/api_client.ts";
import {
  ballotsOfRing,
  sealedWithCount,
  sealedWithText,
} from "../../../lib/client/relay/sealed_with.ts";

const key = (c: string) => c.repeat(64);
const entry = (index: number, ring: string[]): BlockVoteEntry => ({
  voteId: `v${index}`,
  index,
  vote: { payload: "Yes", signature: "s", publicKeys: ring },
} as BlockVoteEntry);

Deno.test("only the ballots signed over the same ring, key for key, are counted", () => {
  const group = [key("a"), key("b"), key("c")];
  const entries = [
    entry(0, group),
    entry(1, [key("d"), key("e")]),
    entry(2, group),
    entry(3, [key("a"), key("b")]),
    entry(4, [key("a"), key("c"), key("b")]),
  ];
  assert.equal(ballotsOfRing(entries, group), 2);
  assert.equal(ballotsOfRing([], group), 0);
});

Deno.test("the sentence names the count, the block, and what it means", () => {
  assert.equal(
    sealedWithText(5, 3),
    "Sealed with 5 ballots of your group in block 3, yours included: the set anyone who knows " +
      "when you sent can narrow you to.",
  );
  assert.match(sealedWithText(1, 7), /^Sealed with 1 ballot of your group in block 7,/);
});

Deno.test("a quiet phone's count is its group's entry of the block's per-group counts", () => {
  const ring = Array.from({ length: 8 }, (_, i) => key(String(i)));
  const counts = { height: 4, counts: [3, 5, 0] };
  assert.equal(sealedWithCount(counts, { height: 4, group: 1, ring }), 5);
  assert.equal(sealedWithCount(counts, { height: 4, group: 0, ring }), 3);
});

Deno.test("a lying server's per-group count is refused, never shown", () => {
  const ring = Array.from({ length: 8 }, (_, i) => key(String(i)));
  // Its own ballot is in the block: none of its group is a lie.
  assert.throws(
    () => sealedWithCount({ height: 4, counts: [0] }, { height: 4, group: 0, ring }),
    /counts 0 ballots of group 0 in block 4, not 1 to 8/,
  );
  // More ballots than keys in the group.
  assert.throws(
    () => sealedWithCount({ height: 4, counts: [9] }, { height: 4, group: 0, ring }),
    /counts 9 ballots/,
  );
  // No entry for its group.
  assert.throws(
    () => sealedWithCount({ height: 4, counts: [2] }, { height: 4, group: 1, ring }),
    /counts undefined ballots of group 1/,
  );
  // Another block's counts.
  assert.throws(
    () => sealedWithCount({ height: 5, counts: [2] }, { height: 4, group: 0, ring }),
    /for block 5, not block 4/,
  );
});
