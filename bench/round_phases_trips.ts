// KV round trips of a round's phases over KV Connect (tests/helpers/kv_connect_server.ts): a key
// registered in a round (its commit checks the round's phase record), the presenter's opening, a
// read of the groups, a vote in a round (its ring one group) on a warm instance, and the same for
// round 1 once rounds are served, beside round 1 without rounds.
//
// `deno run -A bench/round_phases_trips.ts` prints one line per operation.
import { createApp } from "../server/app.ts";
import { createStore } from "../server/store/mod.ts";
import { createRounds } from "../server/store/rounds.ts";
import { startKvConnectServer } from "../tests/helpers/kv_connect_server.ts";
import { call, makeVoters, signedVote } from "../tests/helpers/ledger_fixtures.ts";
import { testVerifier } from "../tests/helpers/test_verifier.ts";
import { measured } from "../tests/server/kv_connect/round_trips.ts";

const TOKEN = "presenter-token-0123456789";
const server = await startKvConnectServer();
const kv = await server.openKv("phases");
const store = await createStore(kv);
const rounds = await createRounds(kv, {
  election: store,
  electionIntervalMs: 60_000,
  adminToken: TOKEN,
  currentTtlMs: 1000,
});
const app = createApp({ store, rounds, verifier: testVerifier });
const presenter = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const voters = makeVoters(16);
const lines: string[] = [];
const measure = async (operation: string, work: () => unknown, per = 1) => {
  const { trips } = await measured(operation, { server, work: async () => await work(), per });
  lines.push(`${operation.padEnd(52)} ${trips.toFixed(2)} round trips`);
};
try {
  await measure("round 1 with rounds: 8 registrations (per key)", async () => {
    for (const v of voters.slice(0, 8)) await call(app, "POST", "/api/pki/key", { key: v.key });
  }, 8);
  await call(app, "POST", "/api/vote", signedVote(voters[0], voters.slice(0, 8), "warm"));
  await measure(
    "round 1 with rounds: a vote, warm",
    () => call(app, "POST", "/api/vote", signedVote(voters[1], voters.slice(0, 8), "yes")),
  );
  await app.request("/api/rounds", {
    method: "POST",
    headers: presenter,
    body: JSON.stringify({ question: "Which?", choices: ["A", "B"] }),
  });
  await measure("round 2: 8 registrations, one at a time (per key)", async () => {
    for (const v of voters.slice(8)) {
      await call(app, "POST", "/api/rounds/2/pki/key", { key: v.key });
    }
  }, 8);
  await measure(
    "round 2: POST /voting (the opening)",
    () => app.request("/api/rounds/2/voting", { method: "POST", headers: presenter }),
  );
  await measure(
    "round 2: POST /voting again",
    () => app.request("/api/rounds/2/voting", { method: "POST", headers: presenter }),
  );
  const group = voters.slice(8);
  await call(app, "POST", "/api/rounds/2/vote", signedVote(group[0], group, "A"));
  await measure(
    "round 2: a vote, warm",
    () => call(app, "POST", "/api/rounds/2/vote", signedVote(group[1], group, "B")),
  );
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await measure("round 2: GET /groups", () => app.request("/api/rounds/2/groups"));
  console.log(lines.join("\n"));
} finally {
  kv.close();
  await server.close();
  testVerifier.close();
}
