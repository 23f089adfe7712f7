// The time to a round's next seal and the votes waiting for it (protocol §4.9 `GET
// /api/rounds/{id}/block/open`), for the board's live line, the projector view and the voting page.
// Stateless: the island polls the open block and ticks the clock.
import type { OpenBlock } from "../lib/protocol/schemas.ts";
import {
  sealCountdown,
  sealCountdownText,
  sealTimeText,
} from "../lib/client/board/seal_countdown.ts";

/**
 * Props: the open block as last read (null before the first answer), the time now, and whether
 * the votes waiting are written out too (they are by default; the projector shows them apart).
 */
export type SealCountdownProps = { open: OpenBlock | null; now: number; waiting?: boolean };

/**
 * `Next block sealed in 4 s · 3 votes waiting`, with the seconds in `data-seal-countdown` and the
 * votes in `data-votes-waiting`; `Reading the open block…` until it is read.
 */
export default function SealCountdown({ open, now, waiting = true }: SealCountdownProps) {
  if (open === null) {
    return <span class="seal-countdown" data-seal-countdown="">Reading the open block…</span>;
  }
  const countdown = sealCountdown(open, now);
  return (
    <span
      class="seal-countdown"
      data-seal-countdown={countdown.seconds}
      data-votes-waiting={countdown.waiting}
    >
      {waiting ? sealCountdownText(countdown) : sealTimeText(countdown)}
    </span>
  );
}
