/**
 * Browser-safe. A page's view of the server's log (protocol §4.5, §4.10): the checkpoint it has
 * accepted, accepted again only when a consistency proof joins it to the new one; every block the
 * page is shown proven included by an inclusion proof; and, under a witness policy, whether the
 * checkpoints it accepts are cosigned by a quorum of witnesses in time (log_witness.ts). Two
 * checkpoints no proof joins are fork evidence. What the page keeps is in log_memory.ts. The cost
 * of a check is O(log n) hashes whatever the distance.
 * @module
 */
import { bytesToBase64, equalBytes, hexToBytes } from "../../protocol/bytes.ts";
import { type Checkpoint, openCheckpoint } from "../../protocol/checkpoint.ts";
import { logLeafHash } from "../../protocol/block_log.ts";
import { type LogForkEvidence, logForkEvidence } from "../../protocol/log_evidence.ts";
import { merkleRoot } from "../../protocol/merkle.ts";
import { verifyConsistency, verifyInclusion } from "../../protocol/merkle_verify.ts";
import {
  decodeBase64Strict,
  ED25519_TYPE,
  formatVerifierKey,
  parseNote,
  type SignedNote,
  verifierKey,
} from "../../protocol/note.ts";
import { ApiCallError, type ApiClient } from "../api_client.ts";
import { type LogMemory, type LogProblem, MAX_PROVEN } from "./log_memory.ts";
import { type WitnessView, witnessView } from "./log_witness.ts";
import type { WitnessPolicy } from "./witness_policy.ts";

/** Most inclusion proofs one check asks for; the other blocks wait for the next check. */
export const MAX_INCLUSION_REQUESTS = 24;

/** Checks a block shown above every checkpoint may wait for one before it counts as withheld. */
export const MAX_BEYOND_CHECKS = 3;

/** Longest checkpoint note a page reads (a note with 100 signature lines fits). */
export const MAX_NOTE_LENGTH = 20_000;
/** A block a page was shown: its height and hash (its signature is checked elsewhere). */
export type ShownBlock = { height: number; hash: string };
/** The name of a block in {@link LogMemory.proven}. */
export function blockName({ height, hash }: ShownBlock): string {
  return `${height}:${hash}`;
}
/** The outcome of one check of the log. */
export type LogCheck = {
  /** The memory to keep (the one given when nothing may be remembered). */
  memory: LogMemory;
  /** False when the memory must not be stored: a fork, or nothing accepted. */
  remember: boolean;
  fork: LogForkEvidence | null;
  problems: LogProblem[];
  /** Blocks shown above the checkpoint read, to be checked again later. */
  beyond: ShownBlock[];
  /** Blocks not checked by this check (over its proof budget, or after it stopped): next time. */
  later: ShownBlock[];
  witness: WitnessView | null;
  /** The checkpoint accepted by this check, opened; null when none was. */
  checkpoint: (Checkpoint & { note: string }) | null;
};

/**
 * Checks the checkpoint `note` the server serves now, signed by ledger `key`, against `memory`,
 * and proves the `shown` blocks included in it. A larger checkpoint is accepted only with a
 * consistency proof from the accepted size (every earlier accepted one is a prefix of that one);
 * the same size must have the same root; a smaller one is a rollback. Blocks shown at heights
 * within the checkpoint are proven with at most {@link MAX_INCLUSION_REQUESTS} inclusion
 * proofs (the rest wait); those above it are `beyond`. Under `policy`, the checkpoint's fresh
 * cosignatures are counted, and a checkpoint larger than the witnessed one that waited more than
 * `boundMs` raises `unwitnessed`. Pure but for the proof reads; never throws for what the server
 * answers.
 */
