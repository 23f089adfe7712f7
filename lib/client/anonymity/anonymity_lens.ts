/**
 * Browser-safe. One job of the anonymity lens, as a page hands it to its worker: rings, reveals and
 * the key directory in; the analysis with and without the reveals, and the decoy-use test out.
 * @module
 */
import {
  analyseAnonymity,
  type AnonymityAnalysis,
  type AnonymityChange,
  anonymityChanges,
  type Reveal,
  type RingBallot,
} from "./anonymity.ts";
import { type DecoyUse, decoyUse } from "./decoy_use.ts";

/** What a page asks: `seq` lets it drop answers to requests it has since replaced. */
export type LensRequest = {
  seq: number;
  ballots: RingBallot[];
  reveals: Reveal[];
  /** The key directory in id order (id 1 first), for the decoy-use test; null to skip the test. */
  directory: readonly string[] | null;
};

/** The lens over one record: `revealed` is null when there are no reveals. */
export type LensResult = {
  seq: number;
  base: AnonymityAnalysis;
  revealed: AnonymityAnalysis | null;
  /** Ballots whose effective anonymity the reveals lowered, lowest first. */
  changes: AnonymityChange[];
  /** Null when the request carried no directory. */
  decoy: DecoyUse | null;
};

/** What the worker answers: the result with the time it took, or the error's message. */
export type LensAnswer =
  | (LensResult & { ms: number })
  | { seq: number; error: string };

/** Runs one lens job; throws as {@link analyseAnonymity} does on malformed input. */
export function runLens(request: LensRequest): LensResult {
  const { seq, ballots, reveals, directory } = request;
  const base = analyseAnonymity(ballots);
  const revealed = reveals.length === 0 ? null : analyseAnonymity(ballots, { reveals });
  const changes = base.consistent && revealed?.consistent ? anonymityChanges(base, revealed) : [];
  const decoy = directory === null ? null : decoyUse(ballots.map((b) => b.ring), { directory });
  return { seq, base, revealed, changes, decoy };
}
