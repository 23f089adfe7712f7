/**
 * The presenter's live counts of a round (page §14.3): keys joined, and votes sealed and waiting.
 * @module
 */
import { usePolled } from "../hooks/polling.ts";
import { createApiClient } from "../../lib/client/api_client.ts";

/** How often the presenter's screen counts voters and votes. */
const COUNT_POLL_MS = 2000;

/**
 * Keys registered in round `id` and its votes, sealed and waiting; read every two seconds (the
 * view is mounted afresh for another round). A failed read keeps the last counts.
 */
export function useRoomCounts(id: number): { joined: number; votes: number } | null {
  const read = async () => {
    const api = createApiClient({ fetch, ledger: { round: id } });
    const [keys, tally, open] = await Promise.all([api.keys(0, 1), api.tally(), api.openBlock()]);
    return { joined: keys.total, votes: tally.total + open.votes };
  };
  return usePolled(read, COUNT_POLL_MS).value;
}
