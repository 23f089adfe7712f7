/**
 * The public bulletin board (/board): chain, tally, blocks, proofs, signatures and an audit, each
 * recomputed in the browser and kept live; its sections are the files of islands/board/. With
 * `round`, that round's ledger (protocol §4.9; round 1, the election, by default), with the rounds
 * listed; with `ledger="lab"`, the attack lab's practice ledger, without the election's own sections.
 * @module
 */
import type { ComponentType } from "preact";
import { useEffect, useMemo } from "react";
import { type ApiClient, createApiClient } from "../lib/client/api_client.ts";
import { sharedVote } from "../lib/client/board/rounds.ts";
import { addressWithPin } from "../lib/client/relay/fragment.ts";
import { useQrPin } from "./hooks/presenter_relay.ts";
import ForkAlert from "../components/ForkAlert.tsx";
import HeadAlerts from "../components/HeadAlerts.tsx";
import { type BulletinOptions, createBulletinState } from "./board/state.ts";
import AnonymitySection from "./board/AnonymitySection.tsx";
import AuditSection from "./board/AuditSection.tsx";
import { pageApiClient, useHeadWatch, usePolicyNotice } from "./hooks/watch_heads.ts";
import { useWitnessKey, witnessVkey } from "./hooks/witness_key.ts";
import WitnessControl from "../components/WitnessControl.tsx";
import WitnessStatus from "../components/WitnessStatus.tsx";
import BlockSection from "./board/BlockSection.tsx";
import ChainSection from "./board/ChainSection.tsx";
import EvidenceSection from "./board/EvidenceSection.tsx";
import LiveStatus from "./board/LiveStatus.tsx";
import { pageRoundStorage } from "./board/page_storage.ts";
import ProofSection from "./board/ProofSection.tsx";
import RoundsNav from "./board/RoundsNav.tsx";
import type { SectionProps } from "./board/section.ts";
import TallySection from "./board/TallySection.tsx";
import WalkthroughSection from "./board/WalkthroughSection.tsx";

/**
 * Props the server renders the board with: the polling interval, the shared vote, if any, the
 * round shown (round 1, the election, by default), or the practice ledger instead.
 */
export type BoardProps = {
  pollMs: number;
  /** The voting page's address phones use, for the witness QR code. */
  address?: string;
  vote?: string | null;
  round?: number;
  ledger?: "election" | "lab";
};

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

/** The board of a round's ledger, or of the lab's practice ledger. */
export default function Board(
  { pollMs, vote = null, round = 1, ledger = "election", address = "" }: BoardProps,
) {
  return ledger === "lab"
    ? <PracticeBoard pollMs={pollMs} vote={vote} />
    : <RoundBoard pollMs={pollMs} vote={vote} round={round} address={address} />;
}

type LedgerBoardProps = { pollMs: number; vote: string | null };

/**
 * A round's board: the rounds, then every section over one state, which follows the chain of that
 * round through its own API calls, in its own entries of this browser's storage.
 */
function RoundBoard(
  { pollMs, vote, round, address }: LedgerBoardProps & { round: number; address: string },
) {
  const ledger = { round };
  const storage = useMemo(() => pageRoundStorage(round), []);
  const bulletin = useBulletin(() => pageApiClient(ledger), { pollMs, vote }, { round, storage });
  // The chain shown must extend every signed head this browser saw, here or on the voting page.
  const witness = useWitnessKey();
  const { fork, alerts, view, witnessing } = useHeadWatch(pollMs, {
    ledger,
    storage,
    witness: witness.witness,
  });
  const notice = usePolicyNotice();
  // The witness's QR code carries the relay this browser names or holds (protocol §7).
  const qrPin = useQrPin();
  return (
    <div class="bulletin" data-round={round} data-ready={bulletin.ready.value ? "true" : "false"}>
      <RoundsNav shown={round} />
      {fork && <ForkAlert evidence={fork} />}
      <HeadAlerts alerts={alerts} />
      <WitnessStatus view={view?.witness ?? null} notice={notice} forked={fork !== null} />
      <WitnessControl
        vkey={witness.witness && witnessVkey(witness.witness)}
        activity={witnessing}
        address={addressWithPin(address, qrPin)}
        onStart={witness.start}
        onStop={witness.stop}
      />
      {SECTIONS.map((Section, i) => <Section key={i} bulletin={bulletin} />)}
    </div>
  );
}

/** The practice ledger's board: its sections over a state reading `/api/lab/…`. */
function PracticeBoard({ pollMs, vote }: LedgerBoardProps) {
  const bulletin = useBulletin(() => createApiClient({ fetch, ledger: "lab" }), { pollMs, vote }, {
    round: null,
  });
  return (
    <div class="bulletin" data-ledger="lab" data-ready={bulletin.ready.value ? "true" : "false"}>
      {PRACTICE_SECTIONS.map((Section, i) => <Section key={i} bulletin={bulletin} />)}
    </div>
  );
}

/** The board state over the client `makeApi` makes, following the chain while the island lives. */
function useBulletin(
  makeApi: () => ApiClient,
  { pollMs, vote }: LedgerBoardProps,
  options: Omit<BulletinOptions, "pollMs">,
) {
  const bulletin = useMemo(() => createBulletinState(makeApi(), { pollMs, ...options }), []);
  useEffect(() => {
    const stop = bulletin.follow(() => {
      performance.mark("ringvote:board-ready");
      // A shared link opens straight to its vote: `#vote=` (never sent to the server), or an
      // older `?vote=` link.
      const shared = sharedVote(location.hash) ?? vote;
      if (shared !== null) bulletin.openShared(shared);
    });
    // A link to another vote of this board changes only the fragment: the page stays.
    const onHash = () => {
      const shared = sharedVote(location.hash);
      if (shared !== null) bulletin.openShared(shared);
    };
    addEventListener("hashchange", onHash);
    return () => {
      removeEventListener("hashchange", onHash);
      stop();
    };
  }, []);
  return bulletin;
}
