/**
 * Browser-safe. "Join as a voter" (page §14): one participant's voter is added, makes its keys and
 * registers them through its own panel's handlers — the ones its buttons run, as the demo round
 * does — each step announced in plain words before it runs.
 * @module
 */
import type { DemoPanel } from "./demo_round.ts";
import { messageOf } from "../text.ts";

/** The steps of joining, in the order they run. */
export type JoinStep = "adding" | "generating" | "registering";

/** Where a join is: a step running, joined, or stopped at a step and why. */
export type JoinProgress =
  | { kind: "step"; step: JoinStep }
  | { kind: "joined"; namespace: string }
  | { kind: "failed"; step: JoinStep; reason: string };

/** What joining needs from the page. */
export type JoinIO = {
  /** Adds one voter, as 'Generate A new Voter' does; answers its namespace. */
  addVoter(): Promise<string>;
  /** The panel of `namespace`, once it is shown. */
  panelOf(namespace: string): Promise<DemoPanel>;
  /** Told before every step and at the end. */
  report(progress: JoinProgress): void;
};

/** Adds a voter and has its panel make and register its keys; answers the last progress. */
export async function joinAsVoter(io: JoinIO): Promise<JoinProgress> {
  const finish = (progress: JoinProgress) => {
    io.report(progress);
    return progress;
  };
  let step: JoinStep = "adding";
  try {
    io.report({ kind: "step", step });
    const namespace = await io.addVoter();
    const panel = await io.panelOf(namespace);
    step = "generating";
    io.report({ kind: "step", step });
    const generated = await panel.generateKeys();
    if (!generated.ok) return finish({ kind: "failed", step, reason: generated.reason });
    step = "registering";
    io.report({ kind: "step", step });
    const registered = await panel.registerKey();
    if (!registered.ok) return finish({ kind: "failed", step, reason: registered.reason });
    return finish({ kind: "joined", namespace });
  } catch (error) {
    return finish({ kind: "failed", step, reason: messageOf(error) });
  }
}

/** The sentence a participant reads for `progress`. */
export function joinStatusText(progress: JoinProgress): string {
  switch (progress.kind) {
    case "step":
      return {
        adding: "Step 1 of 3: making your voter in this browser…",
        generating: "Step 2 of 3: making your secret key. It never leaves this phone…",
        registering: "Step 3 of 3: registering your public key with the key directory…",
      }[progress.step];
    case "joined":
      return "You have joined. Now choose your answer below.";
    case "failed":
      return `Joining stopped while ${
        { adding: "making your voter", generating: "making your key", registering: "registering" }[
          progress.step
        ]
      }: ${progress.reason}. Press the button to try again.`;
  }
}
