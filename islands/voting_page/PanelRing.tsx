// A verified vote's ring on its voter panel (protocol §8): who the ballot hides among, and how many
// of them the whole public record still leaves possible, from the page's one anonymity analysis.
import RingLine from "../../components/RingLine.tsx";
import { ringLine, voterKeyNames } from "../../lib/app/anonymity_view.ts";
import { readStoredKeys, readStoredVote, type VoterStorage } from "../../lib/app/panel_actions.ts";
import { ringOfSignature } from "../../lib/app/signature_fields.ts";

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
