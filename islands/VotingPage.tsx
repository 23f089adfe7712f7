// The voting page's interactive part (page §2): the 'Generate A new Voter' button and one panel
// per voter, restored from browser storage. All cryptography runs here, in the browser, through
// lib/; faker is imported on the first click only. Beside the button, the demo round (page §11)
// drives new voters' panels through their own handlers.
import { useEffect, useMemo, useState } from "react";
import { useSignal } from "@preact/signals";
import ForkAlert from "../components/ForkAlert.tsx";
import HeadAlerts from "../components/HeadAlerts.tsx";
import { anonymityByBallot, shownAnalysis } from "../lib/client/anonymity/anonymity_view.ts";
import { pageApiClient, useHeadWatch } from "./hooks/watch_heads.ts";
import { lensSource } from "../lib/client/anonymity/sealed_rings.ts";
import {
  parseVoterList,
  serializeVoterList,
  uniqueNamespace,
  VOTERS_KEY,
} from "../lib/client/voter/voters.ts";
import { useAnonymityLens, useChainHeight } from "./hooks/use_anonymity_lens.ts";
import DemoRound from "./voting/DemoRound.tsx";
import type { PanelLens } from "./voting/PanelRing.tsx";
import { createPanelRegistry } from "./voting/panel_registry.ts";
import VoterPanel from "./voting/VoterPanel.tsx";

/** How often the page follows the chain while some panel shows its ballot's anonymity. */
const LENS_POLL_MS = 3000;
/** How often the page checks that the chain still extends the signed heads it has seen. */
const HEAD_CHECK_MS = 5000;

/** Props the server renders the voting page with. */
export type VotingPageProps = { ringSize: number };

/** The button and the wrapping row of voter panels. */
export default function VotingPage({ ringSize }: VotingPageProps) {
  const voters = useSignal<string[]>([]);
  const [ready, setReady] = useState(false);
  const [adding, setAdding] = useState(false);
  // Panels whose vote is verified, by namespace: while there are any, the page follows the chain
  // and keeps one anonymity analysis per height for all of them.
  const verified = useSignal<ReadonlySet<string>>(new Set());
  const { fork, alerts } = useHeadWatch(HEAD_CHECK_MS);
  const api = useMemo(pageApiClient, []);
  const panels = useMemo(createPanelRegistry, []);
  const source = useMemo(() => lensSource(api), []);
  const height = useChainHeight(async () => (await api.blockStatus()).height, {
    active: verified.value.size > 0,
    pollMs: LENS_POLL_MS,
  });
  const lens = useAnonymityLens(source, { height });
  const panelLens = useMemo<PanelLens>(() => {
    const analysis = lens.result && shownAnalysis(lens.result);
    // A record no assignment fits has no figures: the panels say why instead of waiting.
    const inconsistent = analysis && !analysis.consistent ? analysis.problem : null;
    return { anonymity: anonymityByBallot(analysis), problem: lens.problem ?? inconsistent };
  }, [lens.result, lens.problem]);

  function onVerified(namespace: string, isVerified: boolean) {
    if (verified.value.has(namespace) === isVerified) return;
    const next = new Set(verified.value);
    if (isVerified) next.add(namespace);
    else next.delete(namespace);
    verified.value = next;
  }

  useEffect(() => {
    voters.value = parseVoterList(localStorage.getItem(VOTERS_KEY));
    setReady(true);
    // Lets a measurement read the time from navigation to a usable page.
    performance.mark("ringvote:ready");
  }, []);

  /** Adds a voter with a generated name to the stored list; answers its namespace. */
  async function addVoter(): Promise<string> {
    setAdding(true);
    try {
      const { fakePersonName } = await import("../lib/client/voter/voter_names.ts");
      const current = parseVoterList(localStorage.getItem(VOTERS_KEY));
      const namespace = uniqueNamespace([...current, ...voters.value], fakePersonName);
      const next = [...voters.value, namespace];
      localStorage.setItem(VOTERS_KEY, serializeVoterList(next));
      voters.value = next;
      return namespace;
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
      <HeadAlerts alerts={alerts} />
      <div class="voting-controls">
        <button type="button" class="add-voter" onClick={addVoter} disabled={!ready || adding}>
          Generate A new Voter
        </button>
        <DemoRound ringSize={ringSize} ready={ready} addVoter={addVoter} panelOf={panels.get} />
      </div>
      <div class="voters">
        {voters.value.map((namespace) => (
          <VoterPanel
            key={namespace}
            namespace={namespace}
            ringSize={ringSize}
            lens={panelLens}
            onVerified={onVerified}
            onPanel={panels.set}
          />
        ))}
      </div>
    </div>
  );
}
