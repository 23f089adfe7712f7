// The whole API over one database for tests: the election, the practice ledger (50 keys, 50 votes)
// and the rounds, with the test verifier.
import { createApp } from "../../server/app.ts";
import { createLabLedger } from "../../server/store/lab.ts";
import { createStore } from "../../server/store/mod.ts";
import { createRounds } from "../../server/store/rounds.ts";
import { testVerifier } from "./test_verifier.ts";

/** The presenter's token of {@link fullApp}. */
export const PRESENTER_TOKEN = "presenter-token-0123456789";

/** The app with the election, the practice ledger and the rounds over `kv`, and its parts. */
export async function fullApp(
  kv: Deno.Kv,
  { electionIntervalMs = 60_000, currentTtlMs }: {
    electionIntervalMs?: number;
    currentTtlMs?: number;
  } = {},
) {
  const store = await createStore(kv);
  const lab = await createLabLedger(kv, { maxKeys: 50, maxVotes: 50 });
  const rounds = await createRounds(kv, {
    election: store,
    electionIntervalMs,
    adminToken: PRESENTER_TOKEN,
    ...(currentTtlMs === undefined ? {} : { currentTtlMs }),
  });
  const app = createApp({ store, lab, rounds, verifier: testVerifier });
  return { store, lab, rounds, app };
}
