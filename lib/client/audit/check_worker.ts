/**
 * Browser-safe. The audit worker, in the board's pool and the command line's: checks chunks of
 * votes (leaf hash and ring signature with every verifier check, ./vote_checks.ts) off the calling
 * thread. One member cache per worker for its whole life: each key is decoded and tabled once.
 * @module
 */
import { createMemberCache } from "../../protocol/member_cache.ts";
import type { VoteCheckRequest, VoteCheckResponse } from "./check_pool.ts";
import { checkVotes } from "./vote_checks.ts";

const members = createMemberCache();
const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<VoteCheckRequest>) => void) | null;
  postMessage(message: VoteCheckResponse): void;
};

scope.onmessage = ({ data: { id, votes } }) => {
  try {
    scope.postMessage({ id, findings: checkVotes(votes, members) });
  } catch (error) {
    scope.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
};
