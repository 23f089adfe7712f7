/**
 * The board's decoy-use table: each key's use as a ring member against an honest client's draw,
 * most used first, with the test's verdict.
 * @module
 */
import type { DecoyUse } from "../../lib/client/anonymity/decoy_use.ts";
import { shortHex } from "../../lib/client/text.ts";

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
 * The decoy-use test in words — are the rings below their newest key a fair draw, as an honest
 * voting page makes them — then every key's use, most used first, a page at a time, each against
 * what honest clients would give it.
 */
export default function DecoyUseTable({ use, shown, onMore, names }: DecoyUseTableProps) {
  const biased = use.pValue < 0.01;
  const listed = use.uses.slice(0, shown);
  const max = Math.max(1, ...listed.map((u) => u.count));
  const unused = use.keyCount - use.uses.filter((u) => u.id !== null).length;
  return (
    <div class="decoy-use" data-p-value={use.pValue.toPrecision(4)}>
      <p>
        Each ring's members below its newest key should look like a fair draw from the keys
        registered before it, as a voting page makes them: about half in the older half. The voter's
        own key may sit anywhere, so the test allows for it and flags only a clear bias.
      </p>
      <p class={biased ? "summary-bad" : "summary-ok"}>
        {use.rings} {use.rings === 1 ? "ring" : "rings"} tested: {use.older} of their {use.members}
        {" "}
        members below the newest key are in the older half, where a fair draw puts about{" "}
        {use.expectedOlder.toFixed(1)}; {formatP(use.pValue)}: {biased
          ? `ring members lean towards ${use.lean} keys far more than chance allows — ring selection looks biased, and a biased ring says more about its signer.`
          : "consistent with rings drawn fairly."}
      </p>
      {use.unlisted.length > 0 && (
        <p class="summary-bad decoy-unlisted">
          {use.unlisted.length} ring {use.unlisted.length === 1 ? "member is" : "members are"}{" "}
          not in the key directory, so their rings were left out of the test: the directory and the
          ballots disagree.
        </p>
      )}
      {!use.reliable && (
        <p class="decoy-note">
          Too few rings for this test to say much yet: only {use.rings}{" "}
          {use.rings === 1 ? "has" : "have"} older keys to choose from.
        </p>
      )}
      <table class="decoy-table">
        <thead>
          <tr>
            <th>Key, most used first</th>
            <th>In rings</th>
            <th title="Given each ring's newest key, as honest voting pages would choose">
              Fair draw
            </th>
            <th>Difference</th>
          </tr>
        </thead>
        <tbody>
          {listed.map((u) => (
            <tr key={u.key} data-key={u.key} data-count={u.count} data-expected={u.expected}>
              <td>
                {u.id !== null && `#${u.id} `}
                <code class="hex" title={u.key}>{shortHex(u.key)}</code>
                {names.has(u.key) && <span class="member-name">{names.get(u.key)}</span>}
              </td>
              <td>
                <span class="decoy-bar" style={{ width: `${(6 * u.count) / max}rem` }} />
                {u.count}
              </td>
              <td>{u.expected.toFixed(1)}</td>
              <td>{signed(u.count - u.expected)}</td>
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

/** A p-value for reading: "p < 0.0001" below that, else "p = " and 2 significant digits. */
function formatP(p: number): string {
  return p < 1e-4 ? "p < 0.0001" : `p = ${p.toPrecision(2)}`;
}
