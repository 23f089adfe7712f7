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
} from "../../lib/client/voter/status.ts";
import KeySection from "./KeySection.tsx";
import PanelRing, { type PanelLens } from "./PanelRing.tsx";
import VoteSection from "./VoteSection.tsx";
import { useOwnTagCheck, usePendingPoll } from "./vote_watch.ts";
import { pageApiClient } from "../hooks/watch_heads.ts";

/**
 * The I/O the panel's actions use: this tab's localStorage, the same-origin API, the console;
 * `logged` also hears every line, for the demo round to show why a registration failed.
 */
function browserIO(logged: (message: string) => void): actions.ClientIO {
  return {
    storage: localStorage,
    api: pageApiClient(),
    log(message) {
      console.error(message);
      logged(message);
    },
  };
}

/** Props of {@link VoterPanel}. */
type VoterPanelProps = {
  namespace: string;
  ringSize: number;
  /** The page's one anonymity analysis, read by a verified vote's ring line. */
  lens: PanelLens;
  /** Tells the page whether this panel's vote is verified (and so shows its ring). */
  onVerified(namespace: string, verified: boolean): void;
  /** Hands the page's demo round this panel's handlers once its lines are decided; null on removal. */
  onPanel?(namespace: string, panel: DemoPanel | null): void;
};

/**
 * One voter: key management, and vote management once a key id exists (page §2); a verified
 * vote also shows its ring and its effective anonymity.
 */
export default function VoterPanel(
  { namespace, ringSize, lens, onVerified, onPanel }: VoterPanelProps,
) {
  const lastLogged = useRef<string | null>(null);
  const io = useMemo(() => browserIO((message) => lastLogged.current = message), []);
  const [keyLine, setKeyLine] = useState<KeyLine>(KEY_UNLOADED);
  const [voteLine, setVoteLine] = useState<VoteLine>(VOTE_UNLOADED);
  const [keyId, setKeyId] = useState<string | null>(null);
  const [working, setWorking] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [content, setContent] = useState("");

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
  usePendingPoll(io, namespace, voteLine, refreshVote);
  useEffect(() => onVerified(namespace, voteLine.status === "voted"), [voteLine]);
  const tagLine = useOwnTagCheck(io, namespace, voteLine);

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
      line = await actions.registerKey(io, namespace);
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
      outcome = await actions.submitVote(io, namespace, { content: text, ringSize });
      if (!outcome.ok) {
        setProblem(outcome.reason);
        return outcome;
      }
      performance.mark("ringvote:signed", { detail: { signMs: outcome.signMs } });
    } finally {
      setWorking(null);
    }
    await refreshVote();
    return outcome;
  }

  async function onSubmit(event: Event) {
    event.preventDefault();
    await vote(content);
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
          working={working !== null}
        />
      )}
      {voteLine.status === "voted" && (
        <PanelRing namespace={namespace} storage={io.storage} lens={lens} />
      )}
      {working !== null && <Notice tone="working" text={working} />}
      {problem !== null && <Notice tone="problem" text={problem} />}
    </VoterCard>
  );
}