export async function checkLog(
  api: ApiClient,
  { memory, key, note, shown, policy, boundMs, now }: {
    memory: LogMemory;
    key: string;
    note: string;
    shown: readonly ShownBlock[];
    policy: WitnessPolicy | null;
    boundMs: number;
    now: number;
  },
): Promise<LogCheck> {
  const refused = (problem: LogProblem | null): LogCheck => ({
    memory,
    remember: false,
    fork: null,
    problems: problem ? [problem] : [],
    beyond: [],
    later: [...shown],
    witness: witnessView(memory, policy, null, boundMs, now).view,
    checkpoint: null,
  });
  const forked = (evidence: LogForkEvidence): LogCheck => ({ ...refused(null), fork: evidence });
  const opened = openNote(note, key);
  if ("problem" in opened) return refused(opened.problem);
  const { checkpoint, parsed } = opened;
  if (memory.origin !== null && memory.key === key && checkpoint.origin !== memory.origin) {
    return refused({
      kind: "inconsistent",
      reason: `the server now names its log "${checkpoint.origin}", not "${memory.origin}"`,
    });
  }
  const root = bytesToBase64(checkpoint.root);
  const known = memory.key === key && memory.note !== null && memory.root !== null;
  const fork = (proof: string[]) => logForkEvidence(key, [memory.note!, note], proof);
  if (known && checkpoint.size < memory.size) {
    return refused({ kind: "rollback", size: checkpoint.size, remembered: memory.size });
  }
  if (known && checkpoint.size === memory.size && root !== memory.root) return forked(fork([]));
  if (known && checkpoint.size > memory.size && memory.size > 0) {
    const proof = await read(() => api.consistencyProof(memory.size, checkpoint.size), {
      what: `the consistency proof from size ${memory.size} to ${checkpoint.size}`,
    });
    if ("problem" in proof) return refused(proof.problem);
    const hashes = decodeHashes(proof.value);
    const joined = hashes !== null && verifyConsistency({
      oldSize: memory.size,
      newSize: checkpoint.size,
      oldRoot: decodeBase64Strict(memory.root!),
      newRoot: checkpoint.root,
      proof: hashes,
    });
    if (!joined) return forked(fork(proof.value));
  }
  const problems: LogProblem[] = [];
  const proven = known ? new Set(memory.proven) : new Set<string>();
  const beyond: ShownBlock[] = [];
  const later: ShownBlock[] = [];
  const unproven = uniqueBlocks(shown).filter((block) => !proven.has(blockName(block)));
  const within = unproven.filter((block) => block.height < checkpoint.size);
  beyond.push(...unproven.filter((block) => block.height >= checkpoint.size));
  // Shown every block of the tree (the board's audit reads them all): the root is recomputed
  // here, with no request at all.
  const whole = wholeTree(within, proven, checkpoint.size);
  if (whole !== null) {
    if (equalBytes(merkleRoot(whole.map(logLeafHash)), checkpoint.root)) {
      for (const block of within) proven.add(blockName(block));
      within.length = 0;
    }
  }
  let requests = MAX_INCLUSION_REQUESTS;
  for (const [i, block] of within.entries()) {
    if (requests-- <= 0) {
      later.push(...within.slice(i));
      break;
    }
    const path = await read(() => api.inclusionProof(block.height, checkpoint.size), {
      what: `the inclusion proof of block ${block.height} in size ${checkpoint.size}`,
    });
    if ("problem" in path) {
      problems.push(path.problem);
      if (path.problem.kind === "unchecked") {
        later.push(...within.slice(i));
        break;
      }
      continue;
    }
    const hashes = decodeHashes(path.value);
    let included = false;
    try {
      included = hashes !== null && verifyInclusion({
        index: block.height,
        size: checkpoint.size,
        leafHash: logLeafHash(block.hash),
        proof: hashes,
        root: checkpoint.root,
      });
    } catch {
      included = false; // a malformed block hash is in no log
    }
    if (included) proven.add(blockName(block));
    else problems.push({ kind: "not-extended", ...block, size: checkpoint.size });
  }
  const accepted: LogMemory = {
    ...memory,
    key,
    origin: checkpoint.origin,
    note,
    size: checkpoint.size,
    root,
    proven: [...proven].slice(-MAX_PROVEN),
  };
  if (!known) Object.assign(accepted, { witnessed: null, pending: [] });
  const shownRead = { parsed, note, size: checkpoint.size };
  let witnessed = witnessView(accepted, policy, shownRead, boundMs, now);
  if (policy !== null && witnessed.view?.status !== "witnessed") {
    // The newest checkpoint is not cosigned yet (the log grew a moment ago): how far do the
    // witnesses vouch? A cosigned checkpoint must be a prefix of the accepted one, or it is a fork.
    const caught = await caughtUp(api, { memory: witnessed.memory, key, policy });
    if ("fork" in caught) return forked(caught.fork);
    if (caught.problem) problems.push(caught.problem);
    if (caught.read) witnessed = witnessView(witnessed.memory, policy, caught.read, boundMs, now);
  }
  if (witnessed.problem) problems.push(witnessed.problem);
  return {
    memory: witnessed.memory,
    remember: true,
    fork: null,
    problems,
    beyond,
    later,
    witness: witnessed.view,
    checkpoint: { ...checkpoint, note },
  };
}

/** The note opened as a checkpoint signed by `key` under its origin, or the problem with it. */
function openNote(
  note: string,
  key: string,
): { checkpoint: Checkpoint; parsed: SignedNote } | { problem: LogProblem } {
  if (note.length > MAX_NOTE_LENGTH) {
    return { problem: { kind: "inconsistent", reason: "the checkpoint is too long to be one" } };
  }
  try {
    const parsed = parseNote(note);
    const origin = parsed.text.split("\n", 1)[0];
    const checkpoint = openCheckpoint(note, verifierKey(origin, ED25519_TYPE, hexToBytes(key, 32)));
    if (!checkpoint) {
      return {
        problem: {
          kind: "unsigned",
          reason: "the checkpoint carries no valid signature by its key",
        },
      };
    }
    return { checkpoint, parsed };
  } catch (error) {
    const reason = `the checkpoint is malformed: ${(error as Error).message}`;
    return { problem: { kind: "inconsistent", reason } };
  }
}

