// Browser-safe. Transparency-log checkpoints (c2sp.org/tlog-checkpoint@v1.0.0): the note text
// `<origin>\n<tree size>\n<base64 root>\n`, then optional extension lines, signed as a C2SP note by
// the log's key under the origin's name (./note.ts).
import { assertBytes, assertNonNegativeInteger, bytesToBase64 } from "./bytes.ts";
import { HASH_SIZE } from "./merkle.ts";
import {
  assertKeyName,
  decodeBase64Strict,
  formatNote,
  hasControlCharacter,
  isKeyName,
  type NoteSignature,
  type NoteSigner,
  parseNote,
  signNote,
  type VerifierKey,
  verifyNoteSignature,
} from "./note.ts";

/** A checkpoint: the log's origin, its tree size and root, and any extension lines. */
export type Checkpoint = {
  origin: string;
  size: number;
  root: Uint8Array;
  extensions?: string[];
};

const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/**
 * True when `origin` is one this project signs under: a key name (non-empty, no Unicode space, no
 * `+`, no control character), since the log's key is named after its origin. Parsing accepts any
 * non-empty origin, as the spec tells clients not to assume this form.
 */
export function isOrigin(origin: unknown): boolean {
  return isKeyName(origin);
}

/**
 * The checkpoint body `<origin>\n<size>\n<base64(root)>\n` followed by each extension line and a
 * newline. Requires an origin that is a key name, a size in [0, 2^53), a 32-byte root and
 * non-empty extension lines without control characters; throws TypeError or RangeError otherwise.
 */
export function formatCheckpoint(checkpoint: Checkpoint): string {
  if (typeof checkpoint !== "object" || checkpoint === null) {
    throw new TypeError("checkpoint must be an object");
  }
  const origin = assertKeyName(checkpoint.origin, "origin");
  const size = assertNonNegativeInteger(checkpoint.size, "size");
  const root = assertBytes(checkpoint.root, HASH_SIZE, "root");
  const extensions = checkpoint.extensions ?? [];
  if (!Array.isArray(extensions)) throw new TypeError("extensions must be an array");
  for (const [i, line] of extensions.entries()) {
    if (typeof line !== "string") throw new TypeError(`extensions[${i}] must be a string`);
    if (line === "" || line.includes("\n") || hasControlCharacter(line) || !line.isWellFormed()) {
      throw new RangeError(`extensions[${i}] must be a non-empty line without control characters`);
    }
  }
  return [origin, String(size), bytesToBase64(root), ...extensions].map((l) => `${l}\n`).join("");
}

/**
 * Parses a checkpoint body (tlog-checkpoint §"Note text"): at least three non-empty lines, each
 * ending in a newline — a non-empty origin, the tree size in decimal without leading zeroes (at
 * most 2^53 - 1 here), the root as strict base64 of 32 bytes — then any non-empty extension lines,
 * returned as they are. Throws TypeError for a non-string and RangeError for a malformed body.
 */
export function parseCheckpoint(text: string): Checkpoint & { extensions: string[] } {
  if (typeof text !== "string") throw new TypeError("checkpoint must be a string");
  if (!text.isWellFormed()) throw new RangeError("checkpoint is not well-formed Unicode");
  if (!text.endsWith("\n")) throw new RangeError("checkpoint must end in a newline");
  if (hasControlCharacter(text)) throw new RangeError("checkpoint holds a control character");
  const lines = text.slice(0, -1).split("\n");
  if (lines.length < 3) throw new RangeError("checkpoint must have an origin, a size and a root");
  const empty = lines.indexOf("");
  if (empty >= 0) throw new RangeError(`checkpoint line ${empty + 1} is empty`);
  const [origin, sizeText, rootText, ...extensions] = lines;
  if (!DECIMAL.test(sizeText)) {
    throw new RangeError(`checkpoint size must be a decimal without leading zeroes`);
  }
  const size = Number(sizeText);
  if (!Number.isSafeInteger(size)) throw new RangeError("checkpoint size is over 2^53 - 1");
  const root = decodeBase64Strict(rootText, "checkpoint root");
  if (root.length !== HASH_SIZE) {
    throw new RangeError(`checkpoint root must be ${HASH_SIZE} bytes, got ${root.length}`);
  }
  return { origin, size, root, extensions };
}

/**
 * The signed note of `checkpoint`: its body signed with Ed25519 by `seed`'s key under the origin's
 * name, then any `cosignatures` (witness lines over the same body) after it.
 */
export function signCheckpoint(
  checkpoint: Checkpoint,
  seed: Uint8Array,
  { cosignatures = [] }: { cosignatures?: NoteSignature[] } = {},
): string {
  const text = formatCheckpoint(checkpoint);
  const signer: NoteSigner = { name: checkpoint.origin, seed };
  return formatNote({ text, signatures: [signNote(text, signer), ...cosignatures] });
}

/**
 * The checkpoint a signed note carries, when it is signed by the log's `key` (an Ed25519 vkey;
 * see {@link verifyNoteSignature}) and its origin is the key's name; false otherwise. Throws
 * RangeError for a malformed note or checkpoint body, TypeError/RangeError for a malformed key.
 */
export function openCheckpoint(
  note: string | Uint8Array,
  key: VerifierKey,
): (Checkpoint & { extensions: string[] }) | false {
  const parsed = parseNote(note);
  const checkpoint = parseCheckpoint(parsed.text);
  if (!verifyNoteSignature(parsed, key)) return false;
  return checkpoint.origin === key.name ? checkpoint : false;
}
