// Browser-safe. C2SP signed notes (c2sp.org/signed-note@v1.0.0): a text ending in a newline, a blank
// line, then signature lines `— <key name> base64(key ID ‖ signature)`; verifier keys (vkeys); and
// the two signature types Ringvote uses: Ed25519 (0x01), checked with the strict RFC 8032 §5.1.7
// verification of ./head.ts, and timestamped cosignatures (0x04, c2sp.org/tlog-cosignature@v1.0.1).
import { ed25519 } from "@noble/curves/ed25519.js";
import {
  assertBytes,
  assertNonNegativeInteger,
  base64ToBytes,
  bytesToBase64,
  bytesToHex,
  concatBytes,
  equalBytes,
  u64be,
  utf8,
} from "./bytes.ts";
import { sha256 } from "./hash.ts";
import { verifyStrict } from "./head.ts";

/** Signature type byte of an Ed25519 note signature (signed-note §"Signatures"). */
export const ED25519_TYPE = 0x01;
/** Signature type byte of a timestamped Ed25519 cosignature (tlog-cosignature v1.0.1). */
export const COSIGNATURE_V1_TYPE = 0x04;
/** The signature types this module signs and verifies. */
export type SignatureType = typeof ED25519_TYPE | typeof COSIGNATURE_V1_TYPE;

/**
 * Most signature lines {@link parseNote} takes. The spec requires at least 16 to be accepted and
 * recommends a limit; 100 is Go's `sumdb/note`.
 */
export const MAX_NOTE_SIGNATURES = 100;

/** Header line of the message a cosignature/v1 signs (tlog-cosignature §"Signed message"). */
export const COSIGNATURE_V1_HEADER = "cosignature/v1";

/** One signature line: the key name, the 4-byte key ID and the signature bytes after it. */
export type NoteSignature = { name: string; keyId: Uint8Array; signature: Uint8Array };
/** A note: its text (ending in a newline) and its signature lines in order. */
export type SignedNote = { text: string; signatures: NoteSignature[] };
/** A verifier key: name, signature type, 32-byte Ed25519 public key and the key ID they make. */
export type VerifierKey = {
  name: string;
  type: SignatureType;
  publicKey: Uint8Array;
  keyId: Uint8Array;
};
/** What signs a note: a key name and the 32-byte RFC 8032 seed of its Ed25519 key. */
export type NoteSigner = { name: string; seed: Uint8Array };

const SIGNATURE_PREFIX = "\u2014 "; // em dash, space
const WHITE_SPACE = /\p{White_Space}/u; // Unicode spaces, as Go's unicode.IsSpace
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const KEY_ID_HEX = /^[0-9a-f]{8}$/;
const MAX_TIMESTAMP = 2n ** 63n - 1n;

/**
 * True when `text` holds an ASCII control character (below U+0020) other than the newline: no
 * signed note may (signed-note §"Format"). U+007F is not one of them.
 */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 && code !== 0x0a) return true;
  }
  return false;
}

/**
 * True when `name` may name a key: a non-empty, well-formed string with no Unicode space and no
 * `+` (signed-note §"Format"), nor an ASCII control character, which no note may hold.
 */
export function isKeyName(name: unknown): boolean {
  return typeof name === "string" && name !== "" && name.isWellFormed() &&
    !WHITE_SPACE.test(name) && !name.includes("+") && !hasControlCharacter(name);
}

/** `name` if {@link isKeyName}; TypeError for a non-string, RangeError otherwise. */
export function assertKeyName(name: unknown, label = "name"): string {
  if (typeof name !== "string") throw new TypeError(`${label} must be a string`);
  if (!isKeyName(name)) {
    throw new RangeError(
      `${label} must be non-empty, without spaces, "+" or control characters, got "${
        name.slice(0, 80)
      }"`,
    );
  }
  return name;
}

/**
 * Strict standard base64 (RFC 4648 §4): padded, no white space, and canonical (unused bits zero),
 * so one value has one encoding. TypeError for a non-string, RangeError otherwise.
 */
export function decodeBase64Strict(text: unknown, name = "base64"): Uint8Array {
  if (typeof text !== "string") throw new TypeError(`${name} must be a string`);
  if (!BASE64.test(text)) throw new RangeError(`${name} is not padded standard base64`);
  const bytes = base64ToBytes(text, name);
  if (bytesToBase64(bytes) !== text) throw new RangeError(`${name} is not canonical base64`);
  return bytes;
}

