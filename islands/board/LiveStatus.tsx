/**
 * The board's first line: how far the chain has been read and checked, and any read failure,
 * announced to screen readers; beside it, for a round, the countdown to the next seal.
 * @module
 */
import Notice from "../../components/Notice.tsx";
import SealCountdown from "../../components/SealCountdown.tsx";
import type { ApiClient } from "../../lib/client/api_client.ts";
import { useNow, useOpenBlock } from "../hooks/polling.ts";
import type { SectionProps } from "./section.ts";

/** The live line (announced to screen readers), the seal countdown, and the board's problem. */
export default function LiveStatus({ bulletin }: SectionProps) {
  const height = bulletin.height.value;
  const problem = bulletin.problem.value;
  return (
    <>
      <div class="bulletin-live-row">
        <p class="bulletin-live" role="status" aria-live="polite">
          {height === null
            ? "Reading the chain…"
            : `Height ${height}: ${bulletin.blocks.value.length} blocks shown, checked in this ` +
              `browser; refreshed every ${bulletin.pollMs / 1000} s`}
        </p>
        {bulletin.round !== null && <OpenBlockLine api={bulletin.api} pollMs={bulletin.pollMs} />}
      </div>
      {problem !== null && <Notice tone="problem" text={problem} />}
    </>
  );
}

/**
 * The round's open block, read every `pollMs`: the countdown, kept out of the live region so that
 * its ticking is not read aloud. While its read fails it shows nothing rather than a stale time;
 * the live line reports the chain's own failures.
 */
function OpenBlockLine({ api, pollMs }: { api: ApiClient; pollMs: number }) {
  const open = useOpenBlock(api, pollMs);
  const now = useNow();
  if (open.problem !== null) return null;
  return (
    <p class="bulletin-seal">
      <SealCountdown open={open.value} now={now} />
    </p>
  );
}
