// Round trips per operation, counted by the KV Connect server (tests/helpers/kv_connect_server.ts):
// what round_trips_test.ts keeps within budget and what docs/performance.md reports. Each figure is
// the data-path requests (snapshot reads and atomic writes) the server saw during one call.
//
// `deno run -A tests/server/kv_connect/round_trips.ts 7 94` prints the table of docs/performance.md:
// each operation's round trips, then its time with each round trip held that many ms.
import assert from "node:assert/strict";
import { createApp } from "../../../server/app.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createRounds } from "../../../server/store/rounds.ts";
import { createStore, randomVoteId, type Store } from "../../../server/store/mod.ts";
import { kvKeys } from "../../../server/store/layout.ts";
import type { VoteRecord } from "../../../lib/protocol/schemas.ts";
import type { KvConnectServer } from "../../helpers/kv_connect_server.ts";
import {
  call,
  makeVoters,
  ringFor,
  signedVote,
  type TestVoter,
  unsignedVote,
} from "../../helpers/ledger_fixtures.ts";
import { testVerifier } from "../../helpers/test_verifier.ts";

/** One measured operation: its name, the round trips it took and how long, in ms. */
export type Measured = { operation: string; trips: number; ms: number };

/** The round trips `server` saw while `work` ran, and how long it took. */
export async function measured(
  operation: string,
  { server, work, per = 1 }: {
    server: KvConnectServer;
    work: () => Promise<unknown>;
    per?: number;
  },
): Promise<Measured> {
  const before = server.roundTrips;
  const started = performance.now();
  await work();
  return {
    operation,
    trips: (server.roundTrips - before) / per,
    ms: (performance.now() - started) / per,
  };
}

/**
 * A fresh instance over the server's database: a new client, store and app, nothing in memory;
 * with `rounds`, the rounds served beside the election, as main.ts composes them.
 */
export async function freshInstance(server: KvConnectServer, { rounds = false } = {}) {
  const kv = await server.openKv();
  const store = await createStore(kv);
  const served = rounds
    ? await createRounds(kv, {
      election: store,
      electionIntervalMs: 60_000,
      adminToken: "presenter-token-0123456789",
    })
    : undefined;
  const app = createApp({ store, rounds: served, verifier: testVerifier });
  return { kv, store, app };
}

/**
 * Writes `count` votes straight into the open block, as `count` vote commits would (vote,
 * reference and tag), in commits of 300 votes: a large block at no signing cost. Each vote has a
 * real ring signature's size (the `like` vote's signature and ring), and its own payload.
 */
export async function fillOpenBlock(
  kv: Deno.Kv,
  { count, like }: { count: number; like: VoteRecord },
): Promise<void> {
  const open = await kv.get<{ height: number }>(kvKeys.open());
  const height = open.value!.height;
  for (let done = 0; done < count;) {
    const op = kv.atomic();
    for (const end = Math.min(count, done + 300); done < end; done++) {
      const voteId = randomVoteId();
      const { tag } = unsignedVote("");
      op.set(kvKeys.vote(height, voteId), { ...like, payload: `choice ${done % 5}` })
        .set(kvKeys.voteRef(voteId), { height })
        .set(kvKeys.tag(tag), { voteId, height });
    }
    assert.ok((await op.commit()).ok);
  }
}

/**
 * Measures every operation of the budget on `server` (a fresh database): registration under 16
 * concurrent clients, a vote on a fresh instance and on a warm one, status, a vote's proof,
 * 100-vote pages at and between leaves with a leaf index entry, sealing a 250-vote and a
 * `bigBlock`-vote block, and a fresh instance's first tally, then again after ten more blocks.
 */
