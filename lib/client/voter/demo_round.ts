/**
 * Browser-safe. The voting page's demo round (page §11): new voters generate keys, register and
 * vote one step at a time through their own panels' handlers; voters, pause and randomness injected.
 * @module
 */
import { cryptoRandomIndex, type RandomIndex } from "./voters.ts";
import { messageOf } from "../text.ts";

/** How many voters a round adds. */
export const DEMO_VOTERS = 8;
/** The choices a demo voter draws its vote from. */
export const DEMO_CHOICES: readonly string[] = ["Yes", "No", "Abstain"];
/** The pause between two steps: long enough to follow, short enough to keep a room's attention. */
export const DEMO_PAUSE_MS = 450;

/** What a panel answers for one step: done, or not, with the reason the panel gave. */
export type StepOutcome = { ok: true } | { ok: false; reason: string };

/** What a voter's panel lets the round do: the handlers its own buttons run. */
export type DemoPanel = {
  /** 'Generate new keys'. */
  generateKeys(): StepOutcome | Promise<StepOutcome>;
  /** 'Register A Key'. */
  registerKey(): Promise<StepOutcome>;
  /** 'Vote Content' filled with `content`, then 'Submit Vote'. */
  submitVote(content: string): Promise<StepOutcome>;
};

/** The steps of one demo voter, in the order they run. */
export type DemoStep = "adding" | "generating" | "registering" | "opening" | "voting";

/** Which voter a step is for: its place in the round, and its name once it has one. */
export type DemoVoter = { voter: number; of: number; namespace: string | null };

/** Where a round is: a step running, the round done, or stopped and why. */
export type DemoProgress =
  | { kind: "step"; step: DemoStep; at: DemoVoter; choice?: string }
  | { kind: "done"; of: number }
  | { kind: "too-few-keys"; registered: number; adds: number; needed: number }
  | { kind: "no-key-count" }
  | { kind: "not-alone"; registered: number }
  | { kind: "failed"; step: DemoStep; at: DemoVoter; reason: string };

/** What the round needs from the page. */
export type DemoRoundIO = {
  /** Adds one voter to the page's list, as 'Generate A new Voter' does; answers its namespace. */
  addVoter(): Promise<string>;
  /** The panel of `namespace`, once it is shown and has decided its status lines. */
  panelOf(namespace: string): Promise<DemoPanel>;
  /** How many keys the key directory holds, or null when it cannot be read. */
  registeredKeys(): Promise<number | null>;
  sleep(ms: number): Promise<void>;
  /** Told before every step and at the end. */
  report(progress: DemoProgress): void;
};

/** Options of {@link runDemoRound}. */
export type DemoRoundOptions = {
  /** The ring size votes are signed with (protocol §6 `RING_SIZE`). */
  ringSize: number;
  voters?: number;
  pauseMs?: number;
  choices?: readonly string[];
  randomIndex?: RandomIndex;
  /**
   * In a round with phases: opens voting once the round's voters have joined (the presenter's
   * call). The round then runs only in a round no other key joined yet.
   */
  openVoting?: () => Promise<StepOutcome>;
};

/**
 * Runs a demo round: first every new voter is added, generates its keys and registers them, so
 * that the ring has enough keys, then every one votes a choice drawn from `choices`. Each step is
 * reported before it runs and followed by a pause; the first step that fails stops the round.
 * Refuses to start when the keys registered plus the round's would not fill one ring. Answers the
 * last progress reported: done, or why it stopped.
 */
