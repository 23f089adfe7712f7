/**
 * One voter's panel on the voting page (page §2): key management, and vote management once a key id
 * exists, driven by lib/client/voter/panel_actions.ts; the demo round runs the same handlers.
 * @module
 */
import { useEffect, useMemo, useRef, useState } from "react";
import Notice from "../../components/Notice.tsx";
import VoterCard from "./VoterCard.tsx";
import type { DemoPanel } from "../../lib/client/voter/demo_round.ts";
import * as actions from "../../lib/client/voter/panel_actions.ts";
import {
  KEY_UNLOADED,
  type KeyLine,
  VOTE_UNLOADED,
  type VoteLine,
  type VoteRefusal,
  voteRefusal,
  waitingForVotersText,
} from "../../lib/client/voter/status.ts";
import KeySection from "./KeySection.tsx";
import PanelRing, { type PanelLens } from "./PanelRing.tsx";
import VoteSection from "./VoteSection.tsx";
import { useOwnTagCheck, usePendingPoll, useWaitForVoters } from "./vote_watch.ts";
import { type LogView, pageApiClient } from "../hooks/watch_heads.ts";
import { loadRelay } from "../hooks/page_fetch.ts";
import type { ShownBlock } from "../../lib/client/log/log_view.ts";
import type { PageStorage } from "../../lib/client/rounds/round_storage.ts";
import { type PhasedRoundInfo, phaseFields, votesByGroup } from "../../lib/client/rounds/phases.ts";
import {
  keepChosen,
  markLate,
  readChosen,
  readGroupState,
} from "../../lib/client/rounds/round_group.ts";
import { useGroupWatch } from "./group_watch.ts";
import type { PollStage } from "../hooks/round_state.ts";
import type { RoundState } from "../../lib/protocol/hall_schemas.ts";
import { panelStage, quietGroupIndex } from "./panel_stage.ts";
import VoteWitnessed from "./VoteWitnessed.tsx";
import { groupWaitingText } from "./group_lines.ts";
import { groupFingerprintText } from "../../lib/client/rounds/round_texts.ts";

/** A carded round's card (page §14.7): signs the key's admission; hears a server's refusal. */
export type PanelCard = actions.RegistrationCard;

/**
 * The I/O the panel's actions use: the round's storage in this tab, the round's same-origin API,
 * the console; `logged` also hears every line, for the demo round to show why a registration failed.
 */
function browserIO(
  logged: (message: string) => void,
  { round, storage }: { round: number; storage: PageStorage },
): actions.ClientIO {
  return {
    storage,
    api: pageApiClient({ round }),
    log(message) {
      console.error(message);
      logged(message);
    },
  };
}

/** How long a kept choice refused "voting not open" waits before it is tried again. */
const NOT_OPEN_RETRY_MS = 2000;
/** How many times it is tried again: a minute of retries, then a reload starts over. */
const MAX_NOT_OPEN_RETRIES = 30;

/** Props of {@link VoterPanel}. */
type VoterPanelProps = {
  namespace: string;
  ringSize: number;
  /** The round the voter votes in: its choices, if any, and its phase. */
  round: PhasedRoundInfo;
  /** The round's browser storage (page §14). */
  storage: PageStorage;
  /** The page's one anonymity analysis, read by a verified vote's ring line. */
  lens: PanelLens;
  /** Tells the page whether this panel's vote is verified (and so shows its ring). */
  onVerified(namespace: string, verified: boolean): void;
  /** Hands the page's demo round this panel's handlers once its lines are decided; null on removal. */
  onPanel?(namespace: string, panel: DemoPanel | null): void;
  /** The page's view of the log: blocks proven included, and the witnesses' cosigned size. */
  logView?: LogView | null;
  /** In a carded round, the card the key registers with (page §14.7); none otherwise. */
  card?: PanelCard | null;
  /** Hears where this panel stands, for a quiet phone's schedule (page §14.8); null on removal. */
  onStage?(namespace: string, stage: PollStage | null): void;
  /** A quiet phone's latest state read (null before the first); undefined on any other page. */
  quietState?: RoundState | null;
};

/**
 * One voter: key management, and vote management once a key id exists (page §2); a verified
 * vote also shows its ring and its effective anonymity.
 */
