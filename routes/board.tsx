// The public bulletin board at /board (page §10, over the read-only calls of protocol §4.4): a
// shell around the Board island, which reads the read-only API and re-checks every block,
// link, proof and count in the browser. The page links back to the voting page. `?round={id}`
// shows that round's ledger (protocol §4.9), `?ledger=lab` the attack lab's practice ledger
// (protocol §4.7), each under a heading that says so; `?view=room` is the projector view
// (page §10.11), the RoomView island alone.
import Board from "../islands/Board.tsx";
import RoomView from "../islands/RoomView.tsx";
import { Island } from "../server/pages/island.ts";
import type { PageAddresses } from "../server/pages/address.ts";
import { boardHref, parseRoundParam, roundName } from "../lib/client/board/rounds.ts";

/**
 * What the page is rendered from: the polling interval, the vote `?vote=` opens, if any, the
 * ledger shown (the election's rounds, or the lab's practice ledger with `?ledger=lab`), the round
 * `?round=` names (null: round 1 on the board, the current round in the projector view), the view,
 * and the voting page's address phones must use, for the projector view's QR code.
 */
export type BoardData = {
  pollMs: number;
  vote: string | null;
  ledger: "election" | "lab";
  round: number | null;
  view: "board" | "room";
  address: string;
};

/** How often the page asks for the chain height, so that new blocks appear by themselves. */
export const BULLETIN_POLL_MS = 2000;

/**
 * The route's data handler: the polling interval, the vote id of a shared link
 * (`/board?vote={voteId}`), which opens straight to that vote's walkthrough, the ledger
 * (`/board?ledger=lab` for the lab's practice ledger; anything else is the election's), the round
 * (`/board?round={id}`; anything but a round id is none) and the view (`/board?view=room`).
 */
export function handler(req: Request, { addresses }: { addresses: PageAddresses }): BoardData {
  const params = new URL(req.url).searchParams;
  const vote = params.get("vote");
  const ledger = params.get("ledger") === "lab" ? "lab" : "election";
  return {
    pollMs: BULLETIN_POLL_MS,
    vote: vote === null || vote === "" ? null : vote,
    ledger,
    round: ledger === "lab" ? null : parseRoundParam(params.get("round")),
    view: ledger === "election" && params.get("view") === "room" ? "room" : "board",
    address: addresses.address,
  };
}

/** The page: the projector view, or the board's heading, link back and the Board island. */
export default function BoardPage({ data }: { data: BoardData }) {
  if (data.view === "room") return <RoomPage data={data} />;
  const practice = data.ledger === "lab";
  return (
    <main class="page">
      <nav class="page-link">
        <a href="/">Back to the voting page</a> · <a href="/lab">Attack lab</a>
        {practice
          ? (
            <>
              {" "}· <a href="/board">Public bulletin board</a>
            </>
          )
          : (
            <>
              {" "}· <a href={boardHref({ view: "room" })}>Projector view</a>
            </>
          )}
      </nav>
      {practice
        ? (
          <h1 class="bulletin-title bulletin-practice">
            Practice ledger of the attack lab
          </h1>
        )
        : (
          <h1 class="bulletin-title">
            {data.round === null
              ? "Public bulletin board"
              : `Public bulletin board: ${roundName(data.round).toLowerCase()}`}
          </h1>
        )}
      <p class="bulletin-intro">
        {practice
          ? "The attack lab's own chain, kept apart from the election's: nothing here counts in " +
            "the real election. Every block, vote and count is checked again in this browser: " +
            "green where the recomputed value matches, red where it does not."
          : "Every block, vote and count the server publishes, checked again in this browser: " +
            "green where the recomputed value matches, red where it does not."}
      </p>
      <Island name="Board" component={Board} props={boardProps(data)} />
    </main>
  );
}

/** The Board island's props: only what differs from its defaults (round 1, the election). */
function boardProps({ pollMs, vote, ledger, round, address }: BoardData) {
  if (ledger === "lab") return { pollMs, vote, ledger };
  return round === null ? { pollMs, vote, address } : { pollMs, vote, round, address };
}

/** The projector view: the RoomView island, following the current round unless one is named. */
function RoomPage({ data }: { data: BoardData }) {
  return (
    <main class="room-page">
      <Island
        name="RoomView"
        component={RoomView}
        props={{ pollMs: data.pollMs, round: data.round, address: data.address }}
      />
    </main>
  );
}
