// A worker of the hall bench: signs the ballots it is sent (the bench shortcut of signing before
// the opening, over the group the rule predicts) and sends them back.
import { signedVote } from "../../tests/helpers/ledger_fixtures.ts";

/** One ballot to sign: the signer's seed, its ring's keys in id order, its payload. */
export type SignTask = { seed: Uint8Array; ring: string[]; payload: string };

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<{ id: number; tasks: SignTask[] }>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = ({ data: { id, tasks } }) => {
  const votes = tasks.map(({ seed, ring, payload }) =>
    signedVote({ seed, key: "" }, ring.map((key) => ({ seed, key })), payload)
  );
  scope.postMessage({ id, votes });
};
