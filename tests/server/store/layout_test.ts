// The KV key layout of protocol §5 and the batching helpers, over a real in-memory Deno KV, and
// the MAC binding a key record's precomputation to its key (protocol §5.2).
import assert from "node:assert/strict";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, concatBytes, utf8 } from "../../../lib/protocol/bytes.ts";
import {
  type KeyPrecomputation,
  PRECOMPUTATION_BYTES,
  precomputeKey,
} from "../../../lib/protocol/key_precomputation.ts";
import { generateSeed, keyPairFromSeed } from "../../../lib/protocol/keys.ts";
import {
  isBoundRecord,
  KEY_RECORD_MAC_LABEL,
  KEY_RECORD_SECRET_LABEL,
  keyRecordMac,
  keyRecordSecret,
} from "../../../server/store/key_record_mac.ts";
import { GET_MANY_LIMIT, getManyChunked } from "../../../server/store/kv_calls.ts";
import { commitInBatches, keyBytes } from "../../../server/store/batches.ts";
import { absent, kvKeys, lastPart, ledgerKeys, pathHex } from "../../../server/store/layout.ts";
import { withKv } from "../../helpers/kv.ts";

Deno.test("kvKeys: the keys of protocol §5, collection name first", () => {
  const voteId = "AAAAAAAAAAAAAAAAAAAAAA";
  const tag = "ab".repeat(32);
  assert.deepEqual(kvKeys.open(), ["cfg", "open"]);
  assert.deepEqual(kvKeys.head(), ["cfg", "head"]);
  assert.deepEqual(kvKeys.vote(3, voteId), ["vote", 3, voteId]);
  assert.deepEqual(kvKeys.votesOf(3), ["vote", 3]);
  assert.deepEqual(kvKeys.voteRef(voteId), ["voteref", voteId]);
  assert.deepEqual(kvKeys.tag(tag), ["tag", tag]);
  assert.deepEqual(kvKeys.seal(3), ["seal", 3]);
  assert.deepEqual(kvKeys.voteIndex(voteId), ["voteidx", voteId]);
  assert.deepEqual(kvKeys.block(3), ["block", 3]);
  assert.deepEqual(kvKeys.leaf(3, 7), ["leaf", 3, 7]);
  assert.deepEqual(kvKeys.key(5), ["key", 5]);
  assert.deepEqual(kvKeys.keyId(tag), ["keyid", tag]);
});

Deno.test("ledgerKeys: every key of a prefixed ledger is the prefix and the key of the layout", () => {
  const voteId = "AAAAAAAAAAAAAAAAAAAAAA";
  const tag = "ab".repeat(32);
  const lab = ledgerKeys(["lab", 2]);
  const pairs: [Deno.KvKey, Deno.KvKey][] = [
    [lab.open(), kvKeys.open()],
    [lab.head(), kvKeys.head()],
    [lab.keyCount(), kvKeys.keyCount()],
    [lab.serverKey(), kvKeys.serverKey()],
    [lab.vote(3, voteId), kvKeys.vote(3, voteId)],
    [lab.votesOf(3), kvKeys.votesOf(3)],
    [lab.voteRef(voteId), kvKeys.voteRef(voteId)],
    [lab.tag(tag), kvKeys.tag(tag)],
    [lab.seal(3), kvKeys.seal(3)],
    [lab.voteIndex(voteId), kvKeys.voteIndex(voteId)],
    [lab.block(3), kvKeys.block(3)],
    [lab.leaf(3, 7), kvKeys.leaf(3, 7)],
    [lab.key(5), kvKeys.key(5)],
    [lab.keyId(tag), kvKeys.keyId(tag)],
  ];
  for (const [prefixed, plain] of pairs) assert.deepEqual(prefixed, ["lab", 2, ...plain]);
  assert.deepEqual(lab.voteCount(), ["lab", 2, "cfg", "votes"]);
  assert.deepEqual(kvKeys.prefix, []);
  assert.equal(lastPart(lab.leaf(3, 7)), 7);
  assert.equal(lastPart(kvKeys.vote(3, voteId)), voteId);
});

Deno.test(
  "getManyChunked reads more than one getMany's worth, in the order asked",
  withKv(async (kv) => {
    const n = 3 * GET_MANY_LIMIT + 4;
    for (let i = 0; i < n; i += 2) await kv.set(["n", i], i);
    const keys = Array.from({ length: n }, (_, i) => ["n", n - 1 - i]);
    const entries = await getManyChunked<number>(kv, keys);
    assert.deepEqual(
      entries.map((e) => e.value),
      keys.map(([, i]) => ((i as number) % 2 === 0 ? i : null)),
    );
    assert.deepEqual(await getManyChunked(kv, []), []);
  }),
);

