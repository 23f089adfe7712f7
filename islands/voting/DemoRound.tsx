/**
 * The demo round's control on the voting page (page §11): one button adding voters who generate
 * keys, register and vote through their own panels, and a line saying which step runs.
 * @module
 */
import { useRef, useState } from "react";
import {
  DEMO_CHOICES,
  DEMO_VOTERS,
  type DemoPanel,
  demoStatusText,
  type DemoTone,
  demoTone,
  runDemoRound,
} from "../../lib/client/voter/demo_round.ts";
import { registeredKeyCount } from "../../lib/client/voter/panel_actions.ts";
import { pageApiClient } from "../hooks/watch_heads.ts";
import { messageOf } from "../../lib/client/text.ts";

/** Props of {@link DemoRound}. */
export type DemoRoundProps = {
  ringSize: number;
  /** False until the voter list is restored. */
  ready: boolean;
  /** Adds one voter as 'Generate A new Voter' does; answers its namespace. */
  addVoter(): Promise<string>;
  /** The panel of a voter, once it is shown. */
  panelOf(namespace: string): Promise<DemoPanel>;
};

/** The choices, as a sentence says them: "Yes, No or Abstain". */
const choices = `${DEMO_CHOICES.slice(0, -1).join(", ")} or ${DEMO_CHOICES.at(-1)}`;

/** The round's status line as shown. */
type Status = { text: string; tone: DemoTone };

/** The demo round's button, its one-sentence explanation and its status line. */
export default function DemoRound({ ringSize, ready, addVoter, panelOf }: DemoRoundProps) {
  const [status, setStatus] = useState<Status | null>(null);
  const [running, setRunning] = useState(false);
  // A second click before the button is re-rendered disabled must not start a second round.
  const busy = useRef(false);

  async function run() {
    if (busy.current) return;
    busy.current = true;
    setRunning(true);
    setStatus({ text: "Starting the demo round…", tone: "running" });
    try {
      const io = {
        storage: localStorage,
        api: pageApiClient(),
        log: (message: string) => console.error(message),
      };
      await runDemoRound({
        addVoter,
        panelOf,
        registeredKeys: () => registeredKeyCount(io),
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        report: (progress) =>
          setStatus({ text: demoStatusText(progress), tone: demoTone(progress) }),
      }, { ringSize });
    } catch (error) {
      const reason = messageOf(error);
      setStatus({ text: `Stopped: ${reason}`, tone: "failed" });
    } finally {
      busy.current = false;
      setRunning(false);
    }
  }

  const tone = status?.tone ?? "idle";
  return (
    <div class="demo-round" role="group" aria-label="Demo round">
      <p class="demo-round-lead">
        Adds {DEMO_VOTERS} voters who each make a key, register it and vote {choices}{" "}
        at random, one step at a time, exactly as if you clicked their buttons.
      </p>
      <button
        type="button"
        class="demo-round-button"
        data-action="demo-round"
        onClick={run}
        disabled={!ready || running}
      >
        Run a demo round: {DEMO_VOTERS} voters
      </button>
      <p
        class={`demo-status demo-status-${tone}${tone === "failed" ? " status-red" : ""}`}
        data-demo-status={tone}
        role="status"
        aria-live="polite"
      >
        {status?.text ?? ""}
      </p>
    </div>
  );
}
