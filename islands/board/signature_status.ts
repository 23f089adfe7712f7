/**
 * The signature status of every vote the board lists, checked by the audit workers (every verifier
 * check of protocol §2) and remembered per vote as served, so each is verified once.
 * @module
 */
import { useEffect, useState } from "react";
import type { VoteProblem } from "../../lib/client/audit/findings.ts";
import { problemsOnItsOwn } from "../../lib/client/audit/vote_checks.ts";
import type { VoteRecord } from "../../lib/protocol/schemas.ts";
import { boardPool } from "./vote_check_pool.ts";

/** A listed vote: its id and the vote as served. */
export type ListedVote = { voteId: string; vote: VoteRecord };

/** What a listed vote breaks of the rules it can be judged by on its own; none when it holds. */
export type SignatureStatus = { problems: VoteProblem[] };

const known = new Map<string, SignatureStatus>();
/**
 * What a finding is remembered by: every field the check reads, the ring included, in a form no
 * two different votes share (a payload may hold any character, newlines too).
 */
export const signatureKey = ({ voteId, vote }: ListedVote): string =>
  JSON.stringify([voteId, vote.payload, vote.signature, vote.publicKeys]);

/**
 * The findings of `listed` as they arrive (undefined while a vote is being checked). A vote whose
 * payload, signature or ring changes is checked again.
 */
export function useSignatureStatus(
  listed: readonly ListedVote[],
): (v: ListedVote) => SignatureStatus | undefined {
  const [, setVersion] = useState(0);
  const missing = listed.filter((v) => !known.has(signatureKey(v)));
  const wanted = missing.map(signatureKey).join("\0");
  useEffect(() => {
    if (missing.length === 0) return;
    let live = true;
    // Through a promise, so a pool that cannot start (no worker in the build) is a rejection.
    Promise.resolve().then(() => boardPool().check(missing.map((v) => v.vote))).then((found) =>
      Promise.all(found.map((verification, i) => problemsOnItsOwn(missing[i].vote, verification)))
    ).then((problems) => {
      problems.forEach((list, i) => known.set(signatureKey(missing[i]), { problems: list }));
      if (live) setVersion((n) => n + 1);
    }).catch(() => {
      // The workers could not run: the votes stay "checking"; the audit reports the reason.
    });
    return () => {
      live = false;
    };
  }, [wanted]);
  return (v) => known.get(signatureKey(v));
}