export default function VoterPanel(
  {
    namespace,
    ringSize,
    round,
    storage,
    lens,
    onVerified,
    onPanel,
    logView = null,
    card = null,
    onStage,
    quietState,
  }: VoterPanelProps,
) {
  const lastLogged = useRef<string | null>(null);
  const io = useMemo(
    () => browserIO((message) => lastLogged.current = message, { round: round.id, storage }),
    [],
  );
  const [keyLine, setKeyLine] = useState<KeyLine>(KEY_UNLOADED);
  const [voteLine, setVoteLine] = useState<VoteLine & { block?: ShownBlock }>(VOTE_UNLOADED);
  const [keyId, setKeyId] = useState<string | null>(null);
  const [working, setWorking] = useState<string | null>(null);
  const [problem, setProblem] = useState<{ text: string; detail?: string } | null>(null);
  const [content, setContent] = useState("");
  // A round with phases signs over the voter's group (protocol §2.8), not a sampled ring.
  const phased = votesByGroup(round);
  const { minVoters, lateJoiners, joinDeadline } = phaseFields(round);
  // A choice made before the vote could be sent: sent by itself once it can be. In a round with
  // phases it is kept in the round's storage, so a reload keeps it too (page §14.2).
  const [queued, setQueuedState] = useState<string | null>(() =>
    phased ? readChosen(storage, namespace) : null
  );
  function setQueued(choice: string | null) {
    if (phased) keepChosen(storage, namespace, choice);
    setQueuedState(choice);
  }
  const ownKey = keyId === null ? null : actions.readStoredKeys(io.storage, namespace).publicKey;
  const group = useGroupWatch(io.api, {
    ownId: phased && keyId !== null ? Number(keyId) : null,
    ownKey,
    rule: phased ? { minVoters, lateJoiners } : null,
    state: quietState,
  });
  const inGroup = group?.kind === "group" ? group : null;
  // A kept choice refused "voting not open" while this key has its group is tried again, a few
  // seconds apart and a bounded number of times: nothing else would send it before a reload.
  const [retries, setRetries] = useState(0);
  const retryTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => {
    if (retryTimer.current !== null) clearTimeout(retryTimer.current);
  }, []);

  async function refreshVote() {
    const hasVote = actions.readStoredVote(io.storage, namespace).voteId !== null;
    if (hasVote) setWorking("Verifying vote…");
    try {
      setVoteLine(await actions.loadVoteStatus(io, namespace));
    } finally {
      if (hasVote) setWorking(null);
    }
  }

  useEffect(() => {
    let live = true;
    (async () => {
      const line = await actions.loadKeyStatus(io, namespace);
      if (!live) return;
      setKeyLine(line);
      setKeyId(actions.readStoredKeys(io.storage, namespace).keyId);
      await refreshVote();
      if (live) onPanel?.(namespace, demoPanel);
    })();
    return () => {
      live = false;
      onPanel?.(namespace, null);
    };
  }, [namespace]);

  // A pending vote keeps its text until its block is sealed, then is verified again.
  usePendingPoll(
    io,
    namespace,
    voteLine,
    refreshVote,
    quietState === undefined ? undefined : quietState?.sealed.height ?? null,
  );
  // A registered voter with no vote yet learns how many more must join before a ring fills, and a
  // choice made meanwhile is sent as soon as they have.
  const waiting = useWaitForVoters(io, {
    ringSize,
    active: !phased && keyId !== null && voteLine.status === "unvoted",
    onEnough: () => {
      if (queued !== null) handlers.current.vote(queued);
    },
  });
  useEffect(() => onVerified(namespace, voteLine.status === "voted"), [voteLine]);
  // Once voting opens and this key has its group, a kept choice is signed and sent.
  useEffect(() => {
    if (!phased || group === null) return;
    markLate(storage, namespace, group.kind === "pending" && group.lateJoiners);
    if (inGroup !== null && voteLine.status === "unvoted" && queued !== null && working === null) {
      handlers.current.vote(queued);
    }
  }, [group, voteLine.status, retries]);
  const tagLine = useOwnTagCheck(io, namespace, voteLine);
  const stage = panelStage({ group, voteStatus: voteLine.status, proven: tagLine !== null });
  useEffect(() => onStage?.(namespace, stage), [stage]);
  useEffect(() => () => onStage?.(namespace, null), []);

  function onGenerate() {
    setKeyLine(actions.generateKeys(io, namespace));
    setKeyId(null);
    setVoteLine(VOTE_UNLOADED);
    setProblem(null);
  }

  async function onRegister(): Promise<KeyLine> {
    setWorking("Registering key…");
    let line: KeyLine;
    try {
      line = await actions.registerKey(io, namespace, card);
      setKeyLine(line);
      setKeyId(actions.readStoredKeys(io.storage, namespace).keyId);
    } finally {
      setWorking(null);
    }
    if (line.status === "registered") await refreshVote();
    return line;
  }

  /** What 'Submit Vote' does with the field's `text`. */
  async function vote(text: string): Promise<actions.VoteOutcome> {
    setProblem(null);
    setWorking("Signing vote…");
    let outcome: actions.VoteOutcome;
    try {
      outcome = await actions.submitVote(io, namespace, {
        content: text,
        ringSize,
        ...(phased ? { groupRing: (ownId: number) => groupRing(text, ownId) } : {}),
      });
      if (!outcome.ok) {
        const notOpen = outcome.code === "no_ring" ||
          (outcome.code === "refused" && outcome.serverCode === "voting_not_open");
        if (phased && notOpen && round.choices.length > 0) {
          // A choice is kept and sent by itself once voting opens for this key (page §14.2).
          setQueued(text);
          if (inGroup !== null && outcome.code === "refused" && retries < MAX_NOT_OPEN_RETRIES) {
            retryTimer.current = setTimeout(() => setRetries((n) => n + 1), NOT_OPEN_RETRY_MS);
          }
        } else if (outcome.code === "too_few_keys" && round.choices.length > 0) {
          // A choice is kept and sent by itself once enough voters have joined (page §14.2).
          setQueued(text);
          waiting.recheck();
        } else {
          // Free text is refused as page §11 says; the waiting line says how many must join.
          if (outcome.code === "too_few_keys") waiting.recheck();
          setProblem({ text: outcome.reason, detail: outcome.detail });
          // A vote whose answer was lost, or a second one, may be counted already: ask again.
          if (outcome.code === "unconfirmed" || outcome.code === "duplicate_tag") {
            await refreshVote();
          }
        }
        return outcome;
      }
      setQueued(null);
      performance.mark("ringvote:signed", { detail: { signMs: outcome.signMs } });
    } finally {
      setWorking(null);
    }
    await refreshVote();
    return outcome;
  }

  /**
   * The voter's group ring, read afresh when the watch has not seen it yet (a quiet phone's from
   * its state only); before there is one, the choice is kept and the refusal says what it waits for.
   */
  async function groupRing(text: string, ownId: number): Promise<string[] | VoteRefusal> {
    const rule = { minVoters, lateJoiners };
    const state = inGroup ??
      (quietState === null
        ? { kind: "unknown" as const, reason: "the round's state is not read yet" }
        : quietState
        ? await (await loadRelay()).readGroupFromState(io.api, {
          ownId,
          ownKey: ownKey ?? "",
          rule,
          state: quietState,
        })
        : await readGroupState(io.api, { ownId, rule }));
    if (state.kind === "group") return state.keys;
    if (round.choices.length > 0) setQueued(text);
    const known = state.kind === "unknown" ? group : state;
    return voteRefusal({
      code: "no_ring",
      error: groupWaitingText({ group: known, minVoters, joinDeadline }) ??
        "Voting is not open yet",
    });
  }

  async function onSubmit(event: Event) {
    event.preventDefault();
    await vote(content);
  }

  /** A choice button: that choice is the vote, sent now, or queued while voters are missing. */
  async function onChoice(choice: string) {
    setContent(choice);
    if (phased && inGroup === null) {
      setQueued(choice);
      return;
    }
    if (!phased && waiting.missing !== null && waiting.missing > 0) {
      setQueued(choice);
      return;
    }
    await vote(choice);
  }

  // The demo round's way in: the handlers above, read through a ref so that it always runs the
  // ones of the latest render, as a click would.
  const handlers = useRef({ onGenerate, onRegister, vote });
  handlers.current = { onGenerate, onRegister, vote };
  const demoPanel = useMemo<DemoPanel>(() => ({
    generateKeys() {
      handlers.current.onGenerate();
      return { ok: true };
    },
    async registerKey() {
      lastLogged.current = null;
      const line = await handlers.current.onRegister();
      if (line.status === "registered") return { ok: true };
      return { ok: false, reason: lastLogged.current ?? line.text };
    },
    async submitVote(text) {
      setContent(text);
      const outcome = await handlers.current.vote(text);
      return outcome.ok ? { ok: true } : outcome;
    },
  }), []);

  return (
    <VoterCard name={namespace}>
      <KeySection
        keyLine={keyLine}
        onGenerate={onGenerate}
        onRegister={onRegister}
        working={working !== null}
      />
      {keyId !== null && (
        <VoteSection
          voteLine={voteLine}
          tagLine={tagLine}
          content={content}
          onContent={setContent}
          onSubmit={onSubmit}
          choices={round.choices}
          onChoice={onChoice}
          waiting={voteLine.status !== "unvoted"
            ? null
            : phased
            ? groupWaitingText({ group, minVoters, joinDeadline })
            : waiting.missing !== null && waiting.missing > 0
            ? waitingForVotersText(waiting.missing, ringSize)
            : null}
          keptChoice={!(group?.kind === "pending" && !group.lateJoiners)}
          queued={queued}
          working={working !== null}
        />
      )}
      {inGroup !== null && voteLine.status !== "voted" && (
        <p class="group-fingerprint" data-group-fingerprint={inGroup.fingerprint}>
          {groupFingerprintText(inGroup.fingerprint)}
        </p>
      )}
      {voteLine.status === "voted" && logView?.witness && (
        <VoteWitnessed view={logView} block={voteLine.block ?? null} />
      )}
      {voteLine.status === "voted" && (
        <PanelRing
          namespace={namespace}
          storage={io.storage}
          lens={lens}
          group={phased
            ? { late: inGroup?.late ?? false, index: quietGroupIndex(quietState, keyId) }
            : null}
          api={io.api}
        />
      )}
      {working !== null && <Notice tone="working" text={working} />}
      {problem !== null && <Notice tone="problem" text={problem.text} />}
      {problem?.detail !== undefined && (
        <details class="notice-detail">
          <summary>What the server said</summary>
          <p>{problem.detail}</p>
        </details>
      )}
    </VoterCard>
  );
}
