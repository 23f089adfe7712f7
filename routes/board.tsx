// The public bulletin board at /board (protocol §4 "Public bulletin board"): a shell around the
// BulletinBoard island, which reads the read-only API and re-checks every block, link, proof and count in
// the browser. The page links back to the voting page.
import BulletinBoard from "../islands/BulletinBoard.tsx";
import { Island } from "../components/Island.ts";

/** What the page is rendered from: the polling interval and the vote `?vote=` opens, if any. */
export type BulletinBoardData = { pollMs: number; vote: string | null };

/** How often the page asks for the chain height, so that new blocks appear by themselves. */
export const BULLETIN_POLL_MS = 2000;

/**
 * The route's data handler: the polling interval, and the vote id of a shared link
 * (`/board?vote={voteId}`), which opens straight to that vote's walkthrough.
 */
export function handler(req: Request): BulletinBoardData {
  const vote = new URL(req.url).searchParams.get("vote");
  return { pollMs: BULLETIN_POLL_MS, vote: vote === null || vote === "" ? null : vote };
}

/** The page: heading, link back, and the BulletinBoard island. */
export default function BulletinBoardPage({ data }: { data: BulletinBoardData }) {
  return (
    <main class="page">
      <nav class="page-link">
        <a href="/">Back to the voting page</a> · <a href="/lab">Attack lab</a>
      </nav>
      <h1 class="bulletin-title">Public bulletin board</h1>
      <p class="bulletin-intro">
        Every block, vote and count the server publishes, checked again in this browser: green where
        the recomputed value matches, red where it does not.
      </p>
      <Island
        name="BulletinBoard"
        component={BulletinBoard}
        props={{ pollMs: data.pollMs, vote: data.vote }}
      />
    </main>
  );
}
