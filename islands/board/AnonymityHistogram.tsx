/**
 * The board's histogram of effective anonymity: how many sealed ballots have each, as bars, red
 * below the warning threshold.
 * @module
 */
import { WEAK_ANONYMITY } from "../../lib/client/anonymity/anonymity_view.ts";

/**
 * How many sealed ballots have each effective anonymity, as horizontal bars scaled to the largest
 * count; bars below the warning threshold that hold ballots are red.
 */
export default function AnonymityHistogram(
  { bars }: { bars: readonly { anonymity: number; ballots: number }[] },
) {
  const max = Math.max(1, ...bars.map((b) => b.ballots));
  return (
    <ul class="anonymity-histogram" aria-label="Ballots by number of possible signers">
      {bars.map((bar) => (
        <li
          key={bar.anonymity}
          class={`histogram-row${
            bar.anonymity < WEAK_ANONYMITY && bar.ballots > 0 ? " histogram-weak" : ""
          }`}
          data-anonymity={bar.anonymity}
          data-ballots={bar.ballots}
        >
          <span class="histogram-label">
            {bar.anonymity} possible {bar.anonymity === 1 ? "signer" : "signers"}
          </span>
          <span class="histogram-bar" aria-hidden="true">
            <span class="histogram-fill" style={{ width: `${(100 * bar.ballots) / max}%` }} />
          </span>
          <span class="histogram-count">
            {bar.ballots} {bar.ballots === 1 ? "ballot" : "ballots"}
          </span>
        </li>
      ))}
    </ul>
  );
}
