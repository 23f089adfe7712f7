// The voting page's interactive part (page §2): the 'Generate A new Voter' button and one panel
// per voter, restored from browser storage. All cryptography runs here, in the browser, through
// lib/; faker is imported on the first click only.
import { useEffect, useMemo, useState } from "react";
import { useSignal } from "@preact/signals";
import ForkAlert from "../components/ForkAlert.tsx";
import Notice from "../components/Notice.tsx";
import StatusLine from "../components/StatusLine.tsx";
import VoterCard from "../components/VoterCard.tsx";
import { createApiClient } from "../lib/app/api_client.ts";
import { watchHeads } from "../lib/app/heads.ts";
import type { ForkEvidence } from "../lib/protocol/schemas.ts";
import {
  chainHeight,
  checkOwnTag,
  type ClientIO,
  generateKeys,
  loadKeyStatus,
  loadVoteStatus,
  readStoredKeys,
  readStoredVote,
  registerKey,
  submitVote,
} from "../lib/app/panel_actions.ts";
import {
  KEY_UNLOADED,
  type KeyStatus,
  type StatusLine as Line,
  type TagCheck,
  VOTE_UNLOADED,
  voteStage,
  type VoteStatus,
} from "../lib/app/status.ts";
import {
  parseVoterList,
  serializeVoterList,
  uniqueNamespace,
  VOTERS_KEY,
} from "../lib/app/voters.ts";

/** How often a pending vote asks whether its block is sealed. */
const PENDING_POLL_MS = 1500;
/** How often the page checks that the chain still extends the signed heads it has seen. */
const HEAD_CHECK_MS = 5000;

/** Props the server renders the voting page with. */
export type VotingPageProps = { ringSize: number };

/** The button and the wrapping row of voter panels. */
export default function VotingPage({ ringSize }: VotingPageProps) {
  const voters = useSignal<string[]>([]);
  const [ready, setReady] = useState(false);
  const [adding, setAdding] = useState(false);
  const fork = useForkEvidence();

  useEffect(() => {
    voters.value = parseVoterList(localStorage.getItem(VOTERS_KEY));
    setReady(true);
    // Lets a measurement read the time from navigation to a usable page.
    performance.mark("ringvote:ready");
  }, []);

  async function addVoter() {
    setAdding(true);
    try {
      const { fakePersonName } = await import("../lib/app/voter_names.ts");
      const current = parseVoterList(localStorage.getItem(VOTERS_KEY));
      const namespace = uniqueNamespace([...current, ...voters.value], fakePersonName);
      const next = [...voters.value, namespace];
      localStorage.setItem(VOTERS_KEY, serializeVoterList(next));
      voters.value = next;
    } finally {
      setAdding(false);
    }
  }

  return (
    <div class="voting-page" data-ready={ready ? "true" : "false"}>
      <p class="page-link">
        <a href="/board">Public bulletin board</a> · <a href="/lab">Attack lab</a>
      </p>
      {fork && <ForkAlert evidence={fork} />}
      <button type="button" class="add-voter" onClick={addVoter} disabled={!ready || adding}>
        Generate A new Voter
      </button>
      <div class="voters">
        {voters.value.map((namespace) => (
          <VoterPanel key={namespace} namespace={namespace} ringSize={ringSize} />
        ))}
      </div>
    </div>
  );
}

/**
 * Fork evidence against the server, once found: the chain's head (and the block at the highest
 * remembered height) checked against the signed heads this browser has seen, now and every
 * {@link HEAD_CHECK_MS}.
 */
function useForkEvidence(): ForkEvidence | null {
  const [fork, setFork] = useState<ForkEvidence | null>(null);
  useEffect(() =>
    watchHeads(createApiClient({ fetch }), {
      storage: localStorage,
      everyMs: HEAD_CHECK_MS,
      onFork: setFork,
      onError: console.error,
    }), []);
  return fork;
}

/** The I/O the panel's actions use: this tab's localStorage, the same-origin API, the console. */
function browserIO(): ClientIO {
  return {
    storage: localStorage,
    api: createApiClient({ fetch }),
    log(message) {
      console.error(message);
    },
  };
}

