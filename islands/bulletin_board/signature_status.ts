// The signature status of every vote the board lists, checked in this browser by the audit
// workers (lib/app/vote_checks.ts: every verifier check of protocol §2) and remembered per vote
// id and signature, so each listed vote is verified once however often it is shown.
import { useEffect, useState } from "react";
import type { VoteFinding } from "../../lib/app/vote_checks.ts";
import type { VoteRecord } from "../../lib/protocol/schemas.ts";
import { boardPool } from "./vote_check_pool.ts";

/** A listed vote: its id and the vote as served. */
export type ListedVote = { voteId: string; vote: VoteRecord };

const known = new Map<string, VoteFinding>();
const keyOf = ({ voteId, vote }: ListedVote) => `${voteId}\n${vote.payload}\n${vote.signature}`;

/**
 * The findings of `listed` as they arrive (undefined while a vote is being checked). A vote whose
 * payload or signature changes is checked again.
 */
export function useSignatureStatus(
  listed: readonly ListedVote[],
): (v: ListedVote) => VoteFinding | undefined {
  const [, setVersion] = useState(0);
  const missing = listed.filter((v) => !known.has(keyOf(v)));
  const wanted = missing.map(keyOf).join("\0");
  useEffect(() => {
    if (missing.length === 0) return;
    let live = true;
    // Through a promise, so a pool that cannot start (no worker in the build) is a rejection.
    Promise.resolve().then(() => boardPool().check(missing.map((v) => v.vote))).then((findings) => {
      findings.forEach((finding, i) => known.set(keyOf(missing[i]), finding));
      if (live) setVersion((n) => n + 1);
    }).catch(() => {
      // The workers could not run: the votes stay "checking"; the audit reports the reason.
    });
    return () => {
      live = false;
    };
  }, [wanted]);
  return (v) => known.get(keyOf(v));
}
