/**
 * Fields of a stored wire signature (lib/protocol/signature_fields.ts): the tag and the ring, or
 * nothing when the string is absent or malformed.
 * @module
 */
import assert from "node:assert/strict";
import { ringOfSignature, tagOfSignature } from "../../lib/protocol/signature_fields.ts";

const I = "0f".repeat(32);
const ring = ["1a".repeat(32), "2b".repeat(32)];
const wire = JSON.stringify({ c0: "", r: [], I, ring });

Deno.test("the tag is I of the stored signature, or nothing when malformed", () => {
  assert.equal(tagOfSignature(wire), I);
  assert.equal(tagOfSignature(null), null);
  assert.equal(tagOfSignature("not json"), null);
  assert.equal(tagOfSignature(JSON.stringify({ I: "ABC" })), null);
  assert.equal(tagOfSignature("null"), null);
});

Deno.test("the ring is the signature's key list in signed order, or nothing when malformed", () => {
  assert.deepEqual(ringOfSignature(wire), ring);
  assert.deepEqual(
    ringOfSignature(JSON.stringify({ ring: [...ring].reverse() })),
    [
      ...ring,
    ].reverse(),
  );
  assert.equal(ringOfSignature(null), null);
  assert.equal(ringOfSignature("not json"), null);
  assert.equal(ringOfSignature(JSON.stringify({ ring: "1a".repeat(32) })), null);
  assert.equal(ringOfSignature(JSON.stringify({ ring: [ring[0], "XYZ"] })), null);
  assert.equal(ringOfSignature(JSON.stringify({ ring: [ring[0], 7] })), null);
});
