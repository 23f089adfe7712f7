import type { DecoyUse } from "../lib/app/decoy_use.ts";

/** How many of the most used keys the table lists. */
const SHOWN_KEYS = 8;

/** The decoy-use test in words: chi-square against a uniform choice, and the most used keys. */
export default function DecoyUseTable({ use }: { use: DecoyUse }) {
  const biased = use.pValue < 0.01;
  const max = Math.max(1, ...use.uses.slice(0, SHOWN_KEYS).map((u) => u.count));
  return (
    <div class="decoy-use" data-p-value={use.pValue.toPrecision(4)}>
      <p>
        {use.slots} ring places over {use.keyCount}{" "}
        registered keys: a fair, uniform choice puts each key in about {use.expected.toFixed(1)}
        {" "}
        rings.
      </p>
      <p class={biased ? "summary-bad" : "summary-ok"}>
        Chi-square {use.statistic.toFixed(1)} with {use.degreesOfFreedom} degrees of freedom, p =
        {" "}
        {formatP(use.pValue)}: {biased
          ? "some keys are picked far more often than chance allows — ring selection looks biased, and a biased ring says more about its signer."
          : "consistent with members chosen uniformly at random."}
      </p>
      {!use.reliable && (
        <p class="decoy-note">
          Too few ballots for this test to say much yet: it needs about 5 expected uses per key.
        </p>
      )}
      <table class="decoy-table">
        <thead>
          <tr>
            <th>Most used keys</th>
            <th>In rings</th>
            <th>Expected</th>
          </tr>
        </thead>
        <tbody>
          {use.uses.slice(0, SHOWN_KEYS).map((u) => (
            <tr key={u.key} data-key={u.key} data-count={u.count}>
              <td>
                <code class="hex" title={u.key}>{u.key.slice(0, 12)}…</code>
              </td>
              <td>
                <span class="decoy-bar" style={{ width: `${(6 * u.count) / max}rem` }} />
                {u.count}
              </td>
              <td>{use.expected.toFixed(1)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A p-value for reading: "< 0.0001" below that, else 2 significant digits. */
function formatP(p: number): string {
  return p < 1e-4 ? "< 0.0001" : p.toPrecision(2);
}
