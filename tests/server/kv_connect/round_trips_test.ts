// The round-trip budget (docs/performance.md): each operation's KV round trips, counted by a real
// KV Connect server, stay within what was reached. Round trips, not times: each costs 7 ms next to
// hosted KV and about 94 ms from another continent, so they are the cost that travels.
import assert from "node:assert/strict";
import { startKvConnectServer } from "../../helpers/kv_connect_server.ts";
import { measureRoundTrips } from "./round_trips.ts";

/** The most round trips each operation may take (docs/performance.md, "Round trips"). */
const BUDGET: [RegExp, number][] = [
  [/^registration, 16 concurrent clients/, 1],
  [/^POST \/api\/vote, fresh instance/, 2],
  [/^POST \/api\/vote, ring already read/, 2],
  [/^GET \/api\/block\/status/, 1],
  // The close's read of the guard, head and work record, its commit, one listing, and the proofs
  // in the block's own commit.
  [/^sealing a 250-vote block/, 4],
  [/^a vote's proof/, 1],
  [/^a 100-vote page/, 2],
  // Listing the votes 11 (1,000 a trip, and one to see the end), 12 commits of proofs (10,000,
  // and a leaf index entry every 100 leaves: 10,100 mutations, 900 a commit), the last with the
  // block, and the close: its read, a one-vote listing (these votes were written straight into
  // KV, without the work record a vote commit sets) and its commit.
  [/^sealing a 10,000-vote block/, 26],
  // 10,260 sealed votes: eleven batches of 1,000, and the head.
  [/^a fresh instance's first GET \/api\/tally/, 12],
];

Deno.test("every operation stays within its round-trip budget", async () => {
  const server = await startKvConnectServer();
  try {
    const rows = await measureRoundTrips(server);
    for (const { operation, trips } of rows) {
      const budget = BUDGET.find(([name]) => name.test(operation));
      assert.ok(budget, `no budget for "${operation}"`);
      assert.ok(trips <= budget[1], `${operation}: ${trips} round trips, budget ${budget[1]}`);
    }
    const tallies = rows.filter((r) => r.operation.includes("first GET /api/tally"));
    assert.equal(tallies.length, 2);
    assert.equal(
      tallies[0].trips,
      tallies[1].trips,
      "ten more blocks cost the first tally nothing",
    );
  } finally {
    await server.close();
  }
});