/**
 * The newest checkpoint cosigned by at least the policy's quorum of kept cosignatures
 * (`GET {base}/log/cosigned?min=k`), when it is larger than the witnessed one: checked signed by
 * `key` under the remembered origin and joined to the accepted checkpoint (the same root at the
 * same size, else a consistency proof from it). Two that no proof joins are fork evidence. None
 * cosigned yet is no problem; a read that fails is one.
 */
async function caughtUp(
  api: ApiClient,
  { memory, key, policy }: { memory: LogMemory; key: string; policy: WitnessPolicy },
): Promise<
  | { fork: LogForkEvidence }
  | { read: { parsed: SignedNote; note: string; size: number } | null; problem?: LogProblem }
> {
  let note: string;
  try {
    // Whole vkeys: a stranger's key can be made to share a witness's 4-byte key ID.
    const vkeys = policy.witnesses.map((w) => formatVerifierKey(w));
    note = await api.cosignedCheckpoint(policy.quorum, vkeys);
  } catch (error) {
    if (error instanceof ApiCallError && error.status === 404) return { read: null };
    const failed = await read(() => Promise.reject(error), {
      what: "the newest cosigned checkpoint",
    });
    return { read: null, problem: "problem" in failed ? failed.problem : undefined };
  }
  const opened = openNote(note, key);
  if ("problem" in opened) return { read: null, problem: opened.problem };
  const { checkpoint, parsed } = opened;
  if (checkpoint.origin !== memory.origin) {
    const reason = `the cosigned checkpoint names the log "${checkpoint.origin}"`;
    return { read: null, problem: { kind: "inconsistent", reason } };
  }
  const witnessedSize = memory.witnessed?.size ?? 0;
  if (checkpoint.size <= witnessedSize || checkpoint.size > memory.size) return { read: null };
  const fork = (proof: string[]) => ({ fork: logForkEvidence(key, [note, memory.note!], proof) });
  const root = bytesToBase64(checkpoint.root);
  if (checkpoint.size === memory.size) {
    return root === memory.root ? { read: { parsed, note, size: checkpoint.size } } : fork([]);
  }
  const proof = await read(() => api.consistencyProof(checkpoint.size, memory.size), {
    what: `the consistency proof from size ${checkpoint.size} to ${memory.size}`,
  });
  if ("problem" in proof) return { read: null, problem: proof.problem };
  const hashes = decodeHashes(proof.value);
  const joined = hashes !== null && verifyConsistency({
    oldSize: checkpoint.size,
    newSize: memory.size,
    oldRoot: checkpoint.root,
    newRoot: decodeBase64Strict(memory.root!),
    proof: hashes,
  });
  return joined ? { read: { parsed, note, size: checkpoint.size } } : fork(proof.value);
}

/**
 * The answer of `call`, or the problem of its failure: no answer in time is `unchecked`, any
 * other failure `withheld` (what the page needs was not given).
 */
async function read<T>(
  call: () => Promise<T>,
  { what }: { what: string },
): Promise<{ value: T } | { problem: LogProblem }> {
  try {
    return { value: await call() };
  } catch (error) {
    const reason = (error as Error).message;
    // No answer, or a server that says it cannot answer now (5xx), is a check not made, which the
    // next one clears; a refusal (4xx) or a malformed answer is a proof withheld.
    const transient = !(error instanceof ApiCallError) || error.status === 0 ||
      error.status >= 500;
    if (transient) return { problem: { kind: "unchecked", reason } };
    return { problem: { kind: "withheld", what, reason } };
  }
}

/** The base64 hashes decoded, or null when one is not 32 bytes of strict base64. */
function decodeHashes(lines: readonly string[]): Uint8Array[] | null {
  try {
    const hashes = lines.map((line) => decodeBase64Strict(line));
    return hashes.every((h) => h.length === 32) ? hashes : null;
  } catch {
    return null;
  }
}

/**
 * The hashes of blocks 0 to size - 1 in height order, when `within` (shown) and `proven` (remembered
 * as `height:hash`) name each of them, and only one hash each; null otherwise.
 */
function wholeTree(
  within: readonly ShownBlock[],
  proven: ReadonlySet<string>,
  size: number,
): string[] | null {
  if (within.length === 0 || within.length + proven.size < size) return null;
  const hashes: (string | undefined)[] = new Array(size);
  const name = (height: number, hash: string) => {
    if (height >= size) return true;
    if (hashes[height] !== undefined && hashes[height] !== hash) return false;
    hashes[height] = hash;
    return true;
  };
  for (const block of within) if (!name(block.height, block.hash)) return null;
  for (const entry of proven) {
    const at = entry.indexOf(":");
    if (!name(Number(entry.slice(0, at)), entry.slice(at + 1))) return null;
  }
  for (let h = 0; h < size; h++) if (hashes[h] === undefined) return null;
  return hashes as string[];
}

/** `shown` without repeats, lowest height first. */
function uniqueBlocks(shown: readonly ShownBlock[]): ShownBlock[] {
  const byName = new Map(shown.map((b) => [blockName(b), { height: b.height, hash: b.hash }]));
  return [...byName.values()].sort((a, b) => a.height - b.height);
}
