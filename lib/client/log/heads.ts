/**
 * Browser-safe. The signed heads a page remembers (protocol §4.5), each new one checked against the
 * server key and the heads seen before; two signed heads at one height are fork evidence, with the
 * alerts a page shows in plain words.
 * @module
 */
import * as z from "zod/mini";
import { forkEvidence, verifyHead } from "../../protocol/head.ts";
import { type ForkEvidence, SignedHead } from "../../protocol/schemas.ts";
import type { ApiClient } from "../api_client.ts";
import { checkExtension, type LinkProblem } from "./head_links.ts";
import { shortHex } from "../text.ts";
import { hexToBytes } from "../../protocol/bytes.ts";
import { openCheckpoint } from "../../protocol/checkpoint.ts";
import type { LogForkEvidence } from "../../protocol/log_evidence.ts";
import { ED25519_TYPE, parseNote, verifierKey } from "../../protocol/note.ts";
import { type LogProblem, parseLogMemory, SEEN_LOG_KEY } from "./log_memory.ts";
import { checkLog, type LogCheck } from "./log_view.ts";
import type { WitnessPolicy } from "./witness_policy.ts";

/**
 * Browser-storage key of the voting page's and the board's remembered heads: one JSON value,
 * apart from the per-voter entries of page §3 (those are prefixed by a voter's namespace).
 */
export const SEEN_HEADS_KEY = "ringvote/seen-heads";

/** Most heads remembered; the highest are kept, since a fork below them changes them too. */
export const MAX_SEEN_HEADS = 256;

/** What a page remembers: the server key it trusts and the heads it has seen, by height. */
export type SeenHeads = { key: string | null; heads: SignedHead[] };

const Stored = z.object({ key: z.nullable(z.string()), heads: z.array(SignedHead) });

/** The remembered heads from storage; an empty memory when absent or unreadable. */
export function parseSeenHeads(stored: string | null): SeenHeads {
  if (stored === null) return { key: null, heads: [] };
  try {
    const parsed = Stored.safeParse(JSON.parse(stored));
    return parsed.success ? parsed.data : { key: null, heads: [] };
  } catch {
    return { key: null, heads: [] };
  }
}

/** The stored form of `seen`. */
export function serializeSeenHeads(seen: SeenHeads): string {
  return JSON.stringify(seen);
}

/**
 * A head as shown: a block status, or a block record (its other fields then let the links be
 * checked without reading it again), with its signature if it carries one.
 */
export type ShownHead = { height: number; hash: string; head_signature?: string };

/**
 * The outcome of showing heads to the memory: the updated memory, the first fork found (evidence
 * against the key), the heads whose signature is missing or wrong, whether the server key changed
 * (then the memory is kept as it was: the old key's heads are never overwritten), and a rollback —
 * a chain height below the highest head remembered.
 */
export type HeadObservation = {
  /** The server key the shown heads were checked against. */
  key: string;
  seen: SeenHeads;
  fork: ForkEvidence | null;
  unsigned: ShownHead[];
  keyChanged: boolean;
  rollback: Rollback | null;
  /** Where the shown chain does not provably extend the remembered heads (head_links.ts). */
  links: LinkProblem[];
};

/** The chain's height as the server now claims it, below the highest signed head remembered. */
export type Rollback = { height: number; remembered: number };

/**
 * Checks `shown` heads, signed by `key`, against `seen`: a validly signed head at a remembered
 * height with another hash is a fork; a new validly signed head is remembered; a head without a
 * valid signature proves nothing and is listed; a claimed chain `height` below the highest
 * remembered head is a rollback. Under a key other than the remembered one nothing is remembered:
 * the memory stays the old key's. Pure: `seen` is not modified.
 */