Deno.test("keyBytes counts a key as KV encodes it", () => {
  assert.equal(keyBytes(kvKeys.voteIndex("A".repeat(22))), 9 + 24);
  assert.equal(keyBytes(kvKeys.leaf(3, 7)), 6 + 9 + 9);
  assert.equal(keyBytes(["a\0b"]), 2 + 3 + 1, "a 0x00 is escaped");
  assert.equal(keyBytes([new Uint8Array([0, 1])]), 2 + 2 + 1);
  assert.equal(keyBytes(["é"]), 2 + 2, "UTF-8");
  assert.equal(keyBytes([true, 1n]), 1 + 3);
});

Deno.test(
  "keyBytes is exact: keys of 80 KiB set in one commit land, one byte more is refused",
  withKv(async (kv) => {
    // 800 keys of 102 bytes and one of 320 come to 81,920 bytes, KV's most keys set per commit.
    const commit = (last: number) => {
      const keys: Deno.KvKey[] = Array.from({ length: 800 }, (_, i) => ["k", i, "x".repeat(88)]);
      keys.push(["k", -1, "y".repeat(last - 14)]);
      const op = kv.atomic();
      for (const key of keys) op.set(key, 0);
      return { total: keys.reduce((sum, key) => sum + keyBytes(key), 0), commit: op.commit() };
    };
    const fits = commit(320);
    assert.equal(fits.total, 80 * 1024);
    assert.equal((await fits.commit).ok, true);
    const over = commit(321);
    assert.equal(over.total, 80 * 1024 + 1);
    await assert.rejects(over.commit, /key size/i);
  }),
);

Deno.test("pathHex answers a stored path in hex, whether stored as bytes or hex", () => {
  const hashes = [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)];
  const hex = hashes.map(bytesToHex);
  assert.deepEqual(pathHex(concatBytes(...hashes)), hex);
  assert.deepEqual(pathHex(hex), hex);
  assert.deepEqual(pathHex(new Uint8Array(0)), []);
  assert.throws(() => pathHex(new Uint8Array(33)), /not whole 32-byte hashes/);
});

Deno.test(
  "commitInBatches keeps each group in one commit within the limits",
  withKv(async (kv) => {
    const groups = Array.from({ length: 9 }, (_, i) => ({
      entries: [[["a", i], i], [["b", i], -i]] as [Deno.KvKey, unknown][],
      bytes: 100,
    }));
    const commits: number[] = [];
    const seen: number[] = [];
    await commitInBatches(kv, groups, {
      maxMutations: 5,
      maxBytes: 1_000,
      afterCommit: async (k) => {
        commits.push(k);
        // After each commit, both entries of every group so far are stored: none split.
        for await (const e of kv.list<number>({ prefix: ["a"] })) {
          if (!seen.includes(e.value)) seen.push(e.value);
          assert.equal((await kv.get(["b", e.value])).value, -e.value);
        }
      },
    });
    // Two groups (4 mutations) per commit: nine groups take five commits.
    assert.deepEqual(commits, [1, 2, 3, 4, 5]);
    assert.equal(seen.length, 9);

    const byBytes: number[] = [];
    await commitInBatches(kv, groups, { maxBytes: 250, afterCommit: (k) => void byBytes.push(k) });
    assert.equal(byBytes.length, 5, "two groups of 100 bytes per commit of at most 250");
  }),
);

Deno.test(
  "commitInBatches stops where afterCommit throws, leaving later groups unwritten",
  withKv(async (kv) => {
    const groups = Array.from({ length: 6 }, (_, i) => ({
      entries: [[["g", i], i]] as [Deno.KvKey, unknown][],
      bytes: 10,
    }));
    await assert.rejects(
      commitInBatches(kv, groups, {
        maxMutations: 2,
        afterCommit: (k) => {
          if (k === 2) throw new Error("stop after 2");
        },
      }),
      /stop after 2/,
    );
    const stored: number[] = [];
    for await (const e of kv.list<number>({ prefix: ["g"] })) stored.push(e.value);
    assert.deepEqual(stored, [0, 1, 2, 3]);
  }),
);