function assertSignatureType(type: unknown): SignatureType {
  if (typeof type !== "number") throw new TypeError("type must be a number");
  if (type !== ED25519_TYPE && type !== COSIGNATURE_V1_TYPE) {
    throw new RangeError(`type must be 0x01 (Ed25519) or 0x04 (cosignature/v1), got ${type}`);
  }
  return type;
}

/** Key ID `SHA-256(name ‖ 0x0A ‖ type ‖ publicKey)[:4]` (signed-note §"Signatures"). */
export function noteKeyId(name: string, type: SignatureType, publicKey: Uint8Array): Uint8Array {
  assertKeyName(name);
  assertSignatureType(type);
  assertBytes(publicKey, 32, "publicKey");
  return sha256(utf8(`${name}\n`), Uint8Array.of(type), publicKey).slice(0, 4);
}

/** The verifier key of `publicKey` (32 bytes) under `name` for signature `type`. */
export function verifierKey(name: string, type: SignatureType, publicKey: Uint8Array): VerifierKey {
  const keyId = noteKeyId(name, type, publicKey);
  return { name, type, publicKey: publicKey.slice(), keyId };
}

/** The verifier key of a signer's seed for signature `type`. */
export function signerKey(signer: NoteSigner, type: SignatureType): VerifierKey {
  const seed = assertBytes(signer?.seed, 32, "seed");
  return verifierKey(signer.name, type, ed25519.getPublicKey(seed));
}

/** The vkey text `<name>+<hex key ID>+<base64(type ‖ publicKey)>` (signed-note §"Verifier keys"). */
export function formatVerifierKey(key: Pick<VerifierKey, "name" | "type" | "publicKey">): string {
  const { name, type, publicKey, keyId } = verifierKey(key.name, key.type, key.publicKey);
  return `${name}+${bytesToHex(keyId)}+${
    bytesToBase64(concatBytes(Uint8Array.of(type), publicKey))
  }`;
}

/**
 * Parses a vkey. RangeError unless it is `<name>+<8 lowercase hex>+<base64>` with a valid name, a
 * type this module knows (0x01 or 0x04), a 32-byte key and the key ID that name, type and key make.
 */
export function parseVerifierKey(text: unknown): VerifierKey {
  if (typeof text !== "string") throw new TypeError("vkey must be a string");
  // The name holds no "+"; the base64 part may.
  const first = text.indexOf("+");
  const second = first < 0 ? -1 : text.indexOf("+", first + 1);
  if (second < 0) throw new RangeError("vkey must be <name>+<key ID>+<base64 key>");
  const name = assertKeyName(text.slice(0, first), "vkey name");
  const idHex = text.slice(first + 1, second);
  if (!KEY_ID_HEX.test(idHex)) throw new RangeError("vkey key ID must be 8 lowercase hex digits");
  const material = decodeBase64Strict(text.slice(second + 1), "vkey key");
  if (material.length !== 33) {
    throw new RangeError(`vkey key must be a type byte and 32 bytes, got ${material.length} bytes`);
  }
  const key = verifierKey(name, assertSignatureType(material[0]), material.slice(1));
  if (bytesToHex(key.keyId) !== idHex) {
    throw new RangeError(`vkey key ID ${idHex} is not the ID of its name and key`);
  }
  return key;
}

/**
 * `text` if it can be a note's text: well-formed, ending in a newline, with no ASCII control
 * character but the newline. TypeError for a non-string, RangeError otherwise.
 */
export function assertNoteText(text: unknown): string {
  if (typeof text !== "string") throw new TypeError("text must be a string");
  if (!text.isWellFormed()) throw new RangeError("text must be well-formed Unicode");
  if (!text.endsWith("\n")) throw new RangeError("text must end in a newline");
  if (hasControlCharacter(text)) {
    throw new RangeError("text must hold no control character but newline");
  }
  return text;
}

function assertSignatureLine(sig: NoteSignature, i: number): void {
  if (typeof sig !== "object" || sig === null) {
    throw new TypeError(`signatures[${i}] must be an object`);
  }
  assertKeyName(sig.name, `signatures[${i}].name`);
  assertBytes(sig.keyId, 4, `signatures[${i}].keyId`);
  assertBytes(sig.signature, undefined, `signatures[${i}].signature`);
  if (sig.signature.length === 0) throw new RangeError(`signatures[${i}].signature is empty`);
}

