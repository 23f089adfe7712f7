/**
 * One round's part of the voting page (page §2, §14): its question, "Join as a voter", the
 * 'Generate A new Voter' button, the demo round for the presenter, and one panel per voter of this
 * round, restored from the round's browser storage; the fork watch and the anonymity lens over
 * the round's ledger. The page mounts it afresh when the current round changes.
 * @module
 */
import { lazy, Suspense, useEffect, useMemo, useRef, useState } from "react";
import { useSignal } from "@preact/signals";
import ForkAlert from "../../components/ForkAlert.tsx";
import HeadAlerts from "../../components/HeadAlerts.tsx";
import { anonymityByBallot, shownAnalysis } from "../../lib/client/anonymity/anonymity_view.ts";
import { lensSource } from "../../lib/client/anonymity/sealed_rings.ts";
import { roundStorage } from "../../lib/client/rounds/round_storage.ts";
import {
  parseVoterList,
  serializeVoterList,
  storageKey,
  uniqueNamespace,
  VOTER_ENTRIES,
  VOTERS_KEY,
} from "../../lib/client/voter/voters.ts";
import { type PhasedRoundInfo, votesByGroup } from "../../lib/client/rounds/phases.ts";
import ShortLateNote from "./ShortLateNote.tsx";
import SendWindowLine from "./SendWindowLine.tsx";
import { useAnonymityLens, useChainHeight } from "../hooks/use_anonymity_lens.ts";
import { ledgerKey, pageApiClient, useHeadWatch, usePolicyNotice } from "../hooks/watch_heads.ts";
import { wakeWatch } from "../hooks/fed_heads.ts";
import { earliestStage, type PollStage, useQuietRoom } from "../hooks/round_state.ts";
import { mayHoldPin, quietHold, quietRoom } from "../hooks/quiet_signals.ts";
import { loadedRelay } from "../hooks/page_fetch.ts";
import type { RoundState } from "../../lib/protocol/hall_schemas.ts";
import { heldPin } from "../hooks/relay_state.ts";
import { ADMIN_TOKEN_KEY } from "../../lib/client/rounds/presenter_sign_in.ts";
import { CHECKPOINT_CHECK_MS } from "../../lib/client/relay/poll_delays.ts";
import WitnessStatus from "../../components/WitnessStatus.tsx";
import JoinControl from "./JoinControl.tsx";
import { joinAsVoter, joinStatusText } from "../../lib/client/voter/join.ts";
import { loadSigning } from "../../lib/client/voter/panel_actions.ts";
import { isGenesis, verifyBlockHash } from "../../lib/protocol/chain.ts";

/** A carded round's genesis checks (page §14.7), from the chain code the page loads anyway. */
const GENESIS_CHECKS = { isGenesis, verifyBlockHash };
import { relayAlert } from "../hooks/relay_state.ts";
import type { PanelLens } from "./PanelRing.tsx";
import { createPanelRegistry } from "./panel_registry.ts";
import RelayStatus from "./RelayStatus.tsx";
import RoundCountdown from "./RoundCountdown.tsx";
import VoterPanel, { type PanelCard } from "./VoterPanel.tsx";

/** Joining with a card, loaded only in a carded round (page §14.7). */
const CardJoin = lazy(() =>
  import("./card_chunk.ts").then((chunk) => ({ default: chunk.CardJoin }))
);

/** The demo round, loaded only in the presenter's browser. */
const DemoRound = lazy(() => import("./DemoRound.tsx"));

/** How often the page follows the chain while some panel shows its ballot's anonymity. */
const LENS_POLL_MS = 3000;
/** How often the page checks that the chain still extends the signed heads it has seen. */
const HEAD_CHECK_MS = 5000;
/** How often a quiet phone does (page §14.8): its minimum checkpoint check. */
const QUIET_HEAD_CHECK_MS = CHECKPOINT_CHECK_MS;

/**
 * True from voting opening until the phone's vote has left, while the send window lasts and the
 * round votes: the phone reads nothing but its state and its group before it signs (page §14.8).
 * A voter who has not voted by the window's end, or by the close, holds nothing back.
 */
