/**
 * Browser-safe. The audit's check of the log (protocol §4.6, §4.10): the checkpoint it read is
 * signed by the server key under its origin, and its root is the RFC 9162 root over the audited
 * blocks' hashes; then the trusted witnesses' cosignatures on it, counted against a quorum.
 * @module
 */
import { bytesToBase64, hexToBytes } from "../../protocol/bytes.ts";
import { checkLink, verifyBlockHash } from "../../protocol/chain.ts";
import { logLeafHash } from "../../protocol/block_log.ts";
import { openCheckpoint } from "../../protocol/checkpoint.ts";
import { rootOfSize } from "../../protocol/merkle.ts";
import {
  ED25519_TYPE,
  formatVerifierKey,
  parseNote,
  type VerifierKey,
  verifierKey,
  verifyCosignature,
} from "../../protocol/note.ts";
import type { BlockRecord } from "../../protocol/schemas.ts";
import { pagesOf } from "../api_client.ts";
import type { AuditFinding, BeyondProblem } from "./findings.ts";
import { type AuditSource, type PhaseContext, signedBy } from "./reads.ts";

/**
 * Most characters of a checkpoint note the audit takes, here and in a record (protocol §4.8): a
 * note of 100 signature lines of 700 characters each, the most a server keeps, fits.
 */
export const MAX_CHECKPOINT_CHARS = 100_000;

/** What `GET {base}/log/checkpoint` gave: the signed note, or why there is none. */
export type ServedCheckpoint = { kind: "note"; note: string } | { kind: "unread"; reason: string };

/** The checkpoint the audit verified: its origin, tree size, root (base64) and the note itself. */
export type AuditedCheckpoint = { origin: string; size: number; root: string; note: string };

/** The witnesses an auditor trusts (cosignature/v1 keys) and how many of them must cosign. */
export type TrustedWitnesses = { keys: readonly VerifierKey[]; quorum: number };

/** One trusted witness and its cosignature on the audited checkpoint: when (ms), null for none. */
export type WitnessFinding = { vkey: string; name: string; cosignedAt: number | null };

/** The witnesses' verdict: each trusted witness's finding, and the quorum asked for. */
export type WitnessReport = { quorum: number; findings: WitnessFinding[] };

/** Reads the checkpoint; a failed read is an answer too ("not given" is checked as a failure). */
export async function readCheckpoint(api: AuditSource): Promise<ServedCheckpoint> {
  try {
    return { kind: "note", note: await api.checkpoint() };
  } catch (error) {
    return { kind: "unread", reason: (error as Error).message };
  }
}

/**
 * Blocks phase, the log: `served` must be a checkpoint signed by `serverKey` under its origin (the
 * note's first line, the key's name), and its root the RFC 9162 root of the leaves
 * `logLeafHash(hash)` of blocks 0 … size − 1 of `blocks` — a prefix of them when the chain grew
 * after the checkpoint was read. A checkpoint beyond the audited blocks is read up to: the blocks
 * between are read and checked as the audited ones are. Answers the checkpoint when it holds,
 * null after a failure.
 */
export async function checkCheckpoint(
  api: AuditSource,
  { served, serverKey, blocks, ctx }: {
    served: ServedCheckpoint;
    serverKey: string;
    blocks: BlockRecord[];
    ctx: PhaseContext;
  },
): Promise<AuditedCheckpoint | null> {
  if (served.kind === "unread") {
    ctx.fail({ kind: "checkpoint-not-given", reason: served.reason });
    return null;
  }
  if (served.note.length > MAX_CHECKPOINT_CHARS) {
    ctx.fail({ kind: "checkpoint-too-long", max: MAX_CHECKPOINT_CHARS });
    return null;
  }
  let opened;
  let origin = "";
  try {
    origin = parseNote(served.note).text.split("\n", 1)[0];
    opened = openCheckpoint(
      served.note,
      verifierKey(origin, ED25519_TYPE, hexToBytes(serverKey, 32, "server key")),
    );
  } catch (error) {
    ctx.fail({ kind: "checkpoint-malformed", reason: (error as Error).message });
    return null;
  }
  if (!opened) {
    ctx.fail({ kind: "checkpoint-unsigned", key: serverKey, origin });
    return null;
  }
  const { size } = opened;
  const leaves = blocks.map((b) => logLeafHash(b.hash));
  if (size > leaves.length) {
    const beyond = await readBlocksUpTo(api, { blocks, size, serverKey, ctx });
    if (beyond === null) return null;
    leaves.push(...beyond.map((b) => logLeafHash(b.hash)));
  }
  const root = bytesToBase64(opened.root);
  const ours = bytesToBase64(rootOfSize(leaves, size));
  if (root !== ours) {
    ctx.fail({ kind: "checkpoint-root", size, root, made: ours });
    return null;
  }
  return { origin, size, root, note: served.note };
}

