// Browser-safe. Fork evidence against a log (protocol §4.5, §4.10): two checkpoints signed by the
// ledger's key under one origin that no consistency proof joins — one size with two roots, or two
// sizes and the consistency proof the server itself served between them, which fails. Anyone can
// check it with the key alone; the second form can be answered only by a proof that joins them.
import * as z from "zod/mini";
import { equalBytes, hexToBytes } from "./bytes.ts";
import { openCheckpoint } from "./checkpoint.ts";
import { decodeBase64Strict, ED25519_TYPE, parseNote, verifierKey } from "./note.ts";
import { verifyConsistency } from "./merkle_verify.ts";
import { Hex32 } from "./schemas.ts";

/** The `kind` of checkpoint fork evidence. */
export const LOG_FORK_EVIDENCE_KIND = "ringvote/v1/log-fork-evidence";

/** Most proof hashes evidence may carry: a proof between sizes below 2^53 has at most 106. */
const MAX_PROOF_HASHES = 128;
/** Most characters of one checkpoint note in evidence (a note with 100 signature lines fits). */
const MAX_NOTE_LENGTH = 20_000;

/**
 * Checkpoint fork evidence: `checkpoints` are two signed notes by the ledger key `key` (hex), the
 * earlier seen first; `proof` the consistency proof (base64 hashes) the server answered from the
 * smaller size to the larger, empty when the sizes are equal.
 */
export const LogForkEvidence = z.object({
  kind: z.literal(LOG_FORK_EVIDENCE_KIND),
  key: Hex32,
  checkpoints: z.tuple([
    z.string().check(z.maxLength(MAX_NOTE_LENGTH)),
    z.string().check(z.maxLength(MAX_NOTE_LENGTH)),
  ]),
  proof: z.array(z.string().check(z.maxLength(64))).check(z.maxLength(MAX_PROOF_HASHES)),
});
export type LogForkEvidence = z.infer<typeof LogForkEvidence>;

/** What checkpoint fork evidence proves: the form, the log's origin and the two sizes. */
export type LogForkCheck =
  | { ok: true; form: "same-size" | "failed-proof"; origin: string; sizes: [number, number] }
  | { ok: false; reason: string };

/** The evidence of two checkpoint notes by `key` that `proof` (base64 hashes) does not join. */
export function logForkEvidence(
  key: string,
  checkpoints: [string, string],
  proof: readonly string[] = [],
): LogForkEvidence {
  return { kind: LOG_FORK_EVIDENCE_KIND, key, checkpoints, proof: [...proof] };
}

/**
 * Checks checkpoint fork evidence as anyone can, never throwing: both notes are checkpoints of one
 * origin signed by `key` under that origin's name; at one size their roots differ (`same-size`),
 * at two sizes the proof given does not show the smaller a prefix of the larger (`failed-proof`).
 * The caller compares `key` with the server key it trusts.
 */
export function checkLogForkEvidence(evidence: unknown): LogForkCheck {
  const parsed = LogForkEvidence.safeParse(evidence);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, reason: `Not fork evidence: ${issue.path.join(".")} ${issue.message}` };
  }
  const { key, checkpoints, proof } = parsed.data;
  const opened = [];
  for (const [i, note] of checkpoints.entries()) {
    try {
      const origin = parseCheckpointOrigin(note);
      const checkpoint = openCheckpoint(
        note,
        verifierKey(origin, ED25519_TYPE, hexToBytes(key, 32, "key")),
      );
      if (!checkpoint) {
        return { ok: false, reason: `Checkpoint ${i + 1} is not signed by key ${key}` };
      }
      opened.push(checkpoint);
    } catch (error) {
      return { ok: false, reason: `Checkpoint ${i + 1} is malformed: ${(error as Error).message}` };
    }
  }
  const [a, b] = opened;
  if (a.origin !== b.origin) {
    return { ok: false, reason: `The checkpoints name two logs: ${a.origin} and ${b.origin}` };
  }
  const sizes: [number, number] = [a.size, b.size];
  if (a.size === b.size) {
    if (equalBytes(a.root, b.root)) {
      return { ok: false, reason: `Both checkpoints are of size ${a.size} with the same root` };
    }
    return { ok: true, form: "same-size", origin: a.origin, sizes };
  }
  let hashes: Uint8Array[];
  try {
    hashes = proof.map((h, i) => decodeBase64Strict(h, `proof[${i}]`));
  } catch (error) {
    return { ok: false, reason: `The proof is malformed: ${(error as Error).message}` };
  }
  const [small, large] = a.size < b.size ? [a, b] : [b, a];
  let joined: boolean;
  try {
    joined = verifyConsistency({
      oldSize: small.size,
      newSize: large.size,
      oldRoot: small.root,
      newRoot: large.root,
      proof: hashes,
    });
  } catch {
    joined = false; // a proof hash of the wrong length joins nothing
  }
  if (joined) {
    return {
      ok: false,
      reason: `The proof shows checkpoint ${small.size} a prefix of checkpoint ${large.size}`,
    };
  }
  return { ok: true, form: "failed-proof", origin: a.origin, sizes };
}

/** The first line of a note: a checkpoint's origin, the name its log key signs under. */
function parseCheckpointOrigin(note: string): string {
  return parseNote(note).text.split("\n", 1)[0];
}
