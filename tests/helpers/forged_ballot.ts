// A ballot forged inside the server's own store: a vote's payload rewritten in KV while its block
// is still open, so the sealer builds a consistent Merkle tree and block hash over the forged vote
// and only its ring signature can give it away.
import type { VoteRecord } from "../../lib/protocol/schemas.ts";
import { kvKeys, type VoteRef } from "../../server/store/layout.ts";

/** Rewrites the payload of unsealed vote `voteId` in `kv`; throws when the vote is not stored. */
export async function forgeBallot(kv: Deno.Kv, voteId: string, payload: string): Promise<void> {
  const ref = await kv.get<VoteRef>(kvKeys.voteRef(voteId));
  if (!ref.value) throw new Error(`No vote ${voteId} in the store`);
  const key = kvKeys.vote(ref.value.height, voteId);
  const stored = await kv.get<VoteRecord>(key);
  if (!stored.value) {
    throw new Error(`VoteRecord ${voteId} has no record in block ${ref.value.height}`);
  }
  await kv.set(key, { ...stored.value, payload });
}
