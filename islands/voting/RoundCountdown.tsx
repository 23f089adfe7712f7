/**
 * The voting page's line about the open block (page §14): when the next block is sealed and how
 * many votes wait in it, read from the round's `block/open` every two seconds and counted down in
 * between.
 * @module
 */
import { useEffect, useState } from "react";
import SealCountdown from "../../components/SealCountdown.tsx";
import { createApiClient, type LedgerName } from "../../lib/client/api_client.ts";
import type { OpenBlock } from "../../lib/protocol/schemas.ts";

/** How often the open block is read. */
const OPEN_POLL_MS = 2000;

/** The countdown to the next seal of `ledger`, with the votes waiting. */
export default function RoundCountdown({ ledger }: { ledger: LedgerName }) {
  const [open, setOpen] = useState<OpenBlock | null>(null);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const api = createApiClient({ fetch, ledger });
    let live = true;
    const read = () =>
      api.openBlock().then((answer) => live && setOpen(answer), () => live && setOpen(null));
    read();
    const poll = setInterval(read, OPEN_POLL_MS);
    const tick = setInterval(() => setNow(Date.now()), 250);
    return () => {
      live = false;
      clearInterval(poll);
      clearInterval(tick);
    };
  }, []);
  return <SealCountdown open={open} now={now} />;
}
