/**
 * Browser-safe. A lab voter's own checks on its vote seen through the lying-server lens: the vote
 * decision of page §4 (its mismatch kinds named as the lab's checks), the vote's presence, a fork.
 * @module
 */
import type { ForkEvidence } from "../../protocol/schemas.ts";
import { ApiCallError, type ApiClient } from "../api_client.ts";
import { linkAlerts } from "../log/head_alerts.ts";
import { observeChain, type SeenHeads, type ShownHead } from "../log/heads.ts";
import type { CheckName } from "./lies.ts";
import {
  decideVoteStatus,
  mismatchText,
  storedBlockId,
  type StoredVote,
  type VoteMismatch,
} from "../voter/status.ts";

/** The verdict on one view: which checks failed, why, and the fork evidence if there is one. */
export type LensVerdict = {
  detected: boolean;
  failed: CheckName[];
  details: string[];
  evidence: ForkEvidence | null;
  /** The remembered heads after this view (a fork's heads are not added). */
  seen: SeenHeads;
  /** The signed heads this view showed: the chain's head, and the vote's block when served. */
  shown: ShownHead[];
};

/**
 * The lab's check each kind of `decideVoteStatus` mismatch belongs to; null for the kinds no lie
 * of the catalogue trips (they are still listed in the details).
 */
const CHECK_OF_MISMATCH: Record<VoteMismatch["kind"], CheckName | null> = {
  content: "content mismatch",
  signature: "signature mismatch",
  ring: null,
  "block-height": null,
  "merkle-root": "Merkle root mismatch",
  "block-hash": "block hash mismatch",
};

/**
 * Reads the stored vote's status, proof and previous block through `api` and runs the voter's
 * checks on what came back, then checks every signed head shown — and the chain at the highest
 * remembered height — against `seen` under the trusted server `key`. Never throws for a lie; a
 * read that fails for another reason is reported in `details`.
 */
export async function checkVoteView(
  api: ApiClient,
  { stored, key, seen }: { stored: StoredVote; key: string; seen: SeenHeads },
): Promise<LensVerdict> {
  const failed = new Set<CheckName>();
  const details: string[] = [];
  const blockId = storedBlockId(stored);
  if (blockId === null || stored.voteId === null) throw new RangeError("No stored vote to view");

  const shown: ShownHead[] = [];
  const status = await api.blockStatus();
  const head: ShownHead = {
    height: status.height,
    hash: status.hash,
    head_signature: status.head_signature,
  };
  const [proof, previous] = await Promise.all([
    api.voteProof(blockId, stored.voteId).catch((error) => {
      if (error instanceof ApiCallError && error.code === "unknown_vote") {
        failed.add("vote missing");
        details.push(
          `Vote missing: the server accepted vote ${stored.voteId} into block ` +
            `${blockId}, and now says: ${error.reason}`,
        );
        return null;
      }
      throw error;
    }),
    api.blockHash(blockId - 1),
  ]);
  if (proof) {
    shown.push(proof.block);
    const decision = decideVoteStatus({
      stored,
      height: status.height,
      proof,
      prevHash: previous.hash,
    });
    for (const mismatch of decision.mismatches) {
      const check = CHECK_OF_MISMATCH[mismatch.kind];
      if (check) failed.add(check);
      details.push(mismatchText(mismatch));
    }
  }
  const heads = await observeChain(api, { key, seen, status, shown });
  if (heads.fork) {
    failed.add("fork");
    const [a, b] = heads.fork.heads;
    details.push(
      `Fork: the server signed two different blocks at height ${a.height}: ` +
        `${a.hash} and ${b.hash}`,
    );
  }
  for (const alert of linkAlerts(heads.links)) {
    failed.add("history link");
    details.push(`${alert.title}: ${alert.text}`);
  }
  for (const head of heads.unsigned) {
    details.push(`Head ${head.height} carries no valid signature by the trusted key`);
  }
  return {
    detected: failed.size > 0,
    failed: [...failed],
    details,
    evidence: heads.fork,
    seen: heads.fork ? seen : heads.seen,
    shown: [head, ...shown],
  };
}