/** One voter: key management, and vote management once a key id exists (page §2). */
function VoterPanel({ namespace, ringSize }: { namespace: string; ringSize: number }) {
  const io = useMemo(browserIO, []);
  const [keyLine, setKeyLine] = useState<Line<KeyStatus>>(KEY_UNLOADED);
  const [voteLine, setVoteLine] = useState<Line<VoteStatus>>(VOTE_UNLOADED);
  const [keyId, setKeyId] = useState<string | null>(null);
  const [working, setWorking] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [content, setContent] = useState("");
  const [tagLine, setTagLine] = useState<Line<TagCheck> | null>(null);

  async function refreshVote() {
    const hasVote = readStoredVote(io.storage, namespace).voteId !== null;
    if (hasVote) setWorking("Verifying vote…");
    try {
      setVoteLine(await loadVoteStatus(io, namespace));
    } finally {
      if (hasVote) setWorking(null);
    }
  }

  useEffect(() => {
    let live = true;
    (async () => {
      const line = await loadKeyStatus(io, namespace);
      if (!live) return;
      setKeyLine(line);
      setKeyId(readStoredKeys(io.storage, namespace).keyId);
      await refreshVote();
    })();
    return () => {
      live = false;
    };
  }, [namespace]);

  // A pending vote keeps its text until its block is sealed, then is verified again.
  useEffect(() => {
    if (voteLine.status !== "pending") return;
    let busy = false;
    const timer = setInterval(async () => {
      if (busy) return;
      busy = true;
      try {
        const height = await chainHeight(io);
        const stored = readStoredVote(io.storage, namespace);
        if (height !== null && voteStage(stored, height) !== "pending") await refreshVote();
      } finally {
        busy = false;
      }
    }, PENDING_POLL_MS);
    return () => clearInterval(timer);
  }, [voteLine]);

  // A verified vote asks the bulletin board which vote holds its tag: another one means its key
  // signed a vote it did not cast.
  useEffect(() => {
    if (voteLine.status !== "voted") {
      setTagLine(null);
      return;
    }
    let live = true;
    checkOwnTag(io, namespace).then((line) => {
      if (live) setTagLine(line);
    });
    return () => {
      live = false;
    };
  }, [voteLine]);

  function onGenerate() {
    setKeyLine(generateKeys(io, namespace));
    setKeyId(null);
    setVoteLine(VOTE_UNLOADED);
    setProblem(null);
  }

  async function onRegister() {
    setWorking("Registering key…");
    let registered = false;
    try {
      const line = await registerKey(io, namespace);
      registered = line.status === "registered";
      setKeyLine(line);
      setKeyId(readStoredKeys(io.storage, namespace).keyId);
    } finally {
      setWorking(null);
    }
    if (registered) await refreshVote();
  }

  async function onSubmit(event: Event) {
    event.preventDefault();
    setProblem(null);
    setWorking("Signing vote…");
    try {
      const outcome = await submitVote(io, namespace, { content, ringSize });
      if (!outcome.ok) {
        setProblem(outcome.reason);
        return;
      }
      performance.mark("ringvote:signed", { detail: { signMs: outcome.signMs } });
    } finally {
      setWorking(null);
    }
    await refreshVote();
  }

  return (
    <VoterCard name={namespace}>
      <div class="section" data-section="key">
        <h3>KEY MANAGEMENT</h3>
        <StatusLine kind="key" line={keyLine} />
        <div class="actions">
          <button type="button" onClick={onGenerate} disabled={working !== null}>
            Generate new keys
          </button>
          <button type="button" onClick={onRegister} disabled={working !== null}>
            Register A Key
          </button>
        </div>
      </div>
      {keyId !== null && (
        <form class="section" data-section="vote" onSubmit={onSubmit}>
          <h3>VOTE MANAGEMENT</h3>
          <StatusLine kind="vote" line={voteLine} />
          <input
            type="text"
            placeholder="Vote Content"
            value={content}
            onInput={(event) => setContent((event.target as HTMLInputElement).value)}
          />
          <button type="submit" disabled={working !== null}>Submit Vote</button>
          {tagLine !== null && (
            <p
              class={`tag-check status-${tagLine.colour}`}
              data-kind="tag"
              data-status={tagLine.status}
            >
              {tagLine.text}
            </p>
          )}
        </form>
      )}
      {working !== null && <Notice tone="working" text={working} />}
      {problem !== null && <Notice tone="problem" text={problem} />}
    </VoterCard>
  );
}
