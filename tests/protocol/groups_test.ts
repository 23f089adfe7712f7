// The groups of a round (lib/protocol/groups.ts, protocol §2.8): the partition at the opening, the
// late groups with late joiners on and off, the ring rule and the fingerprint.
import assert from "node:assert/strict";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "../../lib/protocol/bytes.ts";
import {
  groupFingerprint,
  groupOf,
  MAX_GROUP,
  partitionAtOpen,
  ringIsGroup,
  roundGroups,
} from "../../lib/protocol/groups.ts";

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

Deno.test("the opening's keys form one group up to 64 keys", () => {
  assert.deepEqual(partitionAtOpen(0), []);
  assert.deepEqual(partitionAtOpen(8), [range(1, 8)]);
  assert.deepEqual(partitionAtOpen(63), [range(1, 63)]);
  assert.deepEqual(partitionAtOpen(64), [range(1, 64)]);
});

Deno.test("above 64 keys: ceil(N/64) groups of consecutive ids, the larger ones first", () => {
  assert.deepEqual(partitionAtOpen(65), [range(1, 33), range(34, 65)]);
  assert.deepEqual(partitionAtOpen(130), [range(1, 44), range(45, 87), range(88, 130)]);
  for (const n of [65, 100, 128, 129, 130, 1000, 4097]) {
    const groups = partitionAtOpen(n);
    assert.equal(groups.length, Math.ceil(n / MAX_GROUP), `${n}`);
    assert.deepEqual(groups.flat(), range(1, n), `${n}: every id once, in order`);
    const sizes = groups.map((g) => g.length);
    assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `${n}: near-equal`);
    assert.ok(Math.max(...sizes) <= MAX_GROUP, `${n}: within the ring limit`);
    assert.deepEqual(sizes, [...sizes].sort((a, b) => b - a), `${n}: larger groups first`);
  }
});

Deno.test("late joiners off: every key after the opening is pending for ever", () => {
  const rule = { keysAtOpen: 10, minVoters: 8, lateJoiners: false };
  assert.deepEqual(roundGroups({ ...rule, total: 10 }), { groups: [range(1, 10)], pending: [] });
  assert.deepEqual(roundGroups({ ...rule, total: 40 }), {
    groups: [range(1, 10)],
    pending: range(11, 40),
  });
});

Deno.test("late joiners on: each complete run of minVoters keys is the next group", () => {
  const rule = { keysAtOpen: 16, minVoters: 8, lateJoiners: true };
  assert.deepEqual(roundGroups({ ...rule, total: 23 }), {
    groups: [range(1, 16)],
    pending: range(17, 23),
  });
  assert.deepEqual(roundGroups({ ...rule, total: 24 }), {
    groups: [range(1, 16), range(17, 24)],
    pending: [],
  });
  assert.deepEqual(roundGroups({ ...rule, total: 35 }), {
    groups: [range(1, 16), range(17, 24), range(25, 32)],
    pending: range(33, 35),
  });
  const wide = roundGroups({ keysAtOpen: 65, total: 75, minVoters: 10, lateJoiners: true });
  assert.deepEqual(wide.groups, [range(1, 33), range(34, 65), range(66, 75)]);
});

Deno.test("groupOf finds a key's group, null for a pending or unknown key", () => {
  const { groups } = roundGroups({ keysAtOpen: 130, total: 140, minVoters: 8, lateJoiners: true });
  assert.deepEqual(groupOf(groups, 1), range(1, 44));
  assert.deepEqual(groupOf(groups, 87), range(45, 87));
  assert.deepEqual(groupOf(groups, 138), range(131, 138));
  assert.equal(groupOf(groups, 139), null);
  assert.equal(groupOf(groups, 0), null);
});

Deno.test("a ring is a group only as the group's keys, each once, in id order", () => {
  const rule = { keysAtOpen: 65, minVoters: 8, lateJoiners: true };
  assert.equal(ringIsGroup(range(1, 33), rule), true);
  assert.equal(ringIsGroup(range(34, 65), rule), true);
  assert.equal(ringIsGroup(range(66, 73), rule), true, "a complete late group");
  assert.equal(ringIsGroup(range(1, 32), rule), false, "a key left out");
  assert.equal(ringIsGroup(range(1, 34), rule), false, "a key of another group");
  assert.equal(ringIsGroup([2, 1, ...range(3, 33)], rule), false, "not in id order");
  assert.equal(ringIsGroup([1, 1, ...range(3, 33)], rule), false, "a key twice");
  assert.equal(ringIsGroup(range(66, 72), rule), false, "a short late run");
  assert.equal(ringIsGroup(range(66, 73), { ...rule, lateJoiners: false }), false);
  assert.equal(ringIsGroup([], rule), false);
});

Deno.test("the fingerprint: the first 8 hex digits of SHA-256 over the keys in id order", () => {
  const keys = [1, 2, 3].map((n) => new Uint8Array(32).fill(n));
  const whole = new Uint8Array(96);
  keys.forEach((key, i) => whole.set(key, 32 * i));
  const fingerprint = groupFingerprint(keys);
  assert.equal(fingerprint, bytesToHex(sha256(whole)).slice(0, 8));
  assert.match(fingerprint, /^[0-9a-f]{8}$/);
  assert.notEqual(groupFingerprint([keys[1], keys[0], keys[2]]), fingerprint, "order matters");
});

Deno.test("no ring is a group under a rule no honest round has: minVoters 8–64, keysAtOpen ≥ it", () => {
  // Voting never opens with fewer than minVoters keys, and minVoters is at least 8 (§4.9).
  assert.equal(ringIsGroup([1, 2], { keysAtOpen: 2, minVoters: 8, lateJoiners: false }), false);
  assert.equal(ringIsGroup([1, 2], { keysAtOpen: 2, minVoters: 2, lateJoiners: false }), false);
  assert.equal(ringIsGroup([9], { keysAtOpen: 8, minVoters: 1, lateJoiners: true }), false);
  assert.equal(
    ringIsGroup(range(1, 8), { keysAtOpen: 8, minVoters: 65, lateJoiners: true }),
    false,
  );
  assert.equal(ringIsGroup(range(1, 8), { keysAtOpen: 8, minVoters: 8, lateJoiners: true }), true);
  assert.equal(
    ringIsGroup(range(1, 33), { keysAtOpen: 65, minVoters: 64, lateJoiners: true }),
    true,
  );
});
