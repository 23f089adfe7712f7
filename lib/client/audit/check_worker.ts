/**
 * Browser-safe. The audit worker, in the board's pool and the command line's (./check_pool.ts):
 * checks the keys it is given and precomputes them in the form asked, and verifies slices of votes
 * (leaf hash and ring signature with every verifier check, ./vote_checks.ts) over the key data sent
 * with them, each vote's members decoded for it (WORKER_MEMBERS_BUDGET).
 * @module
 */
import { createAuditMembers, precomputeKeys, WORKER_MEMBERS_BUDGET } from "./audit_keys.ts";
import type { CheckRequest, CheckResponse } from "./check_pool.ts";
import { verifyVote } from "./vote_checks.ts";

/** The key data sent with the slice being checked, by hex key. */
let supplied = new Map<string, Uint8Array>();
const members = createAuditMembers({
  budgetBytes: WORKER_MEMBERS_BUDGET,
  supplied: (key) => supplied.get(key),
});
const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<CheckRequest>) => void) | null;
  postMessage(message: CheckResponse): void;
};

scope.onmessage = ({ data: request }) => {
  const { id } = request;
  try {
    if (request.type === "keys") {
      scope.postMessage({ id, type: "keys", keys: precomputeKeys(request.keys, request.form) });
      return;
    }
    supplied = new Map(request.members);
    try {
      scope.postMessage({
        id,
        type: "votes",
        verifications: request.votes.map((vote) => verifyVote(vote, members)),
      });
    } finally {
      supplied = new Map();
    }
  } catch (error) {
    scope.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
};
