/**
 * The bulletin board's state and loaders (islands/board/state.ts) against the real application over
 * in-memory KV: the chain read and checked, the tally recounted, a block's votes and a vote's
 * proof, a new block followed, and a failing server shown as the board's problem; a server that
 * leaves a vote out of a block's listing, its total and the tally lowered to match, fails the
 * recount however well the counts agree.
 * @module
 */
import assert from "node:assert/strict";
import { type ApiClient, createApiClient } from "../../../lib/client/api_client.ts";
import { type BulletinState, createBulletinState } from "../../../islands/board/state.ts";
import { blockHash } from "../../../lib/protocol/chain.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { inMemoryApp } from "../../helpers/in_memory_app.ts";
import { makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";

/** Resolves once `done()` holds, checking every few milliseconds. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Follows `bulletin` until its first read has ended; answers the function that stops it. */
async function followed(bulletin: BulletinState): Promise<() => void> {
  let stop = () => {};
  await new Promise<void>((resolve) => (stop = bulletin.follow(resolve)));
  return stop;
}

/** The whole API in memory with `count` voters registered; `cast(i, payload)` votes as voter i. */
async function votingApp(count: number) {
  const app = await inMemoryApp();
  const voters = makeVoters(count);
  for (const v of voters) await app.api.registerKey({ key: v.key });
  const cast = (i: number, payload: string) =>
    app.api.submitVote(signedVote(voters[i], ringFor(voters[i], voters, 3), payload));
  return { ...app, cast };
}

Deno.test("the bulletin board's state follows the real chain", async (t) => {
  const { kv, store, api, cast } = await votingApp(5);
  const first = [await cast(0, "yes"), await cast(1, "no"), await cast(2, "yes")];
  await sealNextBlock(store, 1_700_000_000_000);
  await cast(3, "yes");
  await sealNextBlock(store, 1_700_000_060_000);

  const bulletin = createBulletinState(api, { pollMs: 20 });
  const stop = await followed(bulletin);
  try {
    await t.step("the first read: every block checked, the tally recounted", () => {
      assert.equal(bulletin.ready.value, true);
      assert.equal(bulletin.problem.value, null);
      assert.equal(bulletin.height.value, 2);
      assert.deepEqual(bulletin.blocks.value.map((b) => b.height), [0, 1, 2]);
      for (const check of bulletin.checks.value.values()) {
        assert.deepEqual([check.height, check.hashOk, check.link], [check.height, true, "ok"]);
      }
      assert.deepEqual(bulletin.recounted.value, [
        { payload: "yes", count: 3 },
        { payload: "no", count: 1 },
      ]);
      assert.ok(bulletin.rows.value.every((row) => row.ok));
    });

    await t.step("a block's votes and a vote's proof, every step green", async () => {
      await bulletin.selectBlock(1);
      assert.equal(bulletin.selected.value, 1);
      assert.deepEqual(
        bulletin.votes.value.get(1)?.entries.map((e) => e.voteId).sort(),
        first.map((a) => a.voteId).sort(),
      );
      await bulletin.openProof(1, first[1].voteId);
      const open = bulletin.openVote.value!;
      assert.equal(open.problem, null);
      assert.deepEqual(open.steps?.filter((s) => !s.ok), []);
      assert.deepEqual(open.steps?.map((s) => s.kind).slice(-3), ["root", "block", "previous"]);
    });

    await t.step("a vote the block does not list: the proof names the problem", async () => {
      await bulletin.openProof(2, "A".repeat(22));
      assert.equal(bulletin.openVote.value?.steps, null);
      assert.equal(
        bulletin.openVote.value?.problem,
        `Vote ${"A".repeat(22)} is not listed in block 2`,
      );
    });

    await t.step("a new block appears by itself, and the recount follows", async () => {
      await cast(4, "no");
      await sealNextBlock(store, 1_700_000_120_000);
      await until(() => bulletin.recounted.value?.[1]?.count === 2);
      assert.equal(bulletin.height.value, 3);
      assert.deepEqual(bulletin.blocks.value.map((b) => b.height), [0, 1, 2, 3]);
    });
  } finally {
    stop();
    kv.close();
  }
});

Deno.test("a server that cannot be read is the bulletin board's problem", async () => {
  const down = createApiClient({ fetch: () => Promise.reject(new TypeError("network down")) });
  const bulletin = createBulletinState(down, { pollMs: 60_000 });
  const stop = await followed(bulletin);
  stop();
  assert.equal(bulletin.ready.value, true);
  assert.equal(bulletin.problem.value, "GET /api/block/status failed: network down");
  assert.equal(bulletin.height.value, null);
});

/**
 * A client of `app` whose answers to paths containing `held` wait until `release()`: a slow
 * server for one call, the others answered at once.
 */
function slowFor(app: { request: typeof fetch }) {
  let held: string | null = null;
  const waiting: (() => void)[] = [];
  const fetch = async (url: string, init?: RequestInit) => {
    if (held !== null && url.includes(held)) {
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    return app.request(url, init);
  };
  return {
    api: createApiClient({ fetch }),
    hold(path: string) {
      held = path;
    },
    /** Lets every held call go on and waits a moment for its answer to be handled. */
    async release() {
      held = null;
      for (const go of waiting.splice(0)) go();
      await new Promise((resolve) => setTimeout(resolve, 50));
    },
  };
}

Deno.test("a slow proof answer never overwrites a later choice on the board", async (t) => {
  const { kv, store, app, cast } = await votingApp(4);
  const [a, b] = [await cast(0, "yes"), await cast(1, "no")];
  await sealNextBlock(store, 1_700_000_000_000);
  await cast(2, "yes");
  await sealNextBlock(store, 1_700_000_060_000);

  const slow = slowFor(app as unknown as { request: typeof fetch });
  const bulletin = createBulletinState(slow.api, { pollMs: 60_000 });
  const stop = await followed(bulletin);
  try {
    await t.step("a later vote's proof stays when the earlier one answers last", async () => {
      slow.hold(`/vote/${a.voteId}`);
      const earlier = bulletin.openProof(1, a.voteId);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await bulletin.openProof(1, b.voteId);
      assert.equal(bulletin.openVote.value?.voteId, b.voteId);
      assert.notEqual(bulletin.openVote.value?.steps, null);
      await slow.release();
      await earlier;
      assert.equal(bulletin.openVote.value?.voteId, b.voteId);
      assert.deepEqual(bulletin.openVote.value?.steps?.filter((s) => !s.ok), []);
    });

    await t.step("a proof answering after another block was selected is not reopened", async () => {
      slow.hold(`/vote/${a.voteId}`);
      const earlier = bulletin.openProof(1, a.voteId);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await bulletin.selectBlock(2);
      await slow.release();
      await earlier;
      assert.equal(bulletin.selected.value, 2);
      assert.equal(bulletin.openVote.value, null);
    });

    await t.step("the same proof asked once and answered slowly is shown", async () => {
      slow.hold(`/vote/${a.voteId}`);
      const only = bulletin.openProof(1, a.voteId);
      await slow.release();
      await only;
      assert.equal(bulletin.openVote.value?.voteId, a.voteId);
      assert.deepEqual(bulletin.openVote.value?.steps?.filter((s) => !s.ok), []);
    });
  } finally {
    stop();
    kv.close();
  }
});

Deno.test("the board counts every block and holds only the votes of the blocks read last", async (t) => {
  const { kv, store, api, cast } = await votingApp(6);
  const byBlock: string[][] = [];
  for (const [b, payloads] of [["yes", "no"], ["yes", "yes"], ["no", "yes"]].entries()) {
    const cast2 = [await cast(2 * b, payloads[0]), await cast(2 * b + 1, payloads[1])];
    byBlock.push(cast2.map((c) => c.voteId).sort());
    await sealNextBlock(store, 1_700_000_000_000 + 60_000 * b);
  }

  const bulletin = createBulletinState(api, { pollMs: 60_000, heldVotes: 2 });
  const stop = await followed(bulletin);
  const held = () => [...bulletin.votes.value.keys()];
  const idsIn = (h: number) => bulletin.votes.value.get(h)?.entries.map((e) => e.voteId).sort();
  try {
    await t.step("every block counted, the last one's votes held", () => {
      assert.deepEqual(bulletin.recounted.value, [
        { payload: "yes", count: 4 },
        { payload: "no", count: 2 },
      ]);
      assert.deepEqual([...bulletin.counted.value.keys()], [1, 2, 3]);
      assert.deepEqual(bulletin.counted.value.get(2)?.payloads, new Map([["yes", 2]]));
      assert.deepEqual(held(), [3]);
      assert.deepEqual(idsIn(3), byBlock[2]);
    });

    await t.step("a block let go is read again when selected, and the others let go", async () => {
      await bulletin.selectBlock(1);
      assert.deepEqual(held(), [1]);
      assert.deepEqual(idsIn(1), byBlock[0]);
    });

    await t.step("the open vote's block is held, let go once another is selected", async () => {
      await bulletin.openProof(2, byBlock[1][0]);
      assert.deepEqual(bulletin.openVote.value?.steps?.filter((s) => !s.ok), []);
      assert.deepEqual(held(), [2]);
      await bulletin.selectBlock(3);
      // Selecting block 3 closes the proof of block 2, which is then let go.
      assert.deepEqual(held(), [3]);
      assert.deepEqual(bulletin.recounted.value?.[0], { payload: "yes", count: 4 });
    });
  } finally {
    stop();
    kv.close();
  }
});

Deno.test("a listing short of its block's size fails the recount, though the tally agrees", async (t) => {
  // Block 1 holds 3 votes; 99 blocks of one vote each follow (height 100: block 1 is the lowest the
  // board shows, its last 100 blocks), then one more (height 101: block 1 is below them, its header
  // read for the recount alone).
  const { store, api, cast } = await votingApp(104);
  await cast(0, "yes"), await cast(1, "no"), await cast(2, "yes");
  await sealNextBlock(store, 1_700_000_000_000);
  const sealOne = async (i: number) => {
    await cast(i, "yes");
    await sealNextBlock(store, 1_700_000_000_000 + i * 60_000);
  };
  for (let i = 3; i < 102; i++) await sealOne(i);
  // A lie in block 1's header: another prev_hash, its hash made again to match its fields.
  const rewritten: ApiClient = {
    ...api,
    blocks: async (offset, limit) => {
      const page = await api.blocks(offset, limit);
      const items = page.items.map((b) => {
        if (b.height !== 1) return b;
        const lie = { ...b, prev_hash: "ab".repeat(32) };
        return { ...lie, hash: blockHash(lie) };
      });
      return { ...page, items };
    },
  };
  // The lie: block 1 listed without its "no" vote, its listing's total and the tally lowered to
  // match. The block's header, whose hash and link the recount checks, still says 3.
  const lying: ApiClient = {
    ...api,
    blockVotes: (height) => async (offset, limit) => {
      const page = await api.blockVotes(height)(offset, limit);
      if (height !== 1) return page;
      return { items: page.items.filter((e) => e.vote.payload !== "no"), total: page.total - 1 };
    },
    tally: async () => {
      const served = await api.tally();
      return {
        total: served.total - 1,
        results: served.results.filter((r) => r.payload !== "no"),
      };
    },
  };
  /** Follows the chain through `client` until the recount ends; its problem and lowest block. */
  const recountOver = async (client: ApiClient) => {
    const bulletin = createBulletinState(client, { pollMs: 20 });
    const stop = await followed(bulletin);
    try {
      await until(() => bulletin.recounted.value !== null);
      return {
        trouble: bulletin.recountTrouble.value,
        lowest: bulletin.blocks.value[0].height,
        agree: bulletin.rows.value.every((row) => row.ok),
        bulletin,
      };
    } finally {
      stop();
    }
  };

  await t.step("block 1 the lowest shown: its header is checked against genesis", async () => {
    const honest = await recountOver(api);
    assert.deepEqual([honest.lowest, honest.trouble], [1, null]);
    const found = await recountOver(rewritten);
    assert.equal(found.lowest, 1);
    assert.deepEqual(found.trouble, { height: 1, size: null, total: 0, counted: 0 });
  });

  await sealOne(102);
  await t.step("block 1 below the blocks shown: its listing is held to its header", async () => {
    for (
      const [client, trouble] of [
        [api, null],
        [lying, { height: 1, size: 3, total: 2, counted: 2 }],
      ] as const
    ) {
      const found = await recountOver(client);
      assert.equal(found.lowest, 2);
      assert.deepEqual(found.trouble, trouble);
      // The served counts and the recount agree either way: only the header shows the lie.
      assert.ok(found.agree);
    }
  });

  await t.step("earlier blocks asked twice at once are read and shown once", async () => {
    const { bulletin } = await recountOver(api);
    await Promise.all([bulletin.loadEarlier(), bulletin.loadEarlier()]);
    assert.deepEqual(
      bulletin.blocks.value.map((b) => b.height),
      Array.from({ length: 102 }, (_, h) => h),
    );
    assert.ok([...bulletin.checks.value.values()].every((c) => c.hashOk && c.link === "ok"));
  });
});
