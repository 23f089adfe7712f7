// The voting page's interactive part (page §2): the 'Generate A new Voter' button and one panel
// per voter, restored from browser storage. All cryptography runs here, in the browser, through
// lib/; faker is imported on the first click only.
import { useEffect, useState } from "react";
import { useSignal } from "@preact/signals";
import {
  parseVoterList,
  serializeVoterList,
  uniqueNamespace,
  VOTERS_KEY,
} from "../lib/app/voters.ts";
import VoterPanel from "./voting_page/VoterPanel.tsx";

/** Props the server renders the voting page with. */
export type VotingPageProps = { ringSize: number };

/** The button and the wrapping row of voter panels. */
export default function VotingPage({ ringSize }: VotingPageProps) {
  const voters = useSignal<string[]>([]);
  const [ready, setReady] = useState(false);
  const [adding, setAdding] = useState(false);

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
        <a href="/board">Public bulletin board</a>
      </p>
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
