/**
 * Voter storage (lib/client/voter/voters.ts): storage keys, the voter list, names and the ring
 * sample.
 * @module
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  cryptoRandomIndex,
  namespaceOf,
  parseVoterList,
  randomIndexFrom,
  sampleRing,
  serializeVoterList,
  storageKey,
  TooFewKeysError,
  uniqueNamespace,
  VOTER_ENTRIES,
  voterKeyNames,
} from "../../../lib/client/voter/voters.ts";
import { MapStorage } from "../../helpers/map_storage.ts";

Deno.test("storage keys are the entry names prefixed by the voter's namespace", () => {
  const keys = VOTER_ENTRIES.map((entry) => storageKey("Ada Byron King", entry));
  assert.deepEqual(keys, [
    "Ada Byron King:publicKey",
    "Ada Byron King:privateKey",
    "Ada Byron King:keyId",
    "Ada Byron King:voteId",
    "Ada Byron King:blockId",
    "Ada Byron King:voteContent",
    "Ada Byron King:voteSignature",
  ]);
});

Deno.test("the voter list round-trips through one comma-separated string", () => {
  const list = ["Ada Byron King", "Alan Mathison Turing"];
  assert.equal(serializeVoterList(list), "Ada Byron King,Alan Mathison Turing");
  assert.deepEqual(parseVoterList(serializeVoterList(list)), list);
  assert.deepEqual(parseVoterList(null), []);
  assert.deepEqual(parseVoterList(""), []);
  assert.deepEqual(parseVoterList("a,,b, a ,b"), ["a", "b"]);
});

Deno.test("namespaceOf joins the three names and drops commas", () => {
  assert.equal(namespaceOf({ first: "Ada", middle: "Byron", last: "King" }), "Ada Byron King");
  assert.equal(namespaceOf({ first: "A,da", middle: " ", last: "King  Jr" }), "Ada King Jr");
});

Deno.test("uniqueNamespace generates again on a collision", () => {
  const names = [
    { first: "Ada", middle: "Byron", last: "King" },
    { first: "Ada", middle: "Byron", last: "King" },
    { first: "Alan", middle: "M", last: "Turing" },
  ];
  let calls = 0;
  const generated = uniqueNamespace(["Ada Byron King"], () => names[calls++]);
  assert.equal(generated, "Alan M Turing");
  assert.equal(calls, 3);
  assert.throws(
    () => uniqueNamespace(["Ada Byron King"], () => names[0], { maxTries: 5 }),
    /no unique voter name after 5 tries/,
  );
});

Deno.test("sampleRing draws distinct ids from 1..total with the own id, ascending", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 2, max: 12 }).chain((ringSize) =>
        fc.tuple(
          fc.constant(ringSize),
          fc.integer({ min: ringSize, max: 40 }),
          fc.infiniteStream(fc.nat()),
        )
      ),
      fc.nat(),
      ([ringSize, total, stream], ownSeed) => {
        const ownId = 1 + (ownSeed % total);
        const it = stream[Symbol.iterator]();
        const ids = sampleRing({ total, ringSize, ownId }, (n) => it.next().value! % n);
        assert.equal(ids.length, ringSize);
        assert.equal(new Set(ids).size, ringSize);
        assert.ok(ids.includes(ownId));
        assert.ok(ids.every((id) => Number.isInteger(id) && id >= 1 && id <= total));
        assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
      },
    ),
  );
});

Deno.test("sampleRing forces the own id in by replacing a drawn member", () => {
  // The source draws ids 1..8 in order, then picks position 2 (id 3) to replace.
  const draws = [0, 1, 2, 3, 4, 5, 6, 7, 2];
  let i = 0;
  const ids = sampleRing({ total: 20, ringSize: 8, ownId: 15 }, () => draws[i++]);
  assert.deepEqual(ids, [1, 2, 4, 5, 6, 7, 8, 15]);
});

Deno.test("sampleRing refuses a ring larger than the registered keys", () => {
  assert.throws(
    () => sampleRing({ total: 5, ringSize: 8, ownId: 1 }),
    (error: unknown) =>
      error instanceof TooFewKeysError && error.registered === 5 && error.needed === 8,
  );
  assert.throws(() => sampleRing({ total: 9, ringSize: 8, ownId: 10 }), RangeError);
  assert.throws(() => sampleRing({ total: 9, ringSize: 1, ownId: 1 }), RangeError);
});

Deno.test("cryptoRandomIndex stays in range and reaches every value", () => {
  const seen = new Set<number>();
  for (let i = 0; i < 400; i++) {
    const v = cryptoRandomIndex(5);
    assert.ok(Number.isInteger(v) && v >= 0 && v < 5);
    seen.add(v);
  }
  assert.equal(seen.size, 5);
  assert.throws(() => cryptoRandomIndex(0), RangeError);
});

Deno.test("the voters stored in this browser name their public keys", () => {
  const storage = new MapStorage();
  storage.setItem("voters", "Ada B. Lovelace,Alan M. Turing,Grace B. Hopper");
  storage.setItem("Ada B. Lovelace:publicKey", "k1");
  storage.setItem("Grace B. Hopper:publicKey", "k9");
  assert.deepEqual(
    [...voterKeyNames(storage)],
    [["k1", "Ada B. Lovelace"], ["k9", "Grace B. Hopper"]],
  );
});

Deno.test("randomIndexFrom draws again rather than favour the low values", () => {
  // 2^32 mod 3 = 1: the word 2^32 − 1 would make 0 likelier than 1 and 2, so it is drawn again.
  const words = [[255, 255, 255, 255], [0, 0, 0, 5]];
  const index = randomIndexFrom(() => Uint8Array.from(words.shift()!));
  assert.equal(index(3), 2);
  assert.equal(words.length, 0);
  assert.throws(() => index(0), RangeError);
});
