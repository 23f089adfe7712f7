// The member cache (lib/protocol/member_cache.ts): least-recently-used eviction, tables only within
// the budget, and a table freed by an eviction given to the next member.
import assert from "node:assert/strict";
import { bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import { keyPairFromSeed } from "../../lib/protocol/keys.ts";
import {
  admitKey,
  createMemberCache,
  TABLE_BYTES_PER_MEMBER,
} from "../../lib/protocol/member_cache.ts";
import { checkMember, type Member } from "../../lib/protocol/ring_signature.ts";
import { drbg } from "../helpers/drbg.ts";

const next = drbg("member-cache");
/** Checked members of fresh keys, by hex key, each a new object (a cache may add tables to it). */
const KEYS = Array.from({ length: 6 }, () => bytesToHex(keyPairFromSeed(next(32)).publicKey));
function member(key: string): Member {
  const checked = checkMember(hexToBytes(key, 32));
  if (typeof checked === "string") throw new Error(checked);
  return checked;
}
const [A, B, C, D, E] = KEYS;
/** Budget for exactly `n` tabled members at window 3 (the cheapest tables to build). */
const tablesFor = (n: number) => ({
  window: 3 as const,
  tableBudgetBytes: n * TABLE_BYTES_PER_MEMBER[3],
});

Deno.test("a full cache evicts the least recently used member, not the oldest inserted", () => {
  const cache = createMemberCache({ maxMembers: 3, tableBudgetBytes: 0 });
  for (const key of [A, B, C]) cache.set(key, member(key));
  assert.ok(cache.get(A), "A is used: now the most recent");
  cache.set(D, member(D));
  assert.deepEqual(new Set(cache.keys()), new Set([A, C, D]), "B, least recently used, left");
  assert.equal(cache.size, 3);
  // And again: C is now the least recently used; a lookup of D and A keeps them.
  cache.get(D);
  cache.get(A);
  cache.set(E, member(E));
  assert.deepEqual(new Set(cache.keys()), new Set([A, D, E]));
});

Deno.test("setting a member already cached neither evicts nor reorders", () => {
  const cache = createMemberCache({ maxMembers: 2, tableBudgetBytes: 0 });
  cache.set(A, member(A));
  cache.set(B, member(B));
  cache.set(A, member(A));
  assert.deepEqual([...cache.keys()], [A, B]);
});

Deno.test("evicting a tabled member frees its table for the next member", () => {
  const cache = createMemberCache({ maxMembers: 2, ...tablesFor(1) });
  const held = new Map<string, Member>();
  const put = (key: string) => {
    const m = member(key);
    held.set(key, m);
    cache.set(key, m);
  };
  /** Members present in the cache that hold tables, from the objects the cache was given. */
  const tabledPresent = () => [...cache.keys()].filter((k) => held.get(k)!.tables).length;

  put(A);
  put(B);
  assert.ok(held.get(A)!.tables, "A got the one table of the budget");
  assert.equal(held.get(B)!.tables, undefined, "B is over the table budget");
  assert.equal(cache.tabled, 1);

  cache.get(B); // A is now the least recently used, and the only tabled member
  put(C);
  assert.deepEqual(new Set(cache.keys()), new Set([B, C]));
  assert.ok(held.get(C)!.tables, "the table A freed went to C");
  assert.equal(cache.tabled, 1, "the count went down with A and up with C");
  assert.equal(cache.tabled, tabledPresent());
  assert.equal(cache.tabled * cache.bytesPerTabledMember, TABLE_BYTES_PER_MEMBER[3]);

  cache.get(C); // B, untabled, is the least recently used
  put(D);
  assert.deepEqual(new Set(cache.keys()), new Set([C, D]));
  assert.equal(held.get(D)!.tables, undefined, "no table was freed: D has none");
  assert.equal(cache.tabled, tabledPresent());

  put(E); // evicts C, the tabled one
  assert.ok(held.get(E)!.tables, "C's table went to E");
  assert.equal(cache.tabled, 1);
  assert.equal(cache.tabled, tabledPresent());
});

Deno.test("the tabled count tracks the members present through a long sequence of uses", () => {
  const cache = createMemberCache({ maxMembers: 3, ...tablesFor(2) });
  const held = new Map<string, Member>();
  const next = drbg("member-cache-sequence");
  for (let step = 0; step < 60; step++) {
    const key = KEYS[next(1)[0] % KEYS.length];
    if (next(1)[0] % 2 === 0) {
      cache.get(key);
    } else if (![...cache.keys()].includes(key)) {
      held.set(key, member(key));
      cache.set(key, held.get(key)!);
    }
    const present = [...cache.keys()];
    assert.ok(present.length <= 3);
    assert.equal(cache.tabled, present.filter((k) => held.get(k)!.tables).length, `step ${step}`);
    assert.ok(cache.tabled <= 2, "never more tables than the budget");
    // While a table is free, every member present holds one.
    if (cache.tabled < 2) assert.equal(cache.tabled, present.length, `step ${step}`);
  }
});

Deno.test("admitKey remembers a registered key with its tables, and refuses a bad one", () => {
  const cache = createMemberCache(tablesFor(1));
  assert.equal(admitKey(cache, A), true);
  assert.ok(cache.get(A)?.tables);
  assert.equal(admitKey(cache, "zz"), false);
  assert.equal(admitKey(cache, "01".padEnd(64, "0")), false, "the identity is refused");
  assert.equal(cache.size, 1);
});
