// The public bulletin board at /board (page §10, over the read-only calls of protocol §4.4): a
// shell around the Board island, which reads the read-only API and re-checks every block,
// link, proof and count in the browser. The page links back to the voting page. `?ledger=lab`
// shows the attack lab's practice ledger instead (protocol §4.7), under a heading that says so.
import Board from "../islands/Board.tsx";
import { Island } from "../server/pages/island.ts";
import type { LedgerName } from "../lib/client/api_client.ts";

/**
 * What the page is rendered from: the polling interval, the vote `?vote=` opens, if any, and the
 * ledger shown: the election's, or the lab's practice ledger (`?ledger=lab`).
 */
export type BoardData = { pollMs: number; vote: string | null; ledger: LedgerName };

/** How often the page asks for the chain height, so that new blocks appear by themselves. */
export const BULLETIN_POLL_MS = 2000;

/**
 * The route's data handler: the polling interval, the vote id of a shared link
 * (`/board?vote={voteId}`), which opens straight to that vote's walkthrough, and the ledger
 * (`/board?ledger=lab` for the lab's practice ledger; anything else is the election's).
 */
export function handler(req: Request): BoardData {
  const params = new URL(req.url).searchParams;
  const vote = params.get("vote");
  return {
    pollMs: BULLETIN_POLL_MS,
    vote: vote === null || vote === "" ? null : vote,
    ledger: params.get("ledger") === "lab" ? "lab" : "election",
  };
}

/** The page: heading, link back, and the Board island. */
export default function BoardPage({ data }: { data: BoardData }) {
  const practice = data.ledger === "lab";
  return (
    <main class="page">
      <nav class="page-link">
        <a href="/">Back to the voting page</a> · <a href="/lab">Attack lab</a>
        {practice && (
          <>
            {" "}· <a href="/board">Public bulletin board</a>
          </>
        )}
      </nav>
      {practice
        ? (
          <h1 class="bulletin-title bulletin-practice">
            Practice ledger of the attack lab
          </h1>
        )
        : <h1 class="bulletin-title">Public bulletin board</h1>}
      <p class="bulletin-intro">
        {practice
          ? "The attack lab's own chain, kept apart from the election's: nothing here counts in " +
            "the real election. Every block, vote and count is checked again in this browser: " +
            "green where the recomputed value matches, red where it does not."
          : "Every block, vote and count the server publishes, checked again in this browser: " +
            "green where the recomputed value matches, red where it does not."}
      </p>
      <Island
        name="Board"
        component={Board}
        props={practice
          ? { pollMs: data.pollMs, vote: data.vote, ledger: data.ledger }
          : { pollMs: data.pollMs, vote: data.vote }}
      />
    </main>
  );
}
