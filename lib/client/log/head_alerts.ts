/**
 * Browser-safe. What the fork watch found, in the plain words a page shows (page §12): one alert
 * per kind of problem with the heads, their links or the log, and the file a fork's evidence is
 * downloaded as.
 * @module
 */
import type { LogForkEvidence } from "../../protocol/log_evidence.ts";
import type { ForkEvidence } from "../../protocol/schemas.ts";
import { shortHex } from "../text.ts";
import type { LinkProblem } from "./head_links.ts";
import type { HeadObservation } from "./heads.ts";
import type { LogProblem } from "./log_memory.ts";

/** One thing the fork watch found that a page must show, in plain words. */
export type HeadAlert = {
  kind:
    | "key-changed"
    | "unsigned"
    | "rollback"
    | "unchecked"
    | "unwitnessed"
    | LinkProblem["kind"];
  title: string;
  text: string;
};

/**
 * The alerts an observation raises besides a fork (which {@link HeadObservation.fork} carries
 * as evidence): a changed server key, heads without a valid signature, a rollback.
 */
export function headAlerts(observed: HeadObservation): HeadAlert[] {
  const alerts: HeadAlert[] = [];
  if (observed.keyChanged) {
    alerts.push({
      kind: "key-changed",
      title: "The server changed its signing key",
      text: `This browser remembers blocks signed with the key that starts ` +
        `${short(observed.seen.key)}; the server now answers a key that starts ` +
        `${short(observed.key)}. A new key can sign a different ` +
        "history that no remembered block can be compared with. This browser keeps the blocks " +
        "signed with the old key.",
    });
  }
  if (observed.unsigned.length > 0) {
    const heights = [...new Set(observed.unsigned.map((h) => h.height))].join(", ");
    alerts.push({
      kind: "unsigned",
      title: "The server showed blocks it did not sign",
      text: `Block ${heights} came without a valid signature by the server's key. An unsigned ` +
        "block proves nothing: the server could show a different history and later deny it.",
    });
  }
  if (observed.rollback) {
    const { height, remembered } = observed.rollback;
    alerts.push({
      kind: "rollback",
      title: "The server's chain went backwards",
      text: `This browser saw block ${remembered}, signed by the server; the server now says ` +
        `the chain ends at block ${height}. Sealed blocks are never removed: blocks were hidden ` +
        "or the history was rolled back.",
    });
  }
  alerts.push(...linkAlerts(observed.links));
  return alerts;
}

/**
 * The alert of a check that could not be made (`reason`): a request failed or got no answer by its
 * deadline, the check did not finish by its own, or the links were beyond its bounds. What the page
 * shows is then not confirmed, which a server must not be able to hide by failing or stalling.
 */
export function uncheckedAlert(reason: string): HeadAlert {
  return {
    kind: "unchecked",
    title: "This browser could not check the server's history",
    text: `The check that the chain shown still contains every block seen before could not be ` +
      `made (${reason}). Until it can, nothing on this page is confirmed; it is tried again ` +
      "every few seconds.",
  };
}

/** One alert per kind of link problem, in plain words, naming the first problem of that kind. */
export function linkAlerts(problems: readonly LinkProblem[]): HeadAlert[] {
  const alerts: HeadAlert[] = [];
  const first = <K extends LinkProblem["kind"]>(kind: K) =>
    problems.find((p): p is Extract<LinkProblem, { kind: K }> => p.kind === kind);
  const notExtended = first("not-extended");
  if (notExtended) {
    alerts.push({
      kind: "not-extended",
      title: "The server's chain does not extend what this browser saw",
      text: `Following the links back from the blocks shown now does not lead to block ` +
        `${notExtended.height} as this browser saw it (fingerprint ${short(notExtended.expected)}` +
        `; found ${short(notExtended.found)}). A chain that only ever grows always leads back to ` +
        "every block seen before: the server replaced part of its history.",
    });
  }
  const withheld = first("withheld");
  if (withheld) {
    const blocks = withheld.from === withheld.to
      ? `block ${withheld.from}`
      : `blocks ${withheld.from} to ${withheld.to}`;
    alerts.push({
      kind: "withheld",
      title: "The server withheld a block this browser needs",
      text: `To check that the chain shown now still contains the blocks seen before, this ` +
        `browser asked for ${blocks}, and ${withheld.reason}. Sealed blocks are public and never ` +
        "removed, so nothing shown now is accepted until the check can be made.",
    });
  }
  const inconsistent = first("inconsistent");
  if (inconsistent) {
    alerts.push({
      kind: "inconsistent",
      title: "The server showed a block that contradicts itself",
      text: `Block ${inconsistent.height}: ${inconsistent.reason}. An honest server's blocks ` +
        "always match their own fingerprints and heights.",
    });
  }
  const unchecked = first("unchecked");
  if (unchecked) alerts.push(uncheckedAlert(unchecked.reason));
  return alerts;
}

