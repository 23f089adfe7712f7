/**
 * Browser-safe. What one vote shows on its own, the audit's expensive part, run in workers' slices:
 * its leaf hash and the verdict of every verifier check on its ring signature, each ring member
 * checked and given its combs once (./audit_keys.ts). The rules of a vote are judged over these
 * verdicts by the rulebook, lib/protocol/check_vote.ts.
 * @module
 */
import { bytesToHex } from "../../protocol/bytes.ts";
import { checkVote } from "../../protocol/check_vote.ts";
import { voteLeaf } from "../../protocol/merkle.ts";
import {
  checkRing,
  type MemberCache,
  type RingCheck,
  type RingSignature,
} from "../../protocol/ring_signature.ts";
import type { VoteRecord } from "../../protocol/schemas.ts";
import { decodeSignature } from "../../protocol/signature_wire.ts";
import { createAuditMembers } from "./audit_keys.ts";
import type { VoteProblem } from "./findings.ts";

/**
 * What a checker found of one vote on its own: its leaf hash (protocol §3.1), null when the vote
 * cannot be hashed (`unreadable` says why), and the verdict of every verifier check of §2.7 on its
 * signature, null when it was not verified (a malformed signature, or a checker that does not
 * verify).
 */
export type VoteVerification = {
  leaf: string | null;
  unreadable?: string;
  check: RingCheck | null;
};

/**
 * Checks a slice of votes, in order, wherever it runs: this thread or a pool of workers. The key
 * directory, when given, tells a pool which keys to keep key data for (registered ones: a member
 * outside it fails its vote anyway) and in which form.
 */
export type VoteChecker = (
  votes: VoteRecord[],
  context?: { directory?: ReadonlySet<string> },
) => Promise<VoteVerification[]>;

/** Why a well-formed signature whose verification threw is refused: the start of its reason. */
export const UNVERIFIABLE = "the signature could not be verified";

/** The message of a thrown value. */
const messageOf = (error: unknown) => error instanceof Error ? error.message : String(error);

/** The leaf hash of `vote`, or why it has none. */
function leafOf(vote: VoteRecord): Pick<VoteVerification, "leaf" | "unreadable"> {
  try {
    return { leaf: bytesToHex(voteLeaf(vote)) };
  } catch (error) {
    return { leaf: null, unreadable: (error as Error).message };
  }
}

/** {@link VoteVerification} of `vote` without its ring signature: its leaf hash only. */
export function unverifiedVote(vote: VoteRecord): VoteVerification {
  return { ...leafOf(vote), check: null };
}

/**
 * Leaf hash and ring signature of `vote`, the members taken from `members` (checked before, or
 * checked now and kept). Never throws: a malformed signature is left to the rulebook (null), and a
 * well-formed one whose verification throws is refused with the reason, never taken as verified.
 */
export function verifyVote(vote: VoteRecord, members: MemberCache): VoteVerification {
  let signature: RingSignature;
  try {
    signature = decodeSignature(vote.signature);
  } catch {
    // Malformed: the rulebook says how (lib/protocol/check_vote.ts).
    return { ...leafOf(vote), check: null };
  }
  let check: RingCheck;
  try {
    check = checkRing(signature, vote.payload, { members });
  } catch (error) {
    check = { ok: false, reason: `${UNVERIFIABLE}: ${messageOf(error)}` };
  }
  return { ...leafOf(vote), check };
}

/**
 * What `vote` breaks of the rules that need nothing but the vote and its verification: its leaf,
 * its payload, its signature's form and ring, and §2.7 (not the directory, nor other votes' tags).
 */
export async function problemsOnItsOwn(
  vote: VoteRecord,
  verification: VoteVerification,
): Promise<VoteProblem[]> {
  const { check } = verification;
  const { findings } = await checkVote(vote, check === null ? {} : { verify: () => check });
  const unreadable = verification.unreadable;
  return unreadable === undefined
    ? findings
    : [{ kind: "unreadable-vote", reason: unreadable }, ...findings];
}

/** A checker running in the calling thread, with audit key data of its own for its whole life. */
export function inThreadChecker(members: MemberCache = createAuditMembers()): VoteChecker {
  return (votes) => Promise.resolve(votes.map((vote) => verifyVote(vote, members)));
}