/**
 * The signed note: `text`, a blank line, then one line `— <name> base64(keyId ‖ signature)` per
 * signature, in order. Requires a valid text (see {@link assertNoteText}) and 1 to
 * {@link MAX_NOTE_SIGNATURES} signatures with valid names, 4-byte key IDs and non-empty
 * signatures; throws TypeError or RangeError otherwise.
 */
export function formatNote(note: SignedNote): string {
  if (typeof note !== "object" || note === null) throw new TypeError("note must be an object");
  const text = assertNoteText(note.text);
  const { signatures } = note;
  if (!Array.isArray(signatures)) throw new TypeError("signatures must be an array");
  if (signatures.length === 0 || signatures.length > MAX_NOTE_SIGNATURES) {
    throw new RangeError(`a note holds 1 to ${MAX_NOTE_SIGNATURES} signatures`);
  }
  signatures.forEach(assertSignatureLine);
  const lines = signatures.map(({ name, keyId, signature }) =>
    `${SIGNATURE_PREFIX}${name} ${bytesToBase64(concatBytes(keyId, signature))}\n`
  );
  return `${text}\n${lines.join("")}`;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Parses a signed note (signed-note §"Format"); checks no signature. The text is everything up to
 * and including the newline before the last blank line; the rest must be 1 to
 * {@link MAX_NOTE_SIGNATURES} lines `— <name> <base64>`, each ending in a newline, with a valid
 * key name and strict base64 of at least 5 bytes. Bytes are decoded as strict UTF-8. Throws
 * TypeError for a value of the wrong type, RangeError for a malformed note.
 */
export function parseNote(note: string | Uint8Array): SignedNote {
  let message: string;
  if (note instanceof Uint8Array) {
    try {
      message = strictUtf8.decode(note);
    } catch {
      throw new RangeError("note is not valid UTF-8");
    }
  } else if (typeof note === "string") {
    if (!note.isWellFormed()) throw new RangeError("note is not well-formed Unicode");
    message = note;
  } else {
    throw new TypeError("note must be a string or a Uint8Array");
  }
  if (hasControlCharacter(message)) throw new RangeError("note holds a control character");
  const split = message.lastIndexOf("\n\n");
  if (split < 0) throw new RangeError("note has no blank line before its signatures");
  const text = message.slice(0, split + 1);
  const block = message.slice(split + 2);
  if (!block.endsWith("\n")) throw new RangeError("note's signature lines must end in a newline");
  const lines = block.slice(0, -1).split("\n");
  if (lines.length > MAX_NOTE_SIGNATURES) {
    throw new RangeError(`note has over ${MAX_NOTE_SIGNATURES} signature lines`);
  }
  const signatures = lines.map((line, i) => parseSignatureLine(line, i));
  return { text, signatures };
}

function parseSignatureLine(line: string, i: number): NoteSignature {
  if (!line.startsWith(SIGNATURE_PREFIX)) {
    throw new RangeError(`signature line ${i + 1} does not start with an em dash and a space`);
  }
  const rest = line.slice(SIGNATURE_PREFIX.length);
  const space = rest.indexOf(" ");
  if (space < 0) throw new RangeError(`signature line ${i + 1} has no signature`);
  const name = assertKeyName(rest.slice(0, space), `signature line ${i + 1} name`);
  const bytes = decodeBase64Strict(rest.slice(space + 1), `signature line ${i + 1}`);
  if (bytes.length < 5) {
    throw new RangeError(`signature line ${i + 1} must hold a key ID and a signature`);
  }
  return { name, keyId: bytes.slice(0, 4), signature: bytes.slice(4) };
}

/** The signature lines of `note` that name `key`: same key name and same key ID. */
function linesOf(note: SignedNote, key: VerifierKey): NoteSignature[] {
  if (typeof note !== "object" || note === null) throw new TypeError("note must be an object");
  assertNoteText(note.text);
  if (!Array.isArray(note.signatures)) throw new TypeError("signatures must be an array");
  note.signatures.forEach(assertSignatureLine);
  return note.signatures.filter((s) => s.name === key.name && equalBytes(s.keyId, key.keyId));
}

function assertKey(key: VerifierKey, type: SignatureType): VerifierKey {
  if (typeof key !== "object" || key === null) throw new TypeError("key must be an object");
  if (key.type !== type) throw new RangeError(`key must be of type ${type}, got ${key.type}`);
  const expected = verifierKey(key.name, type, key.publicKey);
  if (!equalBytes(assertBytes(key.keyId, 4, "keyId"), expected.keyId)) {
    throw new RangeError("key.keyId is not the ID of its name, type and key");
  }
  return key;
}

/** The Ed25519 (type 0x01) signature line of `signer` over note `text`. */
export function signNote(text: string, signer: NoteSigner): NoteSignature {
  assertNoteText(text);
  const key = signerKey(signer, ED25519_TYPE);
  return {
    name: key.name,
    keyId: key.keyId,
    signature: ed25519.sign(utf8(text), signer.seed),
  };
}

/**
 * True when `note` carries a signature line by `key` (an Ed25519 vkey: same name, same key ID) and
 * every such line verifies over the note text with {@link verifyStrict}. False when there is none,
 * or one that fails (the spec's "reject the whole note"); lines of other keys are ignored. Throws
 * TypeError/RangeError for a malformed note or key.
 */
export function verifyNoteSignature(note: SignedNote, key: VerifierKey): boolean {
  assertKey(key, ED25519_TYPE);
  const lines = linesOf(note, key);
  const message = utf8(note.text);
  return lines.length > 0 &&
    lines.every(({ signature }) =>
      signature.length === 64 && verifyStrict(signature, message, key.publicKey)
    );
}

/**
 * The message a cosignature/v1 signs: `cosignature/v1\ntime <timestamp>\n` then the checkpoint
 * text, its final newline included (tlog-cosignature §"Signed message"). Requires a valid note
 * text and an integer timestamp in [0, 2^63 - 1].
 */
export function cosignatureMessage(text: string, timestamp: number | bigint): Uint8Array {
  assertNoteText(text);
  const t = typeof timestamp === "bigint"
    ? timestamp
    : BigInt(assertNonNegativeInteger(timestamp, "timestamp"));
  if (t < 0n || t > MAX_TIMESTAMP) throw new RangeError(`timestamp out of range: ${timestamp}`);
  return utf8(`${COSIGNATURE_V1_HEADER}\ntime ${t}\n${text}`);
}

/**
 * The cosignature/v1 line (type 0x04) of `signer` over checkpoint `text` at `timestamp` (POSIX
 * seconds): signature bytes `u64be(timestamp) ‖ Ed25519(cosignatureMessage(text, timestamp))`.
 */
export function signCosignature(
  text: string,
  signer: NoteSigner,
  timestamp: number,
): NoteSignature {
  const message = cosignatureMessage(text, timestamp);
  const key = signerKey(signer, COSIGNATURE_V1_TYPE);
  return {
    name: key.name,
    keyId: key.keyId,
    signature: concatBytes(u64be(timestamp), ed25519.sign(message, signer.seed)),
  };
}

/**
 * The timestamp (POSIX seconds) of `key`'s cosignature/v1 on `note`, when the note carries one
 * and every line naming `key` is a 72-byte timestamped signature that verifies with
 * {@link verifyStrict}; the first line's timestamp when several do. False when there is none, one
 * fails, or a timestamp is over 2^53 - 1 (a time in the future, which the spec lets verifiers
 * refuse). Throws TypeError/RangeError for a malformed note or key.
 */
export function verifyCosignature(
  note: SignedNote,
  key: VerifierKey,
): { timestamp: number } | false {
  assertKey(key, COSIGNATURE_V1_TYPE);
  const lines = linesOf(note, key);
  if (lines.length === 0) return false;
  let first: number | null = null;
  for (const { signature } of lines) {
    if (signature.length !== 72) return false;
    let t = 0n;
    for (const byte of signature.subarray(0, 8)) t = (t << 8n) | BigInt(byte);
    if (t > BigInt(Number.MAX_SAFE_INTEGER)) return false;
    const message = cosignatureMessage(note.text, t);
    if (!verifyStrict(signature.slice(8), message, key.publicKey)) return false;
    first ??= Number(t);
  }
  return { timestamp: first! };
}