/** The first 16 hex digits of `key`, enough to tell two keys apart on screen. */
function short(key: string | null): string {
  return key === null ? "(none)" : shortHex(key, 16, { mark: "" });
}
/** File name and JSON text of a fork-evidence download. */
export function evidenceFile(evidence: AnyForkEvidence): { name: string; text: string } {
  const at = "heads" in evidence
    ? `height-${evidence.heads[0].height}`
    : `checkpoints-${evidence.checkpoints.map(checkpointSize).join("-")}`;
  return {
    name: `ringvote-fork-evidence-${at}.json`,
    text: JSON.stringify(evidence, null, 2) + "\n",
  };
}
/** Fork evidence of either form: two signed heads at one height, or two checkpoints. */
export type AnyForkEvidence = ForkEvidence | LogForkEvidence;
/** One alert per kind of log problem, in plain words, naming the first problem of that kind. */
export function logAlerts(problems: readonly LogProblem[]): HeadAlert[] {
  const alerts: HeadAlert[] = [];
  const first = <K extends LogProblem["kind"]>(kind: K) =>
    problems.find((p): p is Extract<LogProblem, { kind: K }> => p.kind === kind);
  const unsigned = first("unsigned");
  if (unsigned) {
    alerts.push({
      kind: "unsigned",
      title: "The server showed a checkpoint it did not sign",
      text: `The server's summary of its whole history (its checkpoint) came without a valid ` +
        `signature by the server's key: ${unsigned.reason}. An unsigned checkpoint proves ` +
        "nothing: the server could show a different history and later deny it.",
    });
  }
  const rollback = first("rollback");
  if (rollback) {
    alerts.push({
      kind: "rollback",
      title: "The server's chain went backwards",
      text: `This browser accepted the server's history up to block ${rollback.remembered - 1}, ` +
        `signed by the server; the server now says it ends at block ${rollback.size - 1}. ` +
        "Sealed blocks are never removed: blocks were hidden or the history was rolled back.",
    });
  }
  const notExtended = first("not-extended");
  if (notExtended) {
    alerts.push({
      kind: "not-extended",
      title: "The server showed a block that is not in its history",
      text: `Block ${notExtended.height} as shown (fingerprint ${short(notExtended.hash)}) is ` +
        `not in the history the server signed (${notExtended.size} blocks): its inclusion proof ` +
        "fails. An honest server only shows blocks of the one history it signs.",
    });
  }
  const withheld = first("withheld");
  if (withheld) {
    alerts.push({
      kind: "withheld",
      title: "The server withheld a proof this browser needs",
      text: `To check that what it shows belongs to the history seen before, this browser ` +
        `needs ${withheld.what}, and ${withheld.reason}. Proofs of sealed blocks are public, so ` +
        "nothing shown now is accepted until the check can be made.",
    });
  }
  const inconsistent = first("inconsistent");
  if (inconsistent) {
    alerts.push({
      kind: "inconsistent",
      title: "The server showed a checkpoint that contradicts itself",
      text: `${capitalise(inconsistent.reason)}. An honest server's checkpoints are well-formed ` +
        "and always name the same log.",
    });
  }
  const unchecked = first("unchecked");
  if (unchecked) alerts.push(uncheckedAlert(unchecked.reason));
  const unwitnessed = first("unwitnessed");
  if (unwitnessed) {
    alerts.push({
      kind: "unwitnessed",
      title: "No witness vouches for what the server shows",
      text: `The server's history (${unwitnessed.size} blocks) has waited ` +
        `${Math.round(unwitnessed.waitedMs / 1000)} s for the witnesses this page was given to ` +
        "cosign it. Witnesses cosign only a history consistent with everything they saw: the " +
        "server may be showing this browser a history no one else sees.",
    });
  }
  return alerts;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The tree size a checkpoint note names (its second line), or "unknown". */
export function checkpointSize(note: string): string {
  const size = note.split("\n", 3)[1];
  return /^[0-9]{1,16}$/.test(size ?? "") ? size : "unknown";
}
