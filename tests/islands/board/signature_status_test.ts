/**
 * The key the board remembers a listed vote's signature check by
 * (islands/board/signature_status.ts): two votes served differently never share it; and a list
 * longer than the shared memory keeps its own findings, so none is checked again while listed.
 * @module
 */
import assert from "node:assert/strict";
import {
  createListingMemory,
  type ListedVote,
  signatureKey,
  type SignatureStatus,
} from "../../../islands/board/signature_status.ts";
import { createLruCache } from "../../../lib/protocol/member_cache.ts";

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

Deno.test("a list longer than the shared memory keeps its findings: nothing is checked twice", () => {
  const shared = createLruCache<SignatureStatus>(4);
  const memory = createListingMemory(shared);
  const other = createListingMemory(shared);
  const votes = Array.from({ length: 6 }, (_, i) => listed(`v${i}`, "yes", `sig${i}`, ["aa"]));
  const keys = memory.list(votes);
  keys.forEach((key) => memory.set(key, { problems: [] }));
  // The shared memory held only four; the list still knows all six on its next render.
  assert.equal(shared.size, 4);
  assert.deepEqual(memory.list(votes).filter((key) => memory.get(key) === undefined), []);
  // Another list showing two of them finds what the shared memory kept, and its own after.
  const shown = other.list(votes.slice(4));
  assert.ok(shown.every((key) => other.get(key) !== undefined));
  // Votes no longer listed are let go by the list (the shared memory may still know them).
  memory.list(votes.slice(0, 1));
  assert.equal(memory.get(keys[1]), undefined);
  assert.deepEqual(memory.get(keys[0]), { problems: [] });
});
