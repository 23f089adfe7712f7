/**
 * A verified vote's ring on its voter panel (protocol §8): who the ballot hides among, and how many
 * of them the public record still leaves possible. In a round with phases the ring is the voter's
 * group: the line names the group, its fingerprint, and needs no block read (page §14.2).
 * @module
 */
import type { ComponentChildren } from "preact";
import RingLine from "./RingLine.tsx";
import SealedWith from "./SealedWith.tsx";
import type { ApiClient } from "../../lib/client/api_client.ts";
import { anonymityWarning, ringLine } from "../../lib/client/anonymity/anonymity_view.ts";
import { voterKeyNames } from "../../lib/client/voter/voters.ts";
import {
  readStoredKeys,
  readStoredVote,
  type VoterStorage,
} from "../../lib/client/voter/panel_actions.ts";
import { ringOfSignature } from "../../lib/protocol/signature_fields.ts";
import { groupFingerprint } from "../../lib/protocol/groups.ts";
import { hexToBytes } from "../../lib/protocol/bytes.ts";
import {
  groupAnonymity,
  groupFingerprintText,
  LATE_WEAKER_TEXT,
  roundAnonymityText,
} from "../../lib/client/rounds/round_texts.ts";

/** What every verified panel reads from the page's one anonymity analysis. */
export type PanelLens = { anonymity: ReadonlyMap<string, number>; problem: string | null };

/** Props of {@link PanelRing}: `group` is set in a round with phases (its ring is a group). */
type PanelRingProps = {
  namespace: string;
  storage: VoterStorage;
  lens: PanelLens;
  group?: { late: boolean; index?: number | null } | null;
  /** The round's API: a group ballot's line adds how many of its group its block sealed. */
  api?: ApiClient;
};

/** The ring line of the voter `namespace`, or nothing while its stored vote is unreadable. */
export default function PanelRing(
  { namespace, storage, lens, group = null, api }: PanelRingProps,
) {
  const stored = readStoredVote(storage, namespace);
  const ring = ringOfSignature(stored.voteSignature);
  const ownKey = readStoredKeys(storage, namespace).publicKey;
  if (ring === null || ownKey === null) return null;
  if (group !== null) {
    const height = Number(stored.blockId);
    return (
      <GroupRing ring={ring} late={group.late}>
        {api !== undefined && Number.isSafeInteger(height) && height > 0 && (
          <SealedWith api={api} height={height} ring={ring} group={group.index ?? null} />
        )}
      </GroupRing>
    );
  }
  const effectiveAnonymity = lens.anonymity.get(stored.voteId ?? "") ?? null;
  const line = ringLine({ ring, ownKey, pageVoters: voterKeyNames(storage), effectiveAnonymity });
  return (
    <RingLine
      line={line}
      effectiveAnonymity={effectiveAnonymity}
      problem={effectiveAnonymity === null ? lens.problem : null}
    />
  );
}

/**
 * The anonymity line of a ballot whose ring is its group: every key of the group is a possible
 * signer (no reveal is known to this phone), and the group's fingerprint to compare with the
 * projector's.
 */
function GroupRing(
  { ring, late, children }: {
    ring: readonly string[];
    late: boolean;
    children?: ComponentChildren;
  },
) {
  const n = ring.length;
  const k = groupAnonymity({ groupSize: n, revealedOthers: 0, ownRevealed: false });
  const fingerprint = groupFingerprint(ring.map((key) => hexToBytes(key, 32, "ring key")));
  const warning = anonymityWarning(k);
  return (
    <div
      class={`ring-line${warning !== null ? " ring-weak" : ""}`}
      data-kind="ring"
      data-effective-anonymity={k}
      data-group-size={n}
    >
      <p class="ring-anonymity" data-round-anonymity="">
        {roundAnonymityText({ n, k, late })}
      </p>
      {late && <p class="ring-late">{LATE_WEAKER_TEXT}</p>}
      {children}
      <p class="group-fingerprint" data-group-fingerprint={fingerprint}>
        {groupFingerprintText(fingerprint)}
      </p>
      {warning !== null && <p class="ring-warning status-red" role="alert">{warning}</p>}
    </div>
  );
}
