/**
 * The add-checkpoint call of c2sp.org/tlog-witness@v1.0.0 as a function: the request body parsed,
 * the checkpoint's signature checked against the log keys the witness trusts, then — under the
 * origin's turn in the state store — the old size, the consistency proof and the root checked
 * against what it last cosigned, and the cosignature made and persisted. Answers a typed result.
 * @module
 */
import { equalBytes } from "../../lib/protocol/bytes.ts";
import { parseCheckpoint } from "../../lib/protocol/checkpoint.ts";
import { emptyRoot, HASH_SIZE } from "../../lib/protocol/merkle.ts";
import { verifyConsistency } from "../../lib/protocol/merkle_verify.ts";
import {
  decodeBase64Strict,
  ED25519_TYPE,
  formatNote,
  type NoteSignature,
  type NoteSigner,
  parseNote,
  signCosignature,
  type SignedNote,
  type VerifierKey,
  verifyNoteSignature,
} from "../../lib/protocol/note.ts";
import type { WitnessStateStore } from "./state.ts";

/** Most consistency proof lines a request may carry (tlog-witness: "MUST NOT send more than 63"). */
export const MAX_PROOF_LINES = 63;

/** An add-checkpoint request body, parsed: the old size, the proof and the checkpoint's note. */
export type AddCheckpointRequest = { oldSize: number; proof: Uint8Array[]; note: Uint8Array };

/** Why a checkpoint that is signed by its log is not consistent with what the witness cosigned. */
export type Inconsistency =
  /** A checkpoint of size 0 whose root is not the empty tree's. */
  | "empty-tree-root"
  /** Proof lines where none may be: old size 0, or the old size equal to the checkpoint's. */
  | "proof-not-empty"
  /**
   * The checkpoint has the size last cosigned, with another root: a fork. 422 as the spec's text
   * after v1.0.0 says (C2SP #280); v1.0.0 said 409, a status whose body is otherwise a size to retry.
   */
  | "root-mismatch"
  /** The consistency proof from the old size does not verify. */
  | "proof";

/** What an add-checkpoint request comes to; ./app.ts answers each kind with its status. */
export type AddCheckpointResult =
  | { kind: "cosigned"; origin: string; size: number; lines: string; advanced: boolean }
  | { kind: "malformed"; reason: string }
  | { kind: "unknown-origin"; origin: string }
  | { kind: "unverified"; origin: string }
  | { kind: "old-size-too-large"; origin: string; oldSize: number; size: number }
  | { kind: "stale"; origin: string; oldSize: number; latestSize: number }
  | {
    kind: "inconsistent";
    origin: string;
    oldSize: number;
    size: number;
    inconsistency: Inconsistency;
  };

/** What the witness is: its cosigning key, the keys of the logs it trusts, its records, a clock. */
export type Witness = {
  signer: NoteSigner;
  /** The Ed25519 (0x01) keys of each origin the witness cosigns for, by origin. */
  logs: ReadonlyMap<string, readonly VerifierKey[]>;
  store: WitnessStateStore;
  /** Milliseconds since the epoch; cosignatures carry it in seconds. */
  now: () => number;
};

