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
import { ApiCallError, type LedgerName } from "../../lib/client/api_client.ts";
import type { PageStorage } from "../../lib/client/rounds/round_storage.ts";
import { messageOf } from "../../lib/client/text.ts";
import { CARD_SETS_KEY } from "../../lib/client/cards/card_keep.ts";

/** Props of {@link DemoRound}. */
export type DemoRoundProps = {
  ringSize: number;
  /** False until the voter list is restored. */
  ready: boolean;
  /** The round's ledger and storage. */
  ledger: LedgerName;
  storage: PageStorage;
  /** The round's choices; a free-text round draws from the demo's own. */
  choices: readonly string[];
  /** Adds one voter as 'Generate A new Voter' does; answers its namespace. */
  addVoter(): Promise<string>;
  /** The panel of a voter, once it is shown. */
  panelOf(namespace: string): Promise<DemoPanel>;
  /** In a round with phases, the presenter's token: the demo opens voting itself. */
  presenterToken?: string | null;
  /** The round's card set (page §14.7): the demo round is never carded, and refuses to run. */
  cards?: string | null;
};

/** What the demo round says in a carded meeting (page §14.7). */
export const DEMO_UNCARDED_TEXT = "The demo round is never carded: its voters are simulated in " +
  "this browser, without cards, and it runs only in a round that admits any key.";

/** Choices as a sentence says them: "Yes, No or Abstain". */
function sayChoices(choices: readonly string[]): string {
  return `${choices.slice(0, -1).join(", ")} or ${choices.at(-1)}`;
}

/** The round's status line as shown. */
type Status = { text: string; tone: DemoTone };

/** The demo round's button, its one-sentence explanation and its status line. */
export default function DemoRound(
  {
    ringSize,
    ready,
    ledger,
    storage,
    choices: roundChoices,
    addVoter,
    panelOf,
    presenterToken = null,
    cards = null,
  }: DemoRoundProps,
) {
  const drawn = roundChoices.length > 0 ? roundChoices : DEMO_CHOICES;
  const [status, setStatus] = useState<Status | null>(null);
  const [running, setRunning] = useState(false);
  // A second click before the button is re-rendered disabled must not start a second round.
  const busy = useRef(false);

  // A carded meeting: this round uses cards, or this browser made some (page §14.7).
  const [carded] = useState(() =>
    cards !== null || (localStorage.getItem(CARD_SETS_KEY) ?? "[]") !== "[]"
  );

  async function run() {
    if (busy.current) return;
    if (cards !== null) {
      setStatus({
        text: "Not started: the demo round is never carded, and this round admits card holders " +
          "only. Start a round without cards for the demo.",
        tone: "failed",
      });
      return;
    }
    busy.current = true;
    setRunning(true);
    setStatus({ text: "Starting the demo round…", tone: "running" });
    try {
      const io = {
        storage,
        api: pageApiClient(ledger),
        log: (message: string) => console.error(message),
      };
      await runDemoRound({
        addVoter,
        panelOf,
        registeredKeys: () => registeredKeyCount(io),
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        report: (progress) =>
          setStatus({ text: demoStatusText(progress), tone: demoTone(progress) }),
      }, {
        ringSize,
        choices: drawn,
        ...(presenterToken === null ? {} : {
          openVoting: () =>
            io.api.openVoting(presenterToken).then(
              () => ({ ok: true as const }),
              (error) => ({
                ok: false as const,
                reason: error instanceof ApiCallError ? error.reason : messageOf(error),
              }),
            ),
        }),
      });
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
        Adds {DEMO_VOTERS} voters who each make a key, register it and vote {sayChoices(drawn)}{" "}
        at random, one step at a time, exactly as if you clicked their buttons.
      </p>
      {carded && <p class="demo-uncarded" data-demo-uncarded="">{DEMO_UNCARDED_TEXT}</p>}
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