export function observeHeads(
  seen: SeenHeads,
  { key, shown, height }: { key: string; shown: readonly ShownHead[]; height?: number },
): HeadObservation {
  const keyChanged = seen.key !== null && seen.key !== key;
  const byHeight = new Map<number, SignedHead>();
  if (!keyChanged) { for (const head of seen.heads) byHeight.set(head.height, head); }
  let fork: ForkEvidence | null = null;
  const unsigned: ShownHead[] = [];
  for (const head of shown) {
    const signed = validlySigned(key, head);
    if (signed === null) {
      unsigned.push(head);
      continue;
    }
    const known = byHeight.get(head.height);
    if (known === undefined) byHeight.set(head.height, signed);
    else if (known.hash !== head.hash) fork ??= forkEvidence(key, [known, signed]);
  }
  const highest = seen.heads.at(-1)?.height;
  const rollback = height !== undefined && highest !== undefined && height < highest
    ? { height, remembered: highest }
    : null;
  const heads = [...byHeight.values()].sort((a, b) => a.height - b.height).slice(-MAX_SEEN_HEADS);
  return {
    key,
    seen: keyChanged ? seen : { key, heads },
    fork,
    unsigned,
    keyChanged,
    rollback,
    links: [],
  };
}

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

function validlySigned(key: string, head: ShownHead): SignedHead | null {
  const { height, hash, head_signature } = head;
  if (head_signature === undefined) return null;
  try {
    return verifyHead(key, { height, hash, head_signature })
      ? { height, hash, head_signature }
      : null;
  } catch {
    return null;
  }
}

