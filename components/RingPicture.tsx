import type { MemberStatus } from "../lib/app/anonymity.ts";
import { circlePositions } from "../lib/app/anonymity_view.ts";

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

const SIZE = 340;
const RADIUS = 125;

/**
 * A ballot's ring drawn as a circle of its members: possible signers filled green, members the
 * record rules out grey and crossed out, each listed beside the picture with the reason and a
 * button to mark it as the ballot's revealed signer.
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
        <text class="ring-centre-count" y="-4" text-anchor="middle">
          {possible} of {members.length}
        </text>
        <text class="ring-centre-label" y="22" text-anchor="middle">could have cast it</text>
        {members.map((m, i) => (
          <g
            key={m.key}
            class={m.possible ? "ring-member member-possible" : "ring-member member-ruled-out"}
            transform={`translate(${points[i].x.toFixed(1)} ${points[i].y.toFixed(1)})`}
          >
            <circle r="26" />
            <text y="6" text-anchor="middle">{i + 1}</text>
            {!m.possible && <path class="member-cross" d="M-18 -18 L18 18 M18 -18 L-18 18" />}
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
            <code class="hex" title={m.key}>{m.key.slice(0, 10)}…</code>
            {names.has(m.key) && <span class="member-name">{names.get(m.key)}</span>}
            <span class="member-reason">{m.reason}</span>
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
