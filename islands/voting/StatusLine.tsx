/**
 * A coloured status line of the voting panel (page §4), the key's or the vote's.
 * @module
 */
import type { ColouredLine as Line } from "../../lib/client/voter/status.ts";

/** A coloured status line of page §4; `kind` names which one ("key" or "vote"). */
export default function StatusLine(
  { kind, line }: { kind: "key" | "vote"; line: Line<string> },
) {
  const colour = line.colour ? ` status-${line.colour}` : "";
  return (
    <p class={`status${colour}`} data-kind={kind} data-status={line.status ?? "unloaded"}>
      {line.text}
    </p>
  );
}