/** The remembered heads at heights up to `height`, highest first: the ones a chain must extend. */
export function headsBelow(seen: SeenHeads, height: number): SignedHead[] {
  return seen.heads.filter((h) => h.height <= height).reverse();
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

/** Where a page keeps its remembered heads. */
export type HeadStorage = Pick<Storage, "getItem" | "setItem">;

/**
 * Observes the chain `api` shows — its `status` and `shown` heads — against `seen` under `key`:
 * the head and every validly signed head shown must extend the remembered heads (the blocks in
 * between are read: {@link checkExtension}); a first visit anchors on the signed head of the chain,
 * so everything else shown must lead to it. Pure but for the reads; `seen` is not modified.
 */
export async function observeChain(
  api: ApiClient,
  { key, seen, status, shown = [] }: {
    key: string;
    seen: SeenHeads;
    status: ShownHead;
    shown?: readonly ShownHead[];
  },
): Promise<HeadObservation> {
  const all = [status, ...shown];
  const signed = all.filter((head) => validlySigned(key, head) !== null) as SignedHead[];
  const keyChanged = seen.key !== null && seen.key !== key;
  const anchors = keyChanged ? [] : seen.heads.length > 0 ? seen.heads : signed.slice(0, 1);
  const { problems, blocks } = keyChanged
    ? { problems: [], blocks: [] }
    : await checkExtension(api, { anchors, shown: signed });
  return {
    ...observeHeads(seen, { key, shown: [...all, ...blocks], height: status.height }),
    links: problems,
  };
}

/** True when `observed` may be remembered: no fork, the same key, every link checked. */
export function mayRemember(observed: HeadObservation): boolean {
  return !observed.fork && !observed.keyChanged && observed.links.length === 0;
}

/** Fork evidence of either form: two signed heads at one height, or two checkpoints. */
export type AnyForkEvidence = ForkEvidence | LogForkEvidence;

/** What one check of the chain a page is shown found (protocol §4.5). */
export type ChainCheck = {
  /** The shown heads' signatures and the heads remembered. */
  observed: HeadObservation;
  /** The log's check; null when the server key changed (nothing is compared then). */
  log: LogCheck | null;
  /** The first fork found, of either form. */
  fork: AnyForkEvidence | null;
  /** Every alert besides the fork, one per kind. */
  alerts: HeadAlert[];
};

/** How a page checks its chain: where it remembers, what it was shown, its witness policy. */
export type ChainCheckOptions = {
  storage: HeadStorage;
  shown?: readonly ShownHead[];
  /** The witness policy in force; none by default. */
  policy?: WitnessPolicy | null;
  /** The bound of `unwitnessed` ({@link unwitnessedBoundMs}); two minutes by default. */
  boundMs?: number;
  now?: number;
};

/**
 * A page's check of the chain it is shown (protocol §4.5): reads the log's checkpoint (and the
 * server key only on a first visit, or when the checkpoint does not verify under the key
 * remembered), checks the signatures of the `shown` heads against the remembered ones
 * ({@link observeHeads}), then the checkpoint against the remembered one and every shown head's
 * inclusion in it ({@link checkLog}). It stores what may be remembered — never after a fork or a
 * changed key, so the evidence stays reproducible and the old memory stays. From a remembered
 * size to any larger one a check costs two requests: the checkpoint and one consistency proof.
 */
export async function checkShownChain(
  api: ApiClient,
  { storage, shown = [], policy = null, boundMs = 120_000, now = Date.now() }: ChainCheckOptions,
): Promise<ChainCheck> {
  const seen = parseSeenHeads(storage.getItem(SEEN_HEADS_KEY));
  const startedFrom = storage.getItem(SEEN_LOG_KEY);
  const memory = parseLogMemory(startedFrom);
  const note = await api.checkpoint();
  let key = seen.key ?? memory.key;
  if (key === null || !signsCheckpoint(note, key)) key = (await api.serverKey()).key;
  const observed = observeHeads(seen, { key, shown });
  if (observed.keyChanged) {
    return { observed, log: null, fork: observed.fork, alerts: headAlerts(observed) };
  }
  const signedShown = shown.filter((head) => !observed.unsigned.includes(head));
  const log = await checkLog(api, { memory, key, note, shown: signedShown, policy, boundMs, now });
  const fork = observed.fork ?? log.fork ??
    await forkBelow(api, { key, seen, shown: signedShown, beyond: log.beyond });
  // Another tab of this browser may have accepted a checkpoint meanwhile: this check's view is
  // stored only over the one it started from, never over a newer one (the next check rereads).
  const unchanged = storage.getItem(SEEN_LOG_KEY) === startedFrom;
  if (!fork && unchanged) {
    storage.setItem(SEEN_HEADS_KEY, serializeSeenHeads(observed.seen));
    if (log.remember) storage.setItem(SEEN_LOG_KEY, JSON.stringify(log.memory));
  }
  return { observed, log, fork, alerts: [...headAlerts(observed), ...logAlerts(log.problems)] };
}

/**
 * The fork that the blocks shown above the checkpoint (`beyond`, among the signed `shown`) lead to:
 * their `prev_hash` links followed down to the remembered heads ({@link checkExtension}, within
 * its bounds), and every block read on the way observed against them. The log cannot prove such
 * blocks — not yet, or never, when a forked chain is shown beside an honest log — but two heads
 * signed for one height are evidence without it. Null when the links show no such pair.
 */
async function forkBelow(
  api: ApiClient,
  { key, seen, shown, beyond }: {
    key: string;
    seen: SeenHeads;
    shown: readonly ShownHead[];
    beyond: readonly { height: number; hash: string }[];
  },
): Promise<ForkEvidence | null> {
  if (beyond.length === 0 || seen.heads.length === 0) return null;
  const above = new Set(beyond.map((b) => `${b.height}:${b.hash}`));
  const heads = shown.filter((s) => above.has(`${s.height}:${s.hash}`)) as SignedHead[];
  const { blocks } = await checkExtension(api, { anchors: seen.heads, shown: heads });
  return observeHeads(seen, { key, shown: blocks }).fork;
}

/** True when `note` is a checkpoint signed by `key` (hex) under its own origin. */
function signsCheckpoint(note: string, key: string): boolean {
  try {
    const origin = parseNote(note).text.split("\n", 1)[0];
    return openCheckpoint(note, verifierKey(origin, ED25519_TYPE, hexToBytes(key, 32))) !== false;
  } catch {
    return false;
  }
}

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