/**
 * The blocks from the audited head up to height `size` − 1, read for a checkpoint beyond the
 * audited height, each checked as the blocks phase checks one: served at its height, its hash
 * from its fields, linked to the block below, signed by the server key. Null after a failure.
 */
async function readBlocksUpTo(
  api: AuditSource,
  { blocks, size, serverKey, ctx }: {
    blocks: BlockRecord[];
    size: number;
    serverKey: string;
    ctx: PhaseContext;
  },
): Promise<BlockRecord[] | null> {
  const from = blocks.length;
  const beyond: BlockRecord[] = [];
  for await (const page of pagesOf(api.blocks, { offset: from, count: size - from })) {
    beyond.push(...page.items.slice(0, size - from - beyond.length));
  }
  const audited = from - 1;
  if (beyond.length < size - from) {
    ctx.fail({ kind: "checkpoint-unserved", size, audited, served: audited + beyond.length });
    return null;
  }
  let ok = true;
  const failBlock = (height: number, problem: BeyondProblem) => {
    ctx.fail({ kind: "checkpoint-block", height, audited, problem });
    ok = false;
  };
  beyond.forEach((b, i) => {
    const h = from + i;
    const below = i === 0 ? blocks[from - 1] : beyond[i - 1];
    if (b.height !== h) failBlock(h, { is: "height", served: b.height });
    else if (!verifyBlockHash(b)) failBlock(h, { is: "hash" });
    else if (below === undefined || !checkLink(b, below)) failBlock(h, { is: "link" });
    else if (!signedBy(serverKey, b)) failBlock(h, { is: "signature" });
  });
  return ok ? beyond : null;
}

/**
 * Each of `keys`' cosignature (cosignature/v1, tlog-cosignature v1.0.1) on `checkpoint`: when it
 * was made, or null when there is none that verifies; none on a checkpoint that did not verify
 * (null). Timestamps are not judged: an audit may run long after the checkpoint.
 */
export function witnessFindings(
  checkpoint: AuditedCheckpoint | null,
  keys: readonly VerifierKey[],
): WitnessFinding[] {
  const note = checkpoint === null ? null : parseNote(checkpoint.note);
  return keys.map((key) => {
    let cosigned: { timestamp: number } | false = false;
    try {
      cosigned = note !== null && verifyCosignature(note, key);
    } catch {
      cosigned = false; // a key of another type cosigns nothing
    }
    return {
      vkey: formatVerifierKey(key),
      name: key.name,
      cosignedAt: cosigned ? cosigned.timestamp * 1000 : null,
    };
  });
}

/**
 * The trusted witnesses' findings on `checkpoint` ({@link witnessFindings}), and a failure unless
 * at least `quorum` of them cosigned it; one too when the checkpoint did not verify, as no
 * cosignature can count then, and one when it is a prefix of the audited chain (blocks 0 to
 * `height`), whose blocks above it no cosignature vouches for.
 */
export function checkWitnesses(
  checkpoint: AuditedCheckpoint | null,
  { trusted, height, fail }: {
    trusted: TrustedWitnesses;
    height: number;
    fail: (finding: AuditFinding) => void;
  },
): WitnessReport {
  const findings = witnessFindings(checkpoint, trusted.keys);
  const count = findings.filter((f) => f.cosignedAt !== null).length;
  const { quorum } = trusted;
  if (checkpoint !== null && checkpoint.size <= height) {
    fail({ kind: "witnesses-prefix", size: checkpoint.size, height });
  }
  if (checkpoint === null) fail({ kind: "witnesses-unchecked" });
  else if (count < quorum) {
    fail({
      kind: "witness-quorum",
      count,
      trusted: findings.length,
      size: checkpoint.size,
      quorum,
    });
  }
  return { quorum: trusted.quorum, findings };
}