function aboutToSign(stage: PollStage, state: RoundState | null, now: number): boolean {
  if (stage !== "voting" && stage !== "waiting") return false;
  if (state === null || state.phase !== "voting") return false;
  // A state read went through the relay transport: its module, which works out W, is loaded.
  const windowMs = loadedRelay()?.ownWindowMs(state) ?? null;
  return state.openedAt !== null && windowMs !== null && now < state.openedAt + 5_000 + windowMs;
}

/** Props of {@link RoundVoters}. */
export type RoundVotersProps = {
  round: PhasedRoundInfo;
  ringSize: number;
  /** The presenter's token in the presenter's browser, else null. */
  presenter: string | null;
};

/** The round's question, its join control, and its voters' panels. */
export default function RoundVoters({ round, ringSize, presenter }: RoundVotersProps) {
  const ledger = useMemo(() => ({ round: round.id }), []);
  const storage = useMemo(() => roundStorage(localStorage, round.id), []);
  const voters = useSignal<string[]>([]);
  const [ready, setReady] = useState(false);
  const [adding, setAdding] = useState(false);
  // A carded round's card, handed to the panels once the phone's card is checked (page §14.7).
  const [card, setCard] = useState<PanelCard | null>(null);
  const carded = round.cards ?? null;
  // Panels whose vote is verified, by namespace: while there are any, the page follows the chain
  // and keeps one anonymity analysis per height for all of them.
  const verified = useSignal<ReadonlySet<string>>(new Set());
  // A phone with a relay pinned, in a round with phases, is quiet (page §14.8): one state read on
  // a schedule of its own, its timed reads answered from it; the presenter's page polls as before.
  const [mayBeQuiet] = useState(() =>
    votesByGroup(round) && mayHoldPin() && localStorage.getItem(ADMIN_TOKEN_KEY) === null
  );
  const quiet = mayBeQuiet && presenter === null && heldPin.value?.pin !== null;
  const stages = useSignal<ReadonlyMap<string, PollStage>>(new Map());
  const stage = earliestStage(stages.value.values());
  const stageRef = useRef(stage);
  stageRef.current = stage;
  const lastCheck = useRef(0);
  const { fork, alerts, view } = useHeadWatch(HEAD_CHECK_MS, {
    ledger,
    storage,
    // A quiet phone's timer checks every QUIET_HEAD_CHECK_MS, never between voting opening and
    // its vote leaving within the send window: a phone signs after 2 reads.
    paused: () => {
      if (!quiet) return false;
      const now = Date.now();
      if (now - lastCheck.current < QUIET_HEAD_CHECK_MS) return true;
      lastCheck.current = now;
      return false;
    },
    holding: () =>
      quiet && aboutToSign(stageRef.current, quietRoom.peek()?.state ?? null, Date.now()),
  });
  // Between voting opening and its vote leaving, a quiet phone's other reads wait (page §14.8).
  useEffect(() => {
    const hold = quiet && aboutToSign(stage, quietRoom.peek()?.state ?? null, Date.now());
    quietHold.value = hold;
    if (!hold) return;
    const timer = setInterval(() => {
      quietHold.value = aboutToSign(stageRef.current, quietRoom.peek()?.state ?? null, Date.now());
    }, 1000);
    return () => {
      clearInterval(timer);
      quietHold.value = false;
    };
  }, [quiet, stage, quietRoom.value?.state]);
  const state = useQuietRoom({
    round: round.id,
    active: quiet,
    stage,
    // One more check once the round is over.
    onOver: () => wakeWatch(ledgerKey(ledger)),
  });
  const notice = usePolicyNotice();
  const api = useMemo(() => pageApiClient(ledger), []);
  const panels = useMemo(createPanelRegistry, []);
  const source = useMemo(() => lensSource(api), []);
  // A round with phases needs no block read for its anonymity line: its rings are its groups.
  const phased = votesByGroup(round);
  const height = useChainHeight(async () => (await api.blockStatus()).height, {
    active: !phased && verified.value.size > 0,
    pollMs: LENS_POLL_MS,
  });
  const lens = useAnonymityLens(source, { height });
  const panelLens = useMemo<PanelLens>(() => {
    const analysis = lens.result && shownAnalysis(lens.result);
    // A record no assignment fits has no figures: the panels say why instead of waiting.
    const inconsistent = analysis && !analysis.consistent ? analysis.problem : null;
    return { anonymity: anonymityByBallot(analysis), problem: lens.problem ?? inconsistent };
  }, [lens.result, lens.problem]);

  function onStage(namespace: string, next: PollStage | null) {
    if ((stages.value.get(namespace) ?? null) === next) return;
    const changed = new Map(stages.value);
    if (next === null) changed.delete(namespace);
    else changed.set(namespace, next);
    stages.value = changed;
  }

  function onVerified(namespace: string, isVerified: boolean) {
    if (verified.value.has(namespace) === isVerified) return;
    const next = new Set(verified.value);
    if (isVerified) next.add(namespace);
    else next.delete(namespace);
    verified.value = next;
  }

  useEffect(() => {
    voters.value = parseVoterList(storage.getItem(VOTERS_KEY));
    setReady(true);
    // Lets a measurement read the time from navigation to a usable page.
    performance.mark("ringvote:ready");
  }, []);

  /** Adds a voter with a generated name to the stored list; answers its namespace. */
  async function addVoter(): Promise<string> {
    setAdding(true);
    try {
      const { fakePersonName } = await import("../../lib/client/voter/voter_names.ts");
      const current = parseVoterList(storage.getItem(VOTERS_KEY));
      const namespace = uniqueNamespace([...current, ...voters.value], fakePersonName);
      const next = [...voters.value, namespace];
      storage.setItem(VOTERS_KEY, serializeVoterList(next));
      voters.value = next;
      return namespace;
    } finally {
      setAdding(false);
    }
  }

  /** Forgets a voter and its entries: a card refusal keeps nothing (page §14.7). */
  function removeVoter(namespace: string) {
    const next = voters.value.filter((name) => name !== namespace);
    for (const entry of VOTER_ENTRIES) storage.removeItem(storageKey(namespace, entry));
    storage.setItem(VOTERS_KEY, serializeVoterList(next));
    voters.value = next;
  }

  const joined = voters.value.length > 0;
  return (
    <div
      class="voting-page"
      data-ready={ready ? "true" : "false"}
      data-round={round.id}
      data-joined={joined ? "true" : "false"}
    >
      {fork && <ForkAlert evidence={fork} />}
      <HeadAlerts alerts={alerts} />
      <WitnessStatus view={view?.witness ?? null} notice={notice} forked={fork !== null} />
      <RelayStatus />
      {round.question !== "" && (
        <h2 class="round-question" data-round-question="">
          {round.question}
        </h2>
      )}
      <RoundCountdown ledger={ledger} />
      {state !== null && <SendWindowLine state={state} />}
      {phased && <ShortLateNote round={round.id} />}
      {carded === null
        ? (
          <JoinControl
            ready={ready && !adding}
            joined={joined}
            addVoter={addVoter}
            panelOf={panels.get}
          />
        )
        : (
          <Suspense fallback={null}>
            <CardJoin
              round={round.id}
              api={api}
              pinsFailed={relayAlert.value !== null}
              joinAsVoter={joinAsVoter}
              joinStatusText={joinStatusText}
              loadSigning={loadSigning}
              chain={GENESIS_CHECKS}
              set={carded}
              ready={ready && !adding}
              joined={joined}
              addVoter={addVoter}
              panelOf={panels.get}
              removeVoter={removeVoter}
              onCard={setCard}
            />
          </Suspense>
        )}
      <div class="voting-controls">
        {
          // In a round with phases a phone joins once: a second key from one phone only shrinks
          // everyone's anonymity (page §14.2).
          !phased && (
            <button
              type="button"
              class="add-voter"
              onClick={addVoter}
              disabled={!ready || adding}
            >
              Generate A new Voter
            </button>
          )
        }
        {presenter !== null && (
          <Suspense fallback={null}>
            <DemoRound
              presenterToken={phased ? presenter : null}
              cards={carded}
              ringSize={ringSize}
              ready={ready}
              ledger={ledger}
              storage={storage}
              choices={round.choices}
              addVoter={addVoter}
              panelOf={panels.get}
            />
          </Suspense>
        )}
      </div>
      <div class="voters">
        {voters.value.map((namespace) => (
          <VoterPanel
            key={namespace}
            namespace={namespace}
            ringSize={ringSize}
            lens={panelLens}
            round={round}
            storage={storage}
            onVerified={onVerified}
            onStage={onStage}
            quietState={quiet ? state : undefined}
            onPanel={panels.set}
            logView={view}
            card={card}
          />
        ))}
      </div>
    </div>
  );
}
