import assert from "node:assert/strict";
import {
  evidenceFile,
  headsBelow,
  MAX_SEEN_HEADS,
  observeHeads,
  parseSeenHeads,
  type SeenHeads,
  serializeSeenHeads,
} from "../../lib/app/heads.ts";
import { checkForkEvidence, serverPublicKey, signHead } from "../../lib/protocol/head.ts";

const seed = new Uint8Array(32).fill(7);
const otherSeed = new Uint8Array(32).fill(9);
const key = serverPublicKey(seed);
const empty: SeenHeads = { key: null, heads: [] };

function head(height: number, hash: string, by = seed) {
  return { height, hash, head_signature: signHead(by, { height, hash }) };
}

Deno.test("observeHeads remembers validly signed heads, by height", () => {
  const a = head(1, "aa".repeat(32));
  const b = head(2, "bb".repeat(32));
  const { seen, fork, unsigned, keyChanged } = observeHeads(empty, { key, shown: [b, a, a] });
  assert.deepEqual(seen, { key, heads: [a, b] });
  assert.equal(fork, null);
  assert.deepEqual(unsigned, []);
  assert.equal(keyChanged, false);
});

Deno.test("observeHeads turns a second signed hash at a seen height into checkable evidence", () => {
  const honest = head(3, "aa".repeat(32));
  const lie = head(3, "cc".repeat(32));
  const { seen } = observeHeads(empty, { key, shown: [honest] });
  const after = observeHeads(seen, { key, shown: [lie] });
  assert.ok(after.fork);
  assert.deepEqual(checkForkEvidence(after.fork), { ok: true, height: 3 });
  assert.deepEqual(after.seen.heads, [honest], "the remembered head stays the first one seen");
  assert.deepEqual(after.fork.heads.map((h) => h.hash), [honest.hash, lie.hash]);
});

Deno.test("observeHeads never remembers a head without a valid signature, nor calls it a fork", () => {
  const { seen } = observeHeads(empty, { key, shown: [head(3, "aa".repeat(32))] });
  const unsignedHead = { height: 3, hash: "cc".repeat(32) };
  const otherKey = head(3, "dd".repeat(32), otherSeed);
  const malformed = { height: 3, hash: "ee".repeat(32), head_signature: "00" };
  const after = observeHeads(seen, { key, shown: [unsignedHead, otherKey, malformed] });
  assert.equal(after.fork, null);
  assert.deepEqual(after.unsigned, [unsignedHead, otherKey, malformed]);
  assert.deepEqual(after.seen, seen);
});

Deno.test("a new server key starts the memory again and says so", () => {
  const { seen } = observeHeads(empty, { key, shown: [head(1, "aa".repeat(32))] });
  const newKey = serverPublicKey(otherSeed);
  const fresh = head(1, "bb".repeat(32), otherSeed);
  const after = observeHeads(seen, { key: newKey, shown: [fresh] });
  assert.equal(after.keyChanged, true);
  assert.equal(after.fork, null);
  assert.deepEqual(after.seen, { key: newKey, heads: [fresh] });
});

Deno.test("the memory keeps the highest heads, round-trips storage and survives garbage", () => {
  const shown = Array.from({ length: MAX_SEEN_HEADS + 3 }, (_, i) => head(i, "ab".repeat(32)));
  const { seen } = observeHeads(empty, { key, shown });
  assert.equal(seen.heads.length, MAX_SEEN_HEADS);
  assert.equal(seen.heads[0].height, 3);
  assert.deepEqual(parseSeenHeads(serializeSeenHeads(seen)), seen);
  for (const garbage of [null, "", "{", "[]", '{"key":1,"heads":[]}', '{"key":null,"heads":[1]}']) {
    assert.deepEqual(parseSeenHeads(garbage), empty, String(garbage));
  }
  assert.deepEqual(headsBelow(seen, 5).map((h) => h.height), [5, 4, 3]);
});

Deno.test("the evidence download is the evidence, named by its height", () => {
  const { seen } = observeHeads(empty, { key, shown: [head(4, "aa".repeat(32))] });
  const { fork } = observeHeads(seen, { key, shown: [head(4, "bb".repeat(32))] });
  const file = evidenceFile(fork!);
  assert.equal(file.name, "ringvote-fork-evidence-height-4.json");
  assert.deepEqual(JSON.parse(file.text), fork);
});
