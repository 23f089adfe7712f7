// The public bulletin board (/board): the chain as a picture, the tally, a block's votes, a vote's
// ring signature and inclusion proof step by step, and a one-click audit of everything, kept live
// by polling the chain height. Nothing the server says is taken on trust: block hashes, links,
// proofs, every listed vote's signature and the tally are recomputed in the browser, and every
// disagreement is shown in red. The state lives once, in
// islands/bulletin_board/state.ts; each section is a file of islands/bulletin_board/ (files in that
// folder are parts of this island, not islands of their own).
import type { ComponentType } from "preact";
import { useEffect, useMemo } from "react";
import ForkAlert from "../components/ForkAlert.tsx";
import HeadAlerts from "../components/HeadAlerts.tsx";
import { createBulletinState } from "./bulletin_board/state.ts";
import AnonymitySection from "./bulletin_board/AnonymitySection.tsx";
import AuditSection from "./bulletin_board/AuditSection.tsx";
import { pageApiClient, useHeadWatch } from "./watch_heads.ts";
import BlockSection from "./bulletin_board/BlockSection.tsx";
import ChainSection from "./bulletin_board/ChainSection.tsx";
import EvidenceSection from "./bulletin_board/EvidenceSection.tsx";
import LiveStatus from "./bulletin_board/LiveStatus.tsx";
import ProofSection from "./bulletin_board/ProofSection.tsx";
import type { SectionProps } from "./bulletin_board/section.ts";
import TallySection from "./bulletin_board/TallySection.tsx";
import WalkthroughSection from "./bulletin_board/WalkthroughSection.tsx";

/** Props the server renders the board with: the polling interval and the shared vote, if any. */
export type BulletinBoardProps = { pollMs: number; vote?: string | null };

/** The board's sections, top to bottom. */
const SECTIONS: ComponentType<SectionProps>[] = [
  LiveStatus,
  AuditSection,
  EvidenceSection,
  ChainSection,
  TallySection,
  BlockSection,
  WalkthroughSection,
  ProofSection,
  AnonymitySection,
];

/** The board: every section over one state, which follows the chain while the page is open. */
export default function BulletinBoard({ pollMs, vote = null }: BulletinBoardProps) {
  const bulletin = useMemo(() => createBulletinState(pageApiClient(), { pollMs }), []);
  useEffect(() =>
    bulletin.follow(() => {
      performance.mark("ringvote:board-ready");
      // A shared link opens straight to its vote.
      if (vote !== null) bulletin.openShared(vote);
    }), []);
  // The chain shown must extend every signed head this browser saw, here or on the voting page.
  const { fork, alerts } = useHeadWatch(pollMs);
  return (
    <div class="bulletin" data-ready={bulletin.ready.value ? "true" : "false"}>
      {fork && <ForkAlert evidence={fork} />}
      <HeadAlerts alerts={alerts} />
      {SECTIONS.map((Section, i) => <Section key={i} bulletin={bulletin} />)}
    </div>
  );
}
