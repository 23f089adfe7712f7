// A worker of bench/build_ledger.ts: signs the votes it is sent, in order, and sends them back.
import { signedVote, type TestVoter } from "../tests/helpers/ledger_fixtures.ts";

/** One vote to sign: the signer, its ring, its payload. */
export type SignTask = { signer: TestVoter; ring: TestVoter[]; payload: string };

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<{ id: number; tasks: SignTask[] }>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = ({ data: { id, tasks } }) => {
  const votes = tasks.map(({ signer, ring, payload }) => signedVote(signer, ring, payload));
  scope.postMessage({ id, votes });
};
