/**
 * Browser-safe. A vote in doubt settled (page §11 "Nothing lost on reload"): the entries a vote
 * leaves before and after it is sent, and what a failed post means for them.
 * @module
 */
import { describeIssues, type VoteAccepted, VoteSubmission } from "../../protocol/schemas.ts";
import { ringOfSignature, tagOfSignature } from "../../protocol/signature_fields.ts";
import { ApiCallError } from "../api_client.ts";
import { messageOf } from "../text.ts";
import { type VoteProblem, type VoteRefusal, voteRefusal } from "./status.ts";
import { storageKey } from "./voters.ts";
import { type ClientIO, readStoredVote, type VoterStorage } from "./voter_io.ts";

/**
 * How {@link recoverVote} settled a vote in doubt: nothing was in doubt; the server holds it
 * under its tag (ids stored); it never arrived and was sent again (ids stored); it was refused
 * for good or its entries are malformed (entries removed, the refusal as the panel would show
 * it); or it cannot be settled now (storage unchanged, the failure logged: try again later).
 */
export type VoteRecovery =
  | { kind: "none" }
  | { kind: "recovered" | "resent"; voteId: string; blockId: number }
  | { kind: "dropped"; refusal: VoteRefusal }
  | { kind: "unsettled" };

/**
 * Settles a vote in doubt (page §11 "Nothing lost on reload"): stored content and signature but
 * no vote id, because the page was closed or the answer lost while the vote was on its way. Asks
 * the board for the vote under its tag (`GET /api/tag/{tag}`) and stores its ids; on 404
 * `unknown_tag` sends the very same signed vote again (same ring in the signed order, same
 * signature, tag and payload, so nothing new about the signer is sent) and stores the ids of a
 * 202; a 409 `duplicate_tag` means another tab sent it meanwhile, so the tag is asked again.
 */
export async function recoverVote(io: ClientIO, namespace: string): Promise<VoteRecovery> {
  const stored = readStoredVote(io.storage, namespace);
  const { voteContent: payload, voteSignature: signature } = stored;
  if (stored.voteId !== null || payload === null || signature === null) return { kind: "none" };
  const resend = storedSubmission(payload, signature);
  if (!resend.ok) {
    dropVotePair(io.storage, namespace, signature);
    const refusal = voteRefusal(resend.problem);
    io.log(`Stored vote dropped: ${refusal.reason}`);
    return { kind: "dropped", refusal };
  }
  const body = resend.body;
  // Twice at most: a 409 after a 404 is another tab's copy landing in between; a second 404
  // after that is a board that does not list a tag its ledger holds.
  for (let round = 0; round < 2; round++) {
    try {
      const found = await io.api.voteOfTag(body.tag);
      adoptVoteIds(io.storage, namespace, signature, found);
      return { kind: "recovered", voteId: found.voteId, blockId: found.blockId };
    } catch (error) {
      if (!(error instanceof ApiCallError && error.code === "unknown_tag")) {
        io.log(messageOf(error));
        return { kind: "unsettled" };
      }
    }
    try {
      const accepted = await io.api.submitVote(body);
      adoptVoteIds(io.storage, namespace, signature, accepted);
      return { kind: "resent", voteId: accepted.voteId, blockId: accepted.blockId };
    } catch (error) {
      const problem = postProblem(error);
      if (problem.code === "duplicate_tag") continue;
      io.log(messageOf(error));
      if (problem.code !== "refused") return { kind: "unsettled" };
      dropVotePair(io.storage, namespace, signature);
      return { kind: "dropped", refusal: voteRefusal(problem) };
    }
  }
  io.log(`Vote not settled: tag ${body.tag} is refused as used but no vote is listed under it`);
  return { kind: "unsettled" };
}

/**
 * The problem of a failed `POST /api/vote`. A 4xx other than 409 `duplicate_tag` (and the
 * "try again" 408 and 429) means the vote will never count: "refused". No answer, a 5xx or an
 * answer the page does not expect leaves it in doubt: "unconfirmed".
 */
export function postProblem(error: unknown): VoteProblem {
  if (!(error instanceof ApiCallError) || error.status === 0) {
    return { code: "unconfirmed", status: 0, message: messageOf(error) };
  }
  const { status, code, reason } = error;
  if (code === "duplicate_tag") return { code: "duplicate_tag", message: reason };
  const forGood = status >= 400 && status < 500 && status !== 408 && status !== 429;
  return forGood
    ? { code: "refused", status, serverCode: code, message: reason }
    : { code: "unconfirmed", status, message: reason };
}

/** The submission a stored vote was sent as, rebuilt from its payload and wire signature. */
function storedSubmission(
  payload: string,
  signature: string,
): { ok: true; body: VoteSubmission } | { ok: false; problem: VoteProblem } {
  const publicKeys = ringOfSignature(signature);
  const tag = tagOfSignature(signature);
  if (publicKeys === null || tag === null) {
    return {
      ok: false,
      problem: { code: "malformed_vote", issues: "signature: not a wire signature (protocol §2)" },
    };
  }
  const checked = VoteSubmission.safeParse({ publicKeys, signature, tag, payload });
  return checked.success
    ? { ok: true, body: checked.data }
    : { ok: false, problem: { code: "malformed_vote", issues: describeIssues(checked.error) } };
}

/** Stores the content and signature of a vote about to be sent (or accepted). */
export function writeVotePair(
  storage: VoterStorage,
  namespace: string,
  { content, signature }: { content: string; signature: string },
): void {
  storage.setItem(storageKey(namespace, "voteContent"), content);
  storage.setItem(storageKey(namespace, "voteSignature"), signature);
}

/** Stores an accepted vote's ids, the vote id last: a stored vote id means the server took it. */
export function writeVoteIds(storage: VoterStorage, namespace: string, ids: VoteAccepted): void {
  storage.setItem(storageKey(namespace, "blockId"), String(ids.blockId));
  storage.setItem(storageKey(namespace, "voteId"), ids.voteId);
}

/**
 * Stores `ids` for the vote signed `signature` if it is still the one in doubt: another tab may
 * have settled it, or stored another vote, meanwhile.
 */
function adoptVoteIds(
  storage: VoterStorage,
  namespace: string,
  signature: string,
  ids: VoteAccepted,
): void {
  const now = readStoredVote(storage, namespace);
  if (now.voteId === null && now.voteSignature === signature) writeVoteIds(storage, namespace, ids);
}

/** Removes the content and signature of the vote signed `signature`, if still in doubt. */
export function dropVotePair(storage: VoterStorage, namespace: string, signature: string): void {
  const now = readStoredVote(storage, namespace);
  if (now.voteId !== null || now.voteSignature !== signature) return;
  storage.removeItem(storageKey(namespace, "voteContent"));
  storage.removeItem(storageKey(namespace, "voteSignature"));
}
