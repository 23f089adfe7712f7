// The rule that a vote's publicKeys are its signature's ring (lib/protocol/same_ring.ts,
// protocol §4.3): the same keys in the same order, nothing else.
import assert from "node:assert/strict";
import { HEX32_PATTERN } from "../../lib/protocol/bytes.ts";
import { sameRing } from "../../lib/protocol/same_ring.ts";

const [a, b, c] = ["a", "b", "c"].map((x) => x.repeat(64));

Deno.test("publicKeys equal the signed ring only with the same keys in the same order", () => {
  assert.equal(sameRing([a, b], [a, b]), true);
  assert.equal(sameRing([b, a], [a, b]), false, "same keys, another order");
  assert.equal(sameRing([a], [a, b]), false, "a key left out");
  assert.equal(sameRing([a, b, c], [a, b]), false, "a key added");
  assert.equal(sameRing([a, c], [a, b]), false, "a key replaced");
  assert.equal(sameRing([a, b], null), false, "no readable ring");
});

Deno.test("the 32-byte hex form is exactly 64 lowercase hex characters", () => {
  assert.equal(HEX32_PATTERN.test(a), true);
  assert.equal(HEX32_PATTERN.test("0123456789abcdef".repeat(4)), true);
  assert.equal(HEX32_PATTERN.test(a.toUpperCase()), false);
  assert.equal(HEX32_PATTERN.test(a.slice(1)), false);
  assert.equal(HEX32_PATTERN.test(a + "a"), false);
  assert.equal(HEX32_PATTERN.test("g".repeat(64)), false);
});
