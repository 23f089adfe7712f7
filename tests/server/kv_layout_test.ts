// The KV key layout of protocol §5 and the batching helpers, over a real in-memory Deno KV.
import assert from "node:assert/strict";
import {
  absent,
  commitInBatches,
  GET_MANY_LIMIT,
  getManyChunked,
  kvKeys,
} from "../../server/kv_layout.ts";

/** Runs `test` over a fresh in-memory database. */
function withKv(test: (kv: Deno.Kv) => Promise<void>): () => Promise<void> {
  return async () => {
    const kv = await Deno.openKv(":memory:");
    try {
      await test(kv);
    } finally {
      kv.close();
    }
  };
}

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