export async function measureRoundTrips(
  server: KvConnectServer,
  { bigBlock = 10_000 }: { bigBlock?: number } = {},
): Promise<Measured[]> {
  const out: Measured[] = [];
  const measure = async (operation: string, work: () => Promise<unknown>, per = 1) => {
    out.push(await measured(operation, { server, work, per }));
  };
  const instance = await freshInstance(server);
  const { app, store, kv } = instance;
  const fresh: { kv: Deno.Kv }[] = [instance];
  let now = 1_800_000_000_000;
  try {
    const voters = makeVoters(24);
    const ring = voters.slice(0, 8);
    for (const v of ring) {
      assert.equal((await call(app, "POST", "/api/pki/key", { key: v.key })).status, 201);
    }
    await measure("registration, 16 concurrent clients (per key)", async () => {
      const answers = await Promise.all(
        voters.slice(8).map((v) => call(app, "POST", "/api/pki/key", { key: v.key })),
      );
      for (const a of answers) assert.equal(a.status, 201, JSON.stringify(a.body));
    }, 16);

    // A vote on an instance that has read nothing yet, then one whose ring it has read.
    const cold = await freshInstance(server);
    fresh.push(cold);
    const vote = (voter: TestVoter, payload: string) =>
      call(cold.app, "POST", "/api/vote", signedVote(voter, ring, payload));
    let accepted: { voteId: string; blockId: number } | null = null;
    await measure("POST /api/vote, fresh instance", async () => {
      const answer = await vote(ring[0], "choice 0");
      assert.equal(answer.status, 202, JSON.stringify(answer.body));
      accepted = answer.body;
    });
    await measure("POST /api/vote, ring already read", async () => {
      assert.equal((await vote(ring[1], "choice 1")).status, 202);
    });
    for (const v of ring.slice(2)) assert.equal((await vote(v, "choice 2")).status, 202);

    await measure("GET /api/block/status", async () => {
      assert.equal((await call(app, "GET", "/api/block/status")).status, 200);
    });

    const like = signedVote(ring[0], ringFor(ring[0], voters, 8), "like");
    const likeRecord = { payload: "", signature: like.signature, publicKeys: like.publicKeys };
    await fillOpenBlock(kv, { count: 242, like: likeRecord });
    await measure("sealing a 250-vote block", () => sealNextBlock(store, now += 60_000));

    const { voteId, blockId } = accepted!;
    await measure("a vote's proof", async () => {
      const proof = await call(app, "GET", `/api/block/id/${blockId}/vote/${voteId}`);
      assert.equal(proof.status, 200, JSON.stringify(proof.body));
    });
    // Leaves 0 and 100 have a leaf index entry; a page from leaf 150 lists from leaf 100.
    for (const offset of [0, 100, 150]) {
      await measure(`a 100-vote page (from leaf ${offset} of a 250-vote block)`, async () => {
        const page = await call(app, "GET", `/api/block/id/${blockId}/votes?offset=${offset}`);
        assert.equal(page.status, 200);
        assert.equal(page.body.votes.length, 100);
        assert.equal(page.body.votes[0].index, offset);
      });
    }

    if (bigBlock > 0) {
      await fillOpenBlock(kv, { count: bigBlock, like: likeRecord });
      await measure(
        `sealing a ${bigBlock.toLocaleString("en")}-vote block`,
        () => sealNextBlock(store, now += 60_000),
      );
    }

    const firstTally = async (blocks: number) => {
      const reader = await freshInstance(server);
      fresh.push(reader);
      await measure(`a fresh instance's first GET /api/tally, ${blocks} blocks`, async () => {
        assert.equal((await call(reader.app, "GET", "/api/tally")).status, 200);
      });
    };
    const { height } = await store.status();
    await firstTally(height);
    await sealSmallBlocks(store, { count: 10, at: () => now += 60_000 });
    await firstTally(height + 10);
    return out;
  } finally {
    for (const { kv } of fresh) kv.close();
  }
}

/** Seals `count` blocks of one unsigned vote each. */
async function sealSmallBlocks(store: Store, { count, at }: { count: number; at: () => number }) {
  for (let i = 0; i < count; i++) {
    const { vote, tag } = unsignedVote(`choice ${i % 3}`);
    await store.submitVote(vote, tag);
    await sealNextBlock(store, at());
  }
}

/** The measurements as Markdown table rows: operation, round trips, then each run's ms. */
export function tripTable(runs: Measured[][]): string {
  return runs[0].map((row, i) =>
    `| ${row.operation} | ${row.trips} | ${
      runs.slice(1).map((run) => Math.round(run[i].ms)).join(" | ")
    } |`
  ).join("\n");
}

if (import.meta.main) {
  const { startKvConnectServer } = await import("../../helpers/kv_connect_server.ts");
  const runs: Measured[][] = [];
  for (const delayMs of [0, ...Deno.args.map(Number)]) {
    const server = await startKvConnectServer();
    server.delayMs = delayMs;
    try {
      runs.push(await measureRoundTrips(server));
    } finally {
      await server.close();
    }
  }
  console.log(tripTable(runs));
  testVerifier.close();
}
