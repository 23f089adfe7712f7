/**
 * A ballot's ring on the board as a circle of its members, each possible signer or ruled out,
 * with the reason in words.
 * @module
 */
import { circlePositions, type MemberStatus } from "../../lib/client/anonymity/anonymity_view.ts";
import { shortHex } from "../../lib/client/text.ts";

/** Props of {@link RingPicture}. */
export type RingPictureProps = {
  ballotId: string;
  members: readonly MemberStatus[];
  /** Names of keys the page knows (voters of this browser), shown beside their keys. */
  names: ReadonlyMap<string, string>;
  /** Marks `key` as the ballot's revealed signer. */
  onReveal(key: string): void;
  /** The key revealed for this ballot, if any. */
  revealed: string | null;
};

const SIZE = 320;
const RADIUS = 118;
const NODE = 25;

/**
 * A ballot's ring drawn as a circle of its members, numbered: possible signers green, members the
 * record rules out grey with a red cross beside them. The numbered list next to the picture gives
 * each member's key, the reason, and a button to mark a possible signer as the revealed one.
 */
export default function RingPicture(
  { ballotId, members, names, onReveal, revealed }: RingPictureProps,
) {
  const points = circlePositions(members.length, RADIUS);
  const possible = members.filter((m) => m.possible).length;
  return (
    <div class="ring-picture" data-ballot={ballotId}>
      <svg
        viewBox={`${-SIZE / 2} ${-SIZE / 2} ${SIZE} ${SIZE}`}
        width={SIZE}
        height={SIZE}
        role="img"
        aria-label={`Ring of ballot ${ballotId}: ${possible} of ${members.length} members could have cast it`}
      >
        <circle class="ring-orbit" r={RADIUS} />
        <text class="ring-centre-count" y="-2" text-anchor="middle">
          {possible} of {members.length}
        </text>
        <text class="ring-centre-label" y="24" text-anchor="middle">could have cast it</text>
        {members.map((m, i) => (
          <g
            key={m.key}
            class={m.possible ? "ring-member member-possible" : "ring-member member-ruled-out"}
            transform={`translate(${points[i].x.toFixed(1)} ${points[i].y.toFixed(1)})`}
          >
            <circle r={NODE} />
            <text y="7" text-anchor="middle">{i + 1}</text>
            {!m.possible && (
              <g class="member-cross" transform={`translate(${NODE - 4} ${-NODE + 4})`}>
                <circle r="10" />
                <path d="M-4.5 -4.5 L4.5 4.5 M4.5 -4.5 L-4.5 4.5" />
              </g>
            )}
          </g>
        ))}
      </svg>
      <ol class="ring-members">
        {members.map((m) => (
          <li
            key={m.key}
            class={m.possible ? "member-possible" : "member-ruled-out"}
            data-key={m.key}
            data-possible={String(m.possible)}
          >
            <code class="hex" title={m.key}>{shortHex(m.key, 10)}</code>
            {names.has(m.key) && <span class="member-name">{names.get(m.key)}</span>}
            <span
              class="member-reason"
              title={m.ballots.length > 1 ? m.ballots.join("\n") : undefined}
            >
              <span class="member-mark" aria-hidden="true">{m.possible ? "✓ " : "✗ "}</span>
              {m.reason}
            </span>
            {revealed === null && m.possible && (
              <button
                type="button"
                class="member-reveal"
                onClick={() => onReveal(m.key)}
              >
                Reveal: this key cast it
              </button>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}
