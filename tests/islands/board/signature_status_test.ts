/**
 * The key the board remembers a listed vote's signature check by
 * (islands/board/signature_status.ts): two votes served differently never share it.
 * @module
 */
import assert from "node:assert/strict";
import { type ListedVote, signatureKey } from "../../../islands/board/signature_status.ts";

const listed = (voteId: string, payload: string, signature: string, publicKeys: string[]) =>
  ({
    voteId,
    vote: { payload, signature, publicKeys },
  }) satisfies ListedVote;

Deno.test("a vote served with another ring is checked again", () => {
  const ring = ["aa".repeat(32), "bb".repeat(32)];
  const swapped = ["cc".repeat(32), "bb".repeat(32)];
  assert.notEqual(
    signatureKey(listed("v1", "yes", "sig", ring)),
    signatureKey(listed("v1", "yes", "sig", swapped)),
  );
  assert.equal(
    signatureKey(listed("v1", "yes", "sig", ring)),
    signatureKey(listed("v1", "yes", "sig", [...ring])),
  );
});

Deno.test("newlines in a payload cannot make two votes share a key", () => {
  const ring = ["aa".repeat(32)];
  assert.notEqual(
    signatureKey(listed("v1", "yes\nsig", "x", ring)),
    signatureKey(listed("v1", "yes", "sig\nx", ring)),
  );
});
