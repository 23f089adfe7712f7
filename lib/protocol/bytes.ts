// Browser-safe. Byte encodings used on the wire and in hashes (protocol §2–§3): lowercase hex,
// base64, UTF-8 and big-endian integers. Inputs are checked by type and length first.

const HEX = /^(?:[0-9a-f]{2})*$/;
/** 32 bytes as 64 lowercase hex characters: public keys, tags, scalars, hashes on the wire. */
export const HEX32_PATTERN = /^[0-9a-f]{64}$/;
const encoder = new TextEncoder();

/** Throws TypeError unless `value` is a Uint8Array, RangeError unless it has `length` bytes. */
export function assertBytes(value: unknown, length?: number, name = "bytes"): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new TypeError(`${name} must be a Uint8Array`);
  if (length !== undefined && value.length !== length) {
    throw new RangeError(`${name} must be ${length} bytes, got ${value.length}`);
  }
  return value;
}

/**
 * Throws TypeError unless `value` is a number, RangeError unless it is a safe integer >= 0
 * (heights, sizes, timestamps, leaf indexes).
 */
export function assertNonNegativeInteger(value: unknown, name: string): number {
  if (typeof value !== "number") throw new TypeError(`${name} must be a number`);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  }
  return value;
}

/** Lowercase hex of `bytes`. */
export function bytesToHex(bytes: Uint8Array): string {
  assertBytes(bytes);
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

/** Decodes strict lowercase hex; throws TypeError for a non-string, RangeError for bad hex or length. */
export function hexToBytes(hex: unknown, length?: number, name = "hex"): Uint8Array {
  if (typeof hex !== "string") throw new TypeError(`${name} must be a string`);
  if (!HEX.test(hex)) {
    throw new RangeError(`${name} must be lowercase hex, got "${hex.slice(0, 80)}"`);
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return assertBytes(out, length, name);
}

/** Standard base64 (with padding) of `bytes`. */
export function bytesToBase64(bytes: Uint8Array): string {
  assertBytes(bytes);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Decodes standard base64; throws RangeError when `text` is not base64. */
export function base64ToBytes(text: unknown, name = "base64"): Uint8Array {
  if (typeof text !== "string") throw new TypeError(`${name} must be a string`);
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    throw new RangeError(`${name} is not base64`);
  }
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array {
  if (typeof text !== "string") throw new TypeError("text must be a string");
  return encoder.encode(text);
}

/**
 * UTF-8 bytes of `text`, which must be well-formed Unicode: a lone surrogate would be encoded as
 * U+FFFD, so several strings would share one encoding (protocol §4). Throws TypeError for a
 * non-string and RangeError, naming `name`, for a lone surrogate.
 */
export function utf8WellFormed(text: string, name = "text"): Uint8Array {
  if (typeof text !== "string") throw new TypeError(`${name} must be a string`);
  if (!text.isWellFormed()) {
    throw new RangeError(`${name} is not well-formed Unicode: it holds a lone surrogate`);
  }
  return encoder.encode(text);
}

/** Concatenation of `parts`. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += assertBytes(p).length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** 4-byte big-endian encoding; requires 0 <= n < 2^32. */
export function u32be(n: number): Uint8Array {
  return unsignedBigEndian(n, 4);
}

/** 8-byte big-endian encoding; requires 0 <= n < 2^64 (a safe integer when a number). */
export function u64be(n: number | bigint): Uint8Array {
  return unsignedBigEndian(n, 8);
}

function unsignedBigEndian(n: number | bigint, width: 4 | 8): Uint8Array {
  if (typeof n !== "number" && typeof n !== "bigint") {
    throw new TypeError(`u${8 * width} must be a number or a bigint`);
  }
  let v = typeof n === "number" && Number.isSafeInteger(n) ? BigInt(n) : n;
  if (typeof v !== "bigint" || v < 0n || v >= 1n << BigInt(8 * width)) {
    throw new RangeError(`u${8 * width} out of range: ${n}`);
  }
  const out = new Uint8Array(width);
  for (let i = width - 1; i >= 0; i--, v >>= 8n) out[i] = Number(v & 0xffn);
  return out;
}

/** True when `a` and `b` hold the same bytes. Not constant-time: for public values only. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Base64url without padding (RFC 4648 §5) of `bytes`: card keys and signatures on the wire. */
export function bytesToBase64url(bytes: Uint8Array): string {
  return bytesToBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Decodes canonical base64url without padding: TypeError for a non-string, RangeError for other
 * characters, padding, a length that is not `length` bytes, or unused bits that are not zero (so
 * one value has exactly one text).
 */
export function base64urlToBytes(text: unknown, length?: number, name = "base64url"): Uint8Array {
  if (typeof text !== "string") throw new TypeError(`${name} must be a string`);
  if (!BASE64URL.test(text) || text.length % 4 === 1) {
    throw new RangeError(`${name} is not base64url without padding`);
  }
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") +
    "==".slice(0, (4 - text.length % 4) % 4);
  const bytes = base64ToBytes(padded, name);
  if (bytesToBase64url(bytes) !== text) throw new RangeError(`${name} is not canonical base64url`);
  return assertBytes(bytes, length, name);
}
