/**
 * The board's first line: how far the chain has been read and checked, and any read failure,
 * announced to screen readers.
 * @module
 */
import Notice from "../../components/Notice.tsx";
import type { SectionProps } from "./section.ts";

/** The live line (announced to screen readers) and the board's problem, if any. */
export default function LiveStatus({ bulletin }: SectionProps) {
  const height = bulletin.height.value;
  const problem = bulletin.problem.value;
  return (
    <>
      <p class="bulletin-live" role="status" aria-live="polite">
        {height === null
          ? "Reading the chain…"
          : `Height ${height}: ${bulletin.blocks.value.length} blocks shown, checked in this ` +
            `browser; refreshed every ${bulletin.pollMs / 1000} s`}
      </p>
      {problem !== null && <Notice tone="problem" text={problem} />}
    </>
  );
}
