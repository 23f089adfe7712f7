/**
 * A round's phase on the projector view (page §10.11): the phase, the keys joined in large type
 * with the headcount hint, then how many of the grouped keys voted, the send window W while voting
 * is open, and each group's fingerprint, for the room to compare with the phones'.
 * @module
 */
import type { ApiClient } from "../../lib/client/api_client.ts";
import { useGroupFingerprints } from "./group_fingerprints.ts";
import type { RoundPhase } from "../../lib/client/rounds/phases.ts";
import { headcountText, phaseName, votedText } from "../../lib/client/rounds/round_texts.ts";
import { usePolled } from "../hooks/polling.ts";
import { keysFromCardsText } from "../../lib/client/cards/card_keep.ts";
import { roomWindowText } from "../../lib/client/rounds/window_text.ts";

/** Props: the round's API, its phase as listed, the votes sealed and waiting, how often to read. */
export type RoomPhaseProps = {
  api: ApiClient;
  phase: RoundPhase;
  votes: number | null;
  pollMs: number;
  /** The card set of a carded round (page §14.7), else null. */
  cards?: string | null;
};

/** The phase panel of a round with phases. */
export default function RoomPhase({ api, phase, votes, pollMs, cards = null }: RoomPhaseProps) {
  const keys = usePolled(async () => (await api.keys(0, 1)).total, pollMs).value;
  // A carded round says how many cards its keys came from, of how many were printed.
  const used = usePolled(async () => cards === null ? null : await api.roundCards(), pollMs).value;
  const served = usePolled(() => api.groups(), pollMs).value;
  const groups = useGroupFingerprints(api, served?.groups ?? []);
  const shownPhase = served?.phase ?? phase;
  const grouped = (served?.groups ?? []).reduce((sum, group) => sum + group.length, 0);
  return (
    <div class="room-phase" data-room-phase={shownPhase}>
      <p class="room-phase-name">{phaseName(shownPhase)}</p>
      {cards === null
        ? (
          <p class="room-figure" data-room-keys={keys ?? ""}>
            <strong>{keys ?? "–"}</strong> {headcountText(keys ?? 0).replace(/^\d+ /, "")}
          </p>
        )
        : (
          <p
            class="room-figure"
            data-room-keys={keys ?? ""}
            data-room-cards={used?.count ?? ""}
            data-room-cards-used={used?.used ?? ""}
          >
            <strong>{keys ?? "–"}</strong> {keysFromCardsText({
              keys: keys ?? 0,
              cards: used?.used ?? 0,
              count: used?.count ?? 0,
            }).replace(/^\d+ /, "")}. {headcountText(0).replace(/^.*?joined\. /, "")}
          </p>
        )}
      {shownPhase !== "join" && (
        <p class="room-voted" data-room-voted={votes ?? ""}>
          {votedText({ voted: votes ?? 0, keys: grouped })}
        </p>
      )}
      {shownPhase === "voting" && served?.sendWindowMs != null && (
        <p class="room-window" data-room-window={served.sendWindowMs}>
          {roomWindowText(served.sendWindowMs)}
        </p>
      )}
      {groups.length > 0 && (
        <ul class="room-groups">
          {groups.map((group, i) => (
            <li key={group.fingerprint} data-group-fingerprint={group.fingerprint}>
              Group {i + 1} ({group.ids.length} keys): <code>{group.fingerprint}</code>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
