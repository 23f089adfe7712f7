/**
 * Why a key of the previous round never voted (page §14.2): it joined after voting opened, waited
 * for a late group, and the round ended before the group filled. Read from the previous round's
 * storage, where the panel marked the key as waiting.
 * @module
 */
import { useEffect, useState } from "react";
import { isMarkedLate } from "../../lib/client/rounds/round_storage.ts";
import { roundStorage } from "../../lib/client/rounds/round_storage.ts";
import { shortLateText } from "../../lib/client/rounds/round_texts.ts";
import { readStoredVote } from "../../lib/client/voter/panel_actions.ts";
import { parseVoterList, VOTERS_KEY } from "../../lib/client/voter/voters.ts";

/** The note for round `round` − 1, or nothing when no key of it was left waiting. */
export default function ShortLateNote({ round }: { round: number }) {
  const [short, setShort] = useState(false);
  useEffect(() => {
    const previous = round - 1;
    if (previous < 2) return;
    const storage = roundStorage(localStorage, previous);
    const voters = parseVoterList(storage.getItem(VOTERS_KEY));
    setShort(
      voters.some((namespace) =>
        isMarkedLate(storage, namespace) && readStoredVote(storage, namespace).voteId === null
      ),
    );
  }, [round]);
  if (!short) return null;
  return <p class="notice notice-problem" data-short-late="">{shortLateText(round - 1)}</p>;
}
