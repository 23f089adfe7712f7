// The board's audit worker: checks chunks of votes (leaf hash and ring signature with every
// verifier check, lib/client/audit/vote_checks.ts) off the page's thread. One member cache per worker for
// its whole life, so each key is decoded, checked and tabled once per worker.
import { checkVotes } from "../../lib/client/audit/vote_checks.ts";
import { createMemberCache } from "../../lib/protocol/member_cache.ts";
import type { VoteCheckRequest, VoteCheckResponse } from "../board/vote_check_pool.ts";

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
