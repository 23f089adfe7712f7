/**
 * "Join as a voter" (page §14): the one call to action a participant sees first. It adds a voter
 * and has its panel make and register its keys through the panel's own handlers, each step
 * announced; once this browser has a voter of the round, it steps aside for the panel.
 * @module
 */
import { useRef, useState } from "react";
import type { DemoPanel } from "../../lib/client/voter/demo_round.ts";
import { joinAsVoter, type JoinProgress, joinStatusText } from "../../lib/client/voter/join.ts";

/** Props of {@link JoinControl}. */
export type JoinControlProps = {
  /** False until the voter list is restored, and while a voter is being added. */
  ready: boolean;
  /** True once this browser has a voter in the round. */
  joined: boolean;
  addVoter(): Promise<string>;
  panelOf(namespace: string): Promise<DemoPanel>;
};

/** The join button and its step line. */
export default function JoinControl({ ready, joined, addVoter, panelOf }: JoinControlProps) {
  const [progress, setProgress] = useState<JoinProgress | null>(null);
  const busy = useRef(false);

  async function join() {
    if (busy.current) return;
    busy.current = true;
    try {
      const last = await joinAsVoter({ addVoter, panelOf, report: setProgress });
      if (last.kind === "joined") {
        // The participant's panel is what matters now: bring it to the top of a phone's screen.
        document.querySelector(`[data-voter="${CSS.escape(last.namespace)}"]`)
          ?.scrollIntoView({ block: "start" });
      }
    } finally {
      busy.current = false;
    }
  }

  const running = progress?.kind === "step";
  const failed = progress?.kind === "failed";
  if (joined && !running && !failed && progress === null) return null;
  return (
    <div class="join" role="group" aria-label="Join">
      {!joined && (
        <button
          type="button"
          class="join-button"
          data-action="join"
          onClick={join}
          disabled={!ready || running}
        >
          Join as a voter
        </button>
      )}
      {failed && (
        <button type="button" class="join-button" data-action="join" onClick={join}>
          Join as a voter
        </button>
      )}
      {progress !== null && (
        <p
          class={`join-status${failed ? " status-red" : ""}`}
          data-join-status={progress.kind}
          role="status"
          aria-live="polite"
        >
          {joinStatusText(progress)}
        </p>
      )}
    </div>
  );
}