const OLD_SIZE_LINE = /^old (0|[1-9][0-9]*)$/;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The log keys `keys` (Ed25519 note vkeys, named after their log's origin) grouped by origin.
 * Throws RangeError for a key of another type.
 */
export function trustedLogs(keys: readonly VerifierKey[]): Map<string, VerifierKey[]> {
  const logs = new Map<string, VerifierKey[]>();
  for (const key of keys) {
    if (key.type !== ED25519_TYPE) {
      throw new RangeError(`log key "${key.name}" must be an Ed25519 (type 0x01) key`);
    }
    const known = logs.get(key.name) ?? [];
    if (
      !known.some((k) => equalBytes(k.keyId, key.keyId) && equalBytes(k.publicKey, key.publicKey))
    ) {
      known.push(key);
    }
    logs.set(key.name, known);
  }
  return logs;
}

/**
 * Parses an add-checkpoint body: `old <size>\n`, at most {@link MAX_PROOF_LINES} lines of one
 * base64 32-byte hash each, an empty line, then the note (not parsed here). Throws RangeError for
 * a malformed body.
 */
export function parseAddCheckpointRequest(body: Uint8Array): AddCheckpointRequest {
  // The old size and proof lines are never empty, so the first empty line ends them.
  let end = -1;
  for (let i = 0; i + 1 < body.length; i++) {
    if (body[i] === 0x0a && body[i + 1] === 0x0a) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new RangeError("the body has no empty line before the checkpoint");
  let header: string;
  try {
    header = strictUtf8.decode(body.subarray(0, end));
  } catch {
    throw new RangeError("the old size and proof lines are not valid UTF-8");
  }
  const [oldLine, ...proofLines] = header.split("\n");
  const old = OLD_SIZE_LINE.exec(oldLine);
  if (old === null) {
    throw new RangeError('the first line must be "old <size>", in decimal without leading zeroes');
  }
  const oldSize = Number(old[1]);
  if (!Number.isSafeInteger(oldSize)) throw new RangeError("the old size is over 2^53 - 1");
  if (proofLines.length > MAX_PROOF_LINES) {
    throw new RangeError(`the proof has ${proofLines.length} lines, over ${MAX_PROOF_LINES}`);
  }
  const proof = proofLines.map((line, i) => {
    const hash = decodeBase64Strict(line, `proof line ${i + 1}`);
    if (hash.length !== HASH_SIZE) {
      throw new RangeError(`proof line ${i + 1} must be ${HASH_SIZE} bytes, got ${hash.length}`);
    }
    return hash;
  });
  return { oldSize, proof, note: body.subarray(end + 2) };
}

/**
 * Answers an add-checkpoint request `body` as tlog-witness v1.0.0 says, in its order: a malformed
 * body, then an unknown origin, then no valid signature of a trusted key (also: a line that names
 * a trusted key and fails, or two different lines of one trusted key), then an old size above the checkpoint's, then an old size other than
 * the latest cosigned (0 when none), then an inconsistent checkpoint; else the checkpoint is
 * cosigned, and the record advanced, durably, before this resolves. Rejects only when the store
 * fails: nothing was cosigned then.
 */
export async function addCheckpoint(
  body: Uint8Array,
  witness: Witness,
): Promise<AddCheckpointResult> {
  let request: AddCheckpointRequest;
  let note: SignedNote;
  try {
    request = parseAddCheckpointRequest(body);
    note = parseNote(request.note);
  } catch (error) {
    return { kind: "malformed", reason: (error as Error).message };
  }
  let checkpoint;
  try {
    checkpoint = parseCheckpoint(note.text);
  } catch (error) {
    return { kind: "malformed", reason: (error as Error).message };
  }
  const { origin, size, root } = checkpoint;
  const keys = witness.logs.get(origin);
  if (keys === undefined) return { kind: "unknown-origin", origin };
  const logLines = trustedLines(note, keys);
  if (logLines === null) return { kind: "unverified", origin };
  const { oldSize, proof } = request;
  if (oldSize > size) return { kind: "old-size-too-large", origin, oldSize, size };

  return await witness.store.update<AddCheckpointResult>(origin, (latest) => {
    const latestSize = latest?.size ?? 0;
    const latestRoot = latest?.root ?? emptyRoot();
    if (oldSize !== latestSize) return { result: { kind: "stale", origin, oldSize, latestSize } };
    if (!verifyConsistency({ oldSize, newSize: size, oldRoot: latestRoot, newRoot: root, proof })) {
      const inconsistency: Inconsistency = size === 0 && !equalBytes(root, emptyRoot())
        ? "empty-tree-root"
        : oldSize === size && !equalBytes(root, latestRoot)
        ? "root-mismatch"
        : proof.length > 0 && (oldSize === 0 || oldSize === size)
        ? "proof-not-empty"
        : "proof";
      return { result: { kind: "inconsistent", origin, oldSize, size, inconsistency } };
    }
    const cosignature = signCosignature(
      note.text,
      witness.signer,
      Math.floor(witness.now() / 1000),
    );
    // The answer is the note's signature lines alone: the cosigned note after its text.
    const lines = formatNote({ text: note.text, signatures: [cosignature] })
      .slice(note.text.length + 1);
    const advanced = latest === null || size > latestSize;
    const next = advanced
      ? {
        origin,
        size,
        root,
        note: formatNote({ text: note.text, signatures: [...logLines, cosignature] }),
      }
      : undefined;
    return { result: { kind: "cosigned", origin, size, lines, advanced }, next };
  });
}

/**
 * One signature line of each trusted key that signs `note`, when at least one does and the lines
 * naming a trusted key (same name and key ID) are, for each key, one line however often repeated
 * that verifies; null otherwise (tlog-witness: 403). Each distinct line is verified once, so a
 * body of many copies costs no more than one; two different lines of one key are refused unread.
 * Lines of other keys are ignored.
 */
function trustedLines(note: SignedNote, keys: readonly VerifierKey[]): NoteSignature[] | null {
  const lines: NoteSignature[] = [];
  for (const key of keys) {
    const named = note.signatures.filter((s) =>
      s.name === key.name && equalBytes(s.keyId, key.keyId)
    );
    if (named.length === 0) continue;
    const [line] = named;
    if (named.some((s) => !equalBytes(s.signature, line.signature))) return null;
    if (!verifyNoteSignature({ text: note.text, signatures: [line] }, key)) return null;
    lines.push(line);
  }
  return lines.length > 0 ? lines : null;
}
