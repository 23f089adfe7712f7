/**
 * A verified vote's ring on its voter panel (protocol §8): who the ballot hides among, and how many
 * of them the public record still leaves possible.
 * @module
 */
import RingLine from "./RingLine.tsx";
import { ringLine } from "../../lib/client/anonymity/anonymity_view.ts";
import { voterKeyNames } from "../../lib/client/voter/voters.ts";
import {
  readStoredKeys,
  readStoredVote,
  type VoterStorage,
} from "../../lib/client/voter/panel_actions.ts";
import { ringOfSignature } from "../../lib/protocol/signature_fields.ts";

/** What every verified panel reads from the page's one anonymity analysis. */
export type PanelLens = { anonymity: ReadonlyMap<string, number>; problem: string | null };

/** Props of {@link PanelRing}. */
type PanelRingProps = { namespace: string; storage: VoterStorage; lens: PanelLens };

/** The ring line of the voter `namespace`, or nothing while its stored vote is unreadable. */
export default function PanelRing({ namespace, storage, lens }: PanelRingProps) {
  const stored = readStoredVote(storage, namespace);
  const ring = ringOfSignature(stored.voteSignature);
  const ownKey = readStoredKeys(storage, namespace).publicKey;
  if (ring === null || ownKey === null) return null;
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
