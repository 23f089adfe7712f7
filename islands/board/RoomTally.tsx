/**
 * The projector view's tally (page §10.11): one horizontal bar per choice, its label and count in
 * large text, every choice of the round shown even at 0.
 * @module
 */
import { roomTally } from "../../lib/client/board/room.ts";
import type { Tally } from "../../lib/protocol/schemas.ts";

/** The text is sized as for at least this many bars (static/1_pages.css `--rows`). */
const MIN_SIZED_ROWS = 3;

/** The bars of `tally` for a round offering `choices` (none: a free-text round). */
export default function RoomTally({ choices, tally }: { choices: string[]; tally: Tally | null }) {
  const { rows, more } = roomTally(choices, tally);
  return (
    <>
      {rows.length === 0 && (
        <p class="room-empty">{tally === null ? "Reading the tally…" : "No votes sealed yet."}</p>
      )}
      <ul
        class="room-tally"
        data-room-tally=""
        style={{ "--rows": Math.max(MIN_SIZED_ROWS, rows.length) }}
      >
        {rows.map((row) => (
          <li
            key={row.payload}
            class="room-row"
            data-room-choice={row.payload}
            data-count={row.count}
          >
            <span class="room-label" title={row.payload}>{row.payload}</span>
            <span class="room-bar" aria-hidden="true">
              <span class="room-fill" style={{ width: `${(100 * row.share).toFixed(2)}%` }} />
            </span>
            <span class="room-count">{row.count}</span>
          </li>
        ))}
      </ul>
      {more !== null && (
        <p class="room-more">
          and {more.answers} other {more.answers === 1 ? "answer" : "answers"} with {more.votes}
          {" "}
          {more.votes === 1 ? "vote" : "votes"}
        </p>
      )}
    </>
  );
}
