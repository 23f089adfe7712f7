/**
 * Browser-safe. What can be checked about one vote on its own (protocol §2–§3): its leaf hash and
 * its ring signature with every verifier check, the audit's expensive part, run in workers' chunks.
 * @module
 */
import { bytesToHex } from "../../protocol/bytes.ts";
import { voteLeaf } from "../../protocol/merkle.ts";
import { createMemberCache } from "../../protocol/member_cache.ts";
import { sameRing } from "../../protocol/same_ring.ts";
import { checkRing, type MemberCache } from "../../protocol/ring_signature.ts";
import { decodeSignature } from "../../protocol/signature_wire.ts";
import type { VoteRecord } from "../../protocol/schemas.ts";

/** What one vote showed on its own: its leaf hash, its tag (null when unreadable), its problems. */
export type VoteFinding = { leaf: string; tag: string | null; problems: string[] };

/** Checks a chunk of votes, in order, wherever it runs: this thread or a pool of workers. */
export type VoteChecker = (votes: VoteRecord[]) => Promise<VoteFinding[]>;

/**
 * Leaf hash and signature of `vote`: the signature decodes to its one canonical wire form, its
 * ring is the vote's `publicKeys`, and checkRing accepts it. `members` is the verifier's cache of
 * checked ring members, so each key is decoded, checked and tabled once per thread. Never throws.
 */
export function checkVote(vote: VoteRecord, members: MemberCache): VoteFinding {
  const problems: string[] = [];
  let leaf = "";
  try {
    leaf = bytesToHex(voteLeaf(vote));
  } catch (e) {
    problems.push(`unreadable vote: ${(e as Error).message}`);
  }
  let sig;
  try {
    sig = decodeSignature(vote.signature);
  } catch (e) {
    problems.push(`malformed signature: ${(e as Error).message}`);
    return { leaf, tag: null, problems };
  }
  const ring = sig.ring.map(bytesToHex);
  if (!sameRing(vote.publicKeys, ring)) {
    problems.push("publicKeys differ from the signature's ring");
  }
  const check = checkRing(sig, vote.payload, { members });
  if (!check.ok) problems.push(`invalid signature: ${check.reason}`);
  return { leaf, tag: bytesToHex(sig.tag), problems };
}

/** {@link checkVote} over `votes`, in order. */
export function checkVotes(votes: readonly VoteRecord[], members: MemberCache): VoteFinding[] {
  return votes.map((vote) => checkVote(vote, members));
}

/** A checker running in the calling thread, with one member cache for its whole life. */
export function inThreadChecker(members: MemberCache = createMemberCache()): VoteChecker {
  return (votes) => Promise.resolve(checkVotes(votes, members));
}
