// The hall benches' shortcut: every ballot signed before the opening, in two workers
// (bench/hall/signer.ts), over the group the round's rule predicts (protocol §2.8).
import { roundGroups } from "../../lib/protocol/groups.ts";
import type { VoteSubmission } from "../../lib/protocol/schemas.ts";
import type { TestVoter } from "../../tests/helpers/ledger_fixtures.ts";
import type { SignTask } from "./signer.ts";

/** The ballots of `voters` (registered as `ids`, all at the opening), `choiceOf(i)` each. */
export async function presign(
  voters: TestVoter[],
  ids: number[],
  choiceOf: (i: number) => string,
): Promise<VoteSubmission[]> {
  const { groups } = roundGroups({
    keysAtOpen: voters.length,
    total: voters.length,
    minVoters: 8,
    lateJoiners: false,
  });
  const keyOf = new Map(ids.map((id, i) => [id, voters[i].key]));
  const ringOf = (keyId: number) =>
    groups.find((g) => g.includes(keyId))!.map((id) => keyOf.get(id)!);
  const workers = Array.from(
    { length: 2 },
    () => new Worker(new URL("./signer.ts", import.meta.url), { type: "module" }),
  );
  const presigned = new Array<VoteSubmission>(voters.length);
  try {
    await Promise.all(workers.map((worker, w) => {
      const indices = voters.map((_, i) => i).filter((i) => i % workers.length === w);
      const tasks: SignTask[] = indices.map((i) => ({
        seed: voters[i].seed,
        ring: ringOf(ids[i]),
        payload: choiceOf(i),
      }));
      return new Promise<void>((resolve, reject) => {
        worker.onerror = (event) => reject(new Error(`a signer failed: ${event.message}`));
        worker.onmessage = ({ data }: MessageEvent<{ votes: VoteSubmission[] }>) => {
          data.votes.forEach((vote, j) => (presigned[indices[j]] = vote));
          resolve();
        };
        worker.postMessage({ id: w, tasks });
      });
    }));
  } finally {
    workers.forEach((worker) => worker.terminate());
  }
  return presigned;
}
