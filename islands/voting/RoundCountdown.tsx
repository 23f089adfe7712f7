/**
 * The voting page's line about the open block (page §14): when the next block is sealed and how
 * many votes wait in it, read from the round's `block/open` every two seconds and counted down in
 * between; hidden while that read fails, as on the board.
 * @module
 */
import { useMemo } from "react";
import SealCountdown from "../../components/SealCountdown.tsx";
import { createApiClient, type LedgerName } from "../../lib/client/api_client.ts";
import { useNow, useOpenBlock } from "../hooks/polling.ts";
import { pageFetch } from "../hooks/page_fetch.ts";

/** How often the open block is read. */
const OPEN_POLL_MS = 2000;

/** The countdown to the next seal of `ledger`, with the votes waiting. */
export default function RoundCountdown({ ledger }: { ledger: LedgerName }) {
  const api = useMemo(() => createApiClient({ fetch: pageFetch, ledger }), []);
  const open = useOpenBlock(api, OPEN_POLL_MS);
  const now = useNow();
  if (open.problem !== null) return null;
  return <SealCountdown open={open.value} now={now} />;
}
