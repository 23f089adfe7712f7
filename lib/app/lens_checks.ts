// Browser-safe. What a lab voter's own checks say about its vote when the server is seen through
// the lying-server lens: the vote-status decision of page §4 (content, signature, Merkle root,
// block hash), whether the vote is there at all, and the remembered signed heads (a fork).
// The API client is injected, and `key` is the one its heads must verify under (through the lens,
// the lens key of protocol §4.7).
import type { ForkEvidence } from "../protocol/schemas.ts";
import { ApiCallError, type ApiClient } from "./api_client.ts";
import { linkAlerts, observeChain, type SeenHeads, type ShownHead } from "./heads.ts";
import type { CheckName } from "./lies.ts";
import { decideVoteStatus, storedBlockId, type StoredVote } from "./status.ts";

/** The verdict on one view: which checks failed, why, and the fork evidence if there is one. */
export type LensVerdict = {
  detected: boolean;
  failed: CheckName[];
  details: string[];
  evidence: ForkEvidence | null;
  /** The remembered heads after this view (a fork's heads are not added). */
  seen: SeenHeads;
};

/** The check a mismatch line of `decideVoteStatus` belongs to. */
function checkOfMismatch(line: string): CheckName | null {
  if (line.startsWith("Vote content mismatch")) return "content mismatch";
  if (line.startsWith("Vote signature mismatch")) return "signature mismatch";
  if (line.startsWith("Merkle root mismatch")) return "Merkle root mismatch";
  if (line.startsWith("Block hash mismatch")) return "block hash mismatch";
  return null;
}

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
    for (const line of decision.mismatches) {
      const check = checkOfMismatch(line);
      if (check) failed.add(check);
      details.push(line);
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
  };
}
