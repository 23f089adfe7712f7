/**
 * The signature status of every vote the board lists, checked by the audit workers (every verifier
 * check of protocol §2) and remembered per vote as served: by each list for the votes it lists now,
 * and for the votes listed last (twice the votes the board holds), so each is verified once while it
 * is listed, however many votes a list holds.
 * @module
 */
import { useEffect, useState } from "react";
import type { VoteProblem } from "../../lib/client/audit/findings.ts";
import { problemsOnItsOwn } from "../../lib/client/audit/vote_checks.ts";
import { bytesToHex, utf8 } from "../../lib/protocol/bytes.ts";
import { sha256 } from "../../lib/protocol/hash.ts";
import { createLruCache, type LruCache } from "../../lib/protocol/member_cache.ts";
import type { VoteRecord } from "../../lib/protocol/schemas.ts";
import { HELD_VOTES_BUDGET } from "./state.ts";
import { boardPool } from "./vote_check_pool.ts";

/** A listed vote: its id and the vote as served. */
export type ListedVote = { voteId: string; vote: VoteRecord };

/** What a listed vote breaks of the rules it can be judged by on its own; none when it holds. */
export type SignatureStatus = { problems: VoteProblem[] };

/** The findings remembered, most recently listed last: those of the votes held, twice over. */
const known = createLruCache<SignatureStatus>(2 * HELD_VOTES_BUDGET);

/** Each vote's key once computed, while the vote is held. */
const keyOf = new WeakMap<VoteRecord, { voteId: string; key: string }>();

/**
 * What a finding is remembered by: the SHA-256 of every field the check reads, the ring included,
 * in a form no two different votes share (a payload may hold any character, newlines too; JSON
 * escapes a lone surrogate, so the UTF-8 of the form is one to one).
 */
export function signatureKey({ voteId, vote }: ListedVote): string {
  const memo = keyOf.get(vote);
  if (memo?.voteId === voteId) return memo.key;
  const form = JSON.stringify([voteId, vote.payload, vote.signature, vote.publicKeys]);
  const key = bytesToHex(sha256(utf8(form)));
  keyOf.set(vote, { voteId, key });
  return key;
}

/**
 * What one list knows of its votes' findings: its own, for the votes it lists now (so a list longer
 * than the shared memory never pushes out its own results and checks them again, forever), then the
 * shared memory of the votes listed last.
 */
export function createListingMemory(shared: LruCache<SignatureStatus> = known) {
  const mine = new Map<string, SignatureStatus>();
  return {
    /** The keys of `listed`; the list's own findings of votes no longer listed are let go. */
    list(listed: readonly ListedVote[]): string[] {
      const keys = listed.map(signatureKey);
      const current = new Set(keys);
      for (const key of mine.keys()) if (!current.has(key)) mine.delete(key);
      return keys;
    },
    get: (key: string) => mine.get(key) ?? shared.get(key),
    set(key: string, status: SignatureStatus) {
      mine.set(key, status);
      shared.set(key, status);
    },
  };
}

/**
 * The findings of `listed` as they arrive (undefined while a vote is being checked). A vote whose
 * payload, signature or ring changes is checked again.
 */
export function useSignatureStatus(
  listed: readonly ListedVote[],
): (v: ListedVote) => SignatureStatus | undefined {
  const [, setVersion] = useState(0);
  const [memory] = useState(createListingMemory);
  const keys = memory.list(listed);
  const missing = listed.filter((_, i) => memory.get(keys[i]) === undefined);
  const wanted = missing.map(signatureKey).join("\0");
  useEffect(() => {
    if (missing.length === 0) return;
    let live = true;
    // Through a promise, so a pool that cannot start (no worker in the build) is a rejection.
    Promise.resolve().then(() => boardPool().check(missing.map((v) => v.vote))).then((found) =>
      Promise.all(found.map((verification, i) => problemsOnItsOwn(missing[i].vote, verification)))
    ).then((problems) => {
      problems.forEach((list, i) => memory.set(signatureKey(missing[i]), { problems: list }));
      if (live) setVersion((n) => n + 1);
    }).catch(() => {
      // The workers could not run: the votes stay "checking"; the audit reports the reason.
    });
    return () => {
      live = false;
    };
  }, [wanted]);
  return (v) => memory.get(signatureKey(v));
}
