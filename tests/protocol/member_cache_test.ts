// The member cache (lib/protocol/member_cache.ts): a byte budget bounds how many members it
// holds, and a full cache evicts the least recently used member, not the oldest inserted.
import assert from "node:assert/strict";
import { bytesToHex } from "../../lib/protocol/bytes.ts";
import { generateSeed, keyPairFromSeed } from "../../lib/protocol/keys.ts";
import { createMemberCache, MEMBER_BYTES } from "../../lib/protocol/member_cache.ts";
import { checkMember, type Member } from "../../lib/protocol/ring_signature.ts";

function members(n: number): [string, Member][] {
  return Array.from({ length: n }, () => {
    const { publicKey } = keyPairFromSeed(generateSeed());
    return [bytesToHex(publicKey), checkMember(publicKey) as Member];
  });
}

Deno.test("the member cache holds at most budget / MEMBER_BYTES members", () => {
  const cache = createMemberCache({ budgetBytes: 3 * MEMBER_BYTES + 1 });
  assert.equal(cache.capacity, 3);
  for (const [key, member] of members(5)) cache.set(key, member);
  assert.equal(cache.size, 3);
  const none = createMemberCache({ budgetBytes: MEMBER_BYTES - 1 });
  for (const [key, member] of members(2)) none.set(key, member);
  assert.equal(none.size, 0);
});

Deno.test("the member cache evicts the least recently used member", () => {
  const cache = createMemberCache({ budgetBytes: 3 * MEMBER_BYTES });
  const [a, b, c, d] = members(4);
  for (const [key, member] of [a, b, c]) cache.set(key, member);
  assert.equal(cache.get(a[0]), a[1]); // a is now the most recent
  cache.set(d[0], d[1]);
  assert.deepEqual([...cache.keys()], [c[0], a[0], d[0]]);
  assert.equal(cache.get(b[0]), undefined);
  cache.set(c[0], c[1]); // setting again refreshes, never duplicates
  assert.deepEqual([...cache.keys()], [a[0], d[0], c[0]]);
});
