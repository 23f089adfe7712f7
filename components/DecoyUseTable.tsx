import type { DecoyUse } from "../lib/app/decoy_use.ts";

/** Props of {@link DecoyUseTable}. */
export type DecoyUseTableProps = {
  use: DecoyUse;
  /** How many keys the table lists, most used first. */
  shown: number;
  /** Lists more keys. */
  onMore(): void;
  /** Names of keys the page knows (voters of this browser). */
  names: ReadonlyMap<string, string>;
};

/**
 * The decoy-use test in words — chi-square against a uniform choice — then every key's use, most
 * used first, a page at a time, each against the uniform expectation.
 */
export default function DecoyUseTable({ use, shown, onMore, names }: DecoyUseTableProps) {
  const biased = use.pValue < 0.01;
  const listed = use.uses.slice(0, shown);
  const max = Math.max(1, ...listed.map((u) => u.count));
  const unused = use.keyCount - use.uses.length;
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
            <th>Key, most used first</th>
            <th>In rings</th>
            <th>Against {use.expected.toFixed(1)} expected</th>
          </tr>
        </thead>
        <tbody>
          {listed.map((u) => (
            <tr key={u.key} data-key={u.key} data-count={u.count}>
              <td>
                <code class="hex" title={u.key}>{u.key.slice(0, 12)}…</code>
                {names.has(u.key) && <span class="member-name">{names.get(u.key)}</span>}
              </td>
              <td>
                <span class="decoy-bar" style={{ width: `${(6 * u.count) / max}rem` }} />
                {u.count}
              </td>
              <td>{signed(u.count - use.expected)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="decoy-more">
        {listed.length} of {use.uses.length} keys seen in rings listed
        {unused > 0 && `; ${unused} registered ${unused === 1 ? "key is" : "keys are"} in no ring`}
        .{" "}
        {listed.length < use.uses.length && (
          <button type="button" onClick={onMore}>Show more keys</button>
        )}
      </p>
    </div>
  );
}

/** "+3.2" or "−1.0": a difference with its sign. */
function signed(x: number): string {
  return `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(1)}`;
}

/** A p-value for reading: "< 0.0001" below that, else 2 significant digits. */
function formatP(p: number): string {
  return p < 1e-4 ? "< 0.0001" : p.toPrecision(2);
}