export async function runDemoRound(
  io: DemoRoundIO,
  options: DemoRoundOptions,
): Promise<DemoProgress> {
  const {
    ringSize,
    voters = DEMO_VOTERS,
    pauseMs = DEMO_PAUSE_MS,
    choices = DEMO_CHOICES,
    randomIndex = cryptoRandomIndex,
    openVoting,
  } = options;
  const finish = (progress: DemoProgress) => {
    io.report(progress);
    return progress;
  };

  const registered = await io.registeredKeys();
  if (registered === null) return finish({ kind: "no-key-count" });
  // In a round with phases the demo's votes hide only among its own voters: another key in the
  // round would be made to vote for nobody, or wait with them.
  if (openVoting !== undefined && registered > 0) return finish({ kind: "not-alone", registered });
  if (openVoting === undefined && registered + voters < ringSize) {
    return finish({ kind: "too-few-keys", registered, adds: voters, needed: ringSize });
  }

  /** Reports `step`, runs `work`, pauses; answers the failure that stops the round, if any. */
  async function run(
    step: DemoStep,
    at: DemoVoter,
    work: () => StepOutcome | Promise<StepOutcome>,
    choice?: string,
  ): Promise<DemoProgress | null> {
    io.report(
      choice === undefined ? { kind: "step", step, at } : { kind: "step", step, at, choice },
    );
    let outcome: StepOutcome;
    try {
      outcome = await work();
    } catch (error) {
      outcome = { ok: false, reason: messageOf(error) };
    }
    if (!outcome.ok) return { kind: "failed", step, at, reason: outcome.reason };
    await io.sleep(pauseMs);
    return null;
  }

  const panels: { at: DemoVoter; panel: DemoPanel }[] = [];
  for (let voter = 1; voter <= voters; voter++) {
    const joined: { namespace?: string; panel?: DemoPanel } = {};
    const added = await run("adding", { voter, of: voters, namespace: null }, async () => {
      joined.namespace = await io.addVoter();
      joined.panel = await io.panelOf(joined.namespace);
      return { ok: true };
    });
    if (added) return finish(added);
    const at = { voter, of: voters, namespace: joined.namespace! };
    const panel = joined.panel!;
    const failed = await run("generating", at, () => panel.generateKeys()) ??
      await run("registering", at, () => panel.registerKey());
    if (failed) return finish(failed);
    panels.push({ at, panel });
  }
  if (openVoting !== undefined) {
    const failed = await run("opening", { voter: voters, of: voters, namespace: null }, openVoting);
    if (failed) return finish(failed);
  }
  for (const { at, panel } of panels) {
    const choice = choices[randomIndex(choices.length)];
    const failed = await run("voting", at, () => panel.submitVote(choice), choice);
    if (failed) return finish(failed);
  }
  return finish({ kind: "done", of: voters });
}

/** How a progress is shown: running, done, or stopped (red). */
export type DemoTone = "running" | "done" | "failed";

/** The tone of `progress`. */
export function demoTone(progress: DemoProgress): DemoTone {
  if (progress.kind === "step") return "running";
  return progress.kind === "done" ? "done" : "failed";
}

const STEP_TEXT: Record<DemoStep, string> = {
  adding: "adding a new voter with a generated name",
  generating: "generating its keys",
  registering: "registering its key",
  opening: "opening voting",
  voting: "signing and submitting its vote",
};

/** The words of the round's status line for `progress`: the one place they are made. */
export function demoStatusText(progress: DemoProgress): string {
  switch (progress.kind) {
    case "step": {
      if (progress.step === "opening") return "All voters joined: opening voting…";
      const what = progress.choice === undefined
        ? STEP_TEXT[progress.step]
        : `${STEP_TEXT[progress.step]} "${progress.choice}"`;
      return `${voterLabel(progress.at)}: ${what}…`;
    }
    case "done":
      return `Done: ${progress.of} voters registered their keys and voted. ` +
        "Each vote turns green once its block is sealed.";
    case "too-few-keys": {
      const missing = progress.needed - progress.registered - progress.adds;
      return `Not started: a ring needs ${progress.needed} registered keys, ` +
        `${progress.registered} are registered and the round adds ${progress.adds}. ` +
        `Register ${missing} more ${missing === 1 ? "key" : "keys"} first.`;
    }
    case "no-key-count":
      return "Not started: the key directory could not be read";
    case "not-alone":
      return `Not started: the demo round runs only in a round of its own, before anyone joins, ` +
        `and ${progress.registered} ${progress.registered === 1 ? "key has" : "keys have"} ` +
        "joined this round. Start a new round for the demo.";
    case "failed":
      if (progress.step === "opening") {
        return `Stopped: voting could not be opened: ${progress.reason}`;
      }
      return `Stopped at ${voterLabel(progress.at, "voter")}, ${STEP_TEXT[progress.step]}: ` +
        progress.reason;
  }
}

function voterLabel({ voter, of, namespace }: DemoVoter, word = "Voter"): string {
  const place = `${word} ${voter} of ${of}`;
  return namespace === null ? place : `${place} (${namespace})`;
}
