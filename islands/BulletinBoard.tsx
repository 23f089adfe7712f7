// The public bulletin board (/board): the chain as a picture, the tally, a block's votes, a vote's
// ring signature and inclusion proof step by step, and a one-click audit of everything, kept live
// by polling the chain height. Nothing the server says is taken on trust: block hashes, links,
// proofs, every listed vote's signature and the tally are recomputed in the browser, and every
// disagreement is shown in red. The state lives once, in
// islands/bulletin_board/state.ts; each section is a file of islands/bulletin_board/ (files in that
// folder are parts of this island, not islands of their own). With `ledger="lab"` it shows the
// attack lab's practice ledger (`/api/lab/…`, protocol §4.7) instead: the same chain, tally, block
// and proof sections, without the parts that belong to the election (the heads this browser
// remembers, the audit and fork evidence against them, the anonymity of its voters).
import type { ComponentType } from "preact";
import { useEffect, useMemo } from "react";
import { type ApiClient, createApiClient, type LedgerName } from "../lib/app/api_client.ts";
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

/**
 * Props the server renders the board with: the polling interval, the shared vote, if any, and the
 * ledger shown (the election's by default).
 */
export type BulletinBoardProps = { pollMs: number; vote?: string | null; ledger?: LedgerName };

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

/**
 * The practice ledger's sections: those that check only what this ledger serves (the ring
 * walkthrough is left out too: it rewrites the address into the election board's vote link).
 */
const PRACTICE_SECTIONS: ComponentType<SectionProps>[] = [
  LiveStatus,
  ChainSection,
  TallySection,
  BlockSection,
  ProofSection,
];

/** The board of the election's ledger, or of the lab's practice ledger. */
export default function BulletinBoard(
  { pollMs, vote = null, ledger = "election" }: BulletinBoardProps,
) {
  return ledger === "lab"
    ? <PracticeBoard pollMs={pollMs} vote={vote} />
    : <ElectionBoard pollMs={pollMs} vote={vote} />;
}

type BoardProps = { pollMs: number; vote: string | null };

/** The election's board: every section over one state, which follows the chain. */
function ElectionBoard({ pollMs, vote }: BoardProps) {
  const bulletin = useBulletin(pageApiClient, { pollMs, vote });
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

/** The practice ledger's board: its sections over a state reading `/api/lab/…`. */
function PracticeBoard({ pollMs, vote }: BoardProps) {
  const bulletin = useBulletin(() => createApiClient({ fetch, ledger: "lab" }), { pollMs, vote });
  return (
    <div class="bulletin" data-ledger="lab" data-ready={bulletin.ready.value ? "true" : "false"}>
      {PRACTICE_SECTIONS.map((Section, i) => <Section key={i} bulletin={bulletin} />)}
    </div>
  );
}

/** The board state over the client `makeApi` makes, following the chain while the island lives. */
function useBulletin(makeApi: () => ApiClient, { pollMs, vote }: BoardProps) {
  const bulletin = useMemo(() => createBulletinState(makeApi(), { pollMs }), []);
  useEffect(() =>
    bulletin.follow(() => {
      performance.mark("ringvote:board-ready");
      // A shared link opens straight to its vote.
      if (vote !== null) bulletin.openShared(vote);
    }), []);
  return bulletin;
}