Deno.test(
  "absent() is the check that a key holds nothing yet",
  withKv(async (kv) => {
    const first = await kv.atomic().check(absent(["x"])).set(["x"], 1).commit();
    assert.equal(first.ok, true);
    const second = await kv.atomic().check(absent(["x"])).set(["x"], 2).commit();
    assert.equal(second.ok, false);
    assert.equal((await kv.get(["x"])).value, 1);
  }),
);

/** HMAC-SHA-256 by Web Crypto: a third implementation, next to node:crypto's and noble's. */
async function webCryptoHmac(key: Uint8Array, message: Uint8Array): Promise<Uint8Array> {
  const imported = await crypto.subtle.importKey(
    "raw",
    key.slice(),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", imported, message.slice()));
}

function newKey(): Uint8Array {
  return keyPairFromSeed(generateSeed()).publicKey;
}

Deno.test("the key-record secret and MAC are HMAC-SHA-256 of their labelled inputs (noble and Web Crypto agree)", async () => {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const secret = keyRecordSecret(seed);
  assert.deepEqual(secret, hmac(sha256, seed, utf8(KEY_RECORD_SECRET_LABEL)));
  assert.deepEqual(secret, await webCryptoHmac(seed, utf8(KEY_RECORD_SECRET_LABEL)));
  assert.notDeepEqual(secret, seed);
  const key = newKey();
  const pre = precomputeKey(key) as KeyPrecomputation;
  const mac = keyRecordMac(pre, { key, secret });
  const message = concatBytes(utf8(KEY_RECORD_MAC_LABEL), key, pre);
  assert.deepEqual(mac, hmac(sha256, secret, message));
  assert.deepEqual(mac, await webCryptoHmac(secret, message));
  assert.throws(() => keyRecordSecret(seed.slice(1)), RangeError);
  assert.throws(() => keyRecordMac(pre.slice(1), { key, secret }), RangeError);
  assert.throws(() => keyRecordMac(pre, { key: key.slice(1), secret }), RangeError);
  assert.throws(() => keyRecordMac(pre, { key, secret: seed.slice(1) }), RangeError);
});

Deno.test("a record's precomputation is bound to its key only as written, under this secret, with its MAC", () => {
  const secret = keyRecordSecret(crypto.getRandomValues(new Uint8Array(32)));
  const [a, b] = [newKey(), newKey()];
  const pre = precomputeKey(a) as KeyPrecomputation;
  const mac = keyRecordMac(pre, { key: a, secret });
  assert.equal(isBoundRecord({ pre, mac }, { key: a, secret }), true);
  assert.equal(isBoundRecord(structuredClone({ id: 1, pre, mac }), { key: a, secret }), true);

  const flipped = (bytes: Uint8Array, at: number) => {
    const out = bytes.slice();
    out[at] ^= 1;
    return out;
  };
  // Every point of both combs counts, not only entry 1 of P's comb.
  for (const at of [0, 64, 1983, 1984, 2048, PRECOMPUTATION_BYTES - 1]) {
    assert.equal(isBoundRecord({ pre: flipped(pre, at), mac }, { key: a, secret }), false, `${at}`);
  }
  assert.equal(isBoundRecord({ pre, mac: flipped(mac, 31) }, { key: a, secret }), false);
  // Another key's record, MAC and all; this record under another key; another server's secret.
  const preB = precomputeKey(b) as KeyPrecomputation;
  const macB = keyRecordMac(preB, { key: b, secret });
  assert.equal(isBoundRecord({ pre: preB, mac: macB }, { key: a, secret }), false);
  assert.equal(isBoundRecord({ pre, mac }, { key: b, secret }), false);
  const otherSecret = keyRecordSecret(crypto.getRandomValues(new Uint8Array(32)));
  assert.equal(isBoundRecord({ pre, mac }, { key: a, secret: otherSecret }), false);
  // No MAC (a record written before records carried one), a malformed one, an earlier form.
  for (const bad of [undefined, null, mac.slice(1), Array.from(mac)]) {
    assert.equal(isBoundRecord({ pre, mac: bad }, { key: a, secret }), false);
  }
  assert.equal(isBoundRecord({ pre: { point: [], hp: [] }, mac }, { key: a, secret }), false);
  assert.equal(isBoundRecord({}, { key: a, secret }), false);
  assert.throws(() => isBoundRecord({ pre, mac }, { key: a.slice(1), secret }), RangeError);
});
