/**
 * Browser-safe. Binary HTTP (RFC 9292), known-length messages only: requests (framing indicator 0)
 * and responses (framing indicator 1), with padding (§3.8) to a multiple of {@link PAD_BLOCK}
 * bytes. Decoding is strict: indeterminate-length framing, bounded lengths exceeded, upper-case
 * field names or non-zero padding are refused with a RangeError.
 * @module
 */

/** Binary HTTP messages are padded to a multiple of this many bytes (protocol §4.11). */
export const PAD_BLOCK = 1024;
/** Largest Binary HTTP request decoded, bytes: the API's 64 KiB body and its framing. */
export const MAX_MESSAGE_BYTES = 128 * 1024;
/** Largest Binary HTTP response decoded, bytes: a page of votes of the largest rings fits. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** Largest method, scheme, authority or path, bytes. */
export const MAX_CONTROL_BYTES = 2048;
/** Most field lines of one field section. */
export const MAX_FIELDS = 64;

/** One field line: a lower-case name and its value. */
export type Field = readonly [name: string, value: string];

/** A request: its control data (RFC 9292 §3.4), header fields and content. */
export type BinaryRequest = {
  method: string;
  scheme: string;
  authority: string;
  path: string;
  headers: readonly Field[];
  content: Uint8Array;
};

/** A final response: its status (200–599), header fields and content. */
export type BinaryResponse = { status: number; headers: readonly Field[]; content: Uint8Array };

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Bytes of the RFC 9000 §16 variable-length integer `n`. */
function varintSize(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${n} is not a varint`);
  return n < 0x40 ? 1 : n < 0x4000 ? 2 : n < 0x40000000 ? 4 : 8;
}

/** Appends bytes to a growing list of parts. */
class Writer {
  readonly parts: Uint8Array[] = [];
  size = 0;
  varint(n: number): void {
    const bytes = new Uint8Array(varintSize(n));
    const view = new DataView(bytes.buffer);
    if (bytes.length === 1) view.setUint8(0, n);
    else if (bytes.length === 2) view.setUint16(0, n | 0x4000);
    else if (bytes.length === 4) view.setUint32(0, (n | 0x80000000) >>> 0);
    else view.setBigUint64(0, BigInt(n) | (0xc0n << 56n));
    this.raw(bytes);
  }
  raw(bytes: Uint8Array): void {
    this.parts.push(bytes);
    this.size += bytes.length;
  }
  prefixed(bytes: Uint8Array): void {
    this.varint(bytes.length);
    this.raw(bytes);
  }
}

/** A field section: its length, then each line as name and value, each length-prefixed. */
function fieldSection(fields: readonly Field[]): Uint8Array {
  const w = new Writer();
  for (const [name, value] of fields) {
    if (name === "" || name !== name.toLowerCase()) {
      throw new RangeError(`field name "${name}" must be non-empty lower case`);
    }
    w.prefixed(encoder.encode(name));
    w.prefixed(encoder.encode(value));
  }
  return join(w.parts, w.size);
}

function join(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * The sections after the control data: header section, content, trailer section (always empty).
 * Trailing empty sections are left out (§3.8 truncation): the zeros of the padding read as them.
 */
function sections(w: Writer, headers: readonly Field[], content: Uint8Array): void {
  const head = fieldSection(headers);
  if (head.length === 0 && content.length === 0) return;
  w.prefixed(head);
  if (content.length > 0) w.prefixed(content);
}

/**
 * `message` followed by zeros (§3.8) up to a multiple of `block` bytes, and to at least
 * `minLength` (a vote is padded to its round's one length, protocol §4.11).
 */
export function pad(message: Uint8Array, block = PAD_BLOCK, minLength = 0): Uint8Array {
  const length = Math.ceil(Math.max(message.length, minLength, 1) / block) * block;
  if (length === message.length) return message;
  const out = new Uint8Array(length);
  out.set(message);
  return out;
}

/** The known-length encoding of `request` (framing indicator 0), unpadded. */
export function encodeRequest(request: BinaryRequest): Uint8Array {
  const w = new Writer();
  w.varint(0);
  for (const part of [request.method, request.scheme, request.authority, request.path]) {
    w.prefixed(encoder.encode(part));
  }
  sections(w, request.headers, request.content);
  return join(w.parts, w.size);
}

/** The known-length encoding of `response` (framing indicator 1), unpadded. */
export function encodeResponse(response: BinaryResponse): Uint8Array {
  const { status } = response;
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    throw new RangeError(`final status ${status} is outside 200–599`);
  }
  const w = new Writer();
  w.varint(1);
  w.varint(status);
  sections(w, response.headers, response.content);
  return join(w.parts, w.size);
}

/** Reads a message front to back; every read is bounded by what is left. */
class Reader {
  at = 0;
  constructor(readonly bytes: Uint8Array) {}
  get done(): boolean {
    return this.at === this.bytes.length;
  }
  varint(): number {
    const first = this.take(1)[0];
    const size = 1 << (first >> 6);
    let n = first & 0x3f;
    for (const byte of this.take(size - 1)) n = n * 256 + byte;
    if (!Number.isSafeInteger(n)) throw new RangeError("varint is too large");
    return n;
  }
  take(n: number): Uint8Array {
    if (n > this.bytes.length - this.at) throw new RangeError("message ends inside a field");
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  prefixed(max: number, what: string): Uint8Array {
    const length = this.varint();
    if (length > max) throw new RangeError(`${what} is longer than ${max} bytes`);
    return this.take(length);
  }
  text(max: number, what: string): string {
    try {
      return decoder.decode(this.prefixed(max, what));
    } catch (error) {
      if (error instanceof RangeError) throw error;
      throw new RangeError(`${what} is not UTF-8`);
    }
  }
}

function fields(bytes: Uint8Array): Field[] {
  const r = new Reader(bytes);
  const out: Field[] = [];
  while (!r.done) {
    if (out.length === MAX_FIELDS) throw new RangeError(`more than ${MAX_FIELDS} field lines`);
    const name = r.text(MAX_CONTROL_BYTES, "field name");
    if (name === "" || name !== name.toLowerCase()) {
      throw new RangeError("field name must be non-empty lower case");
    }
    out.push([name, r.text(MAX_CONTROL_BYTES, "field value")]);
  }
  return out;
}

/**
 * Header section, content and trailer section, each possibly truncated (§3.8), then padding that
 * must be all zeros; trailers must be empty (none is ever sent).
 */
function readSections(r: Reader, max: number): { headers: Field[]; content: Uint8Array } {
  const headers = r.done ? [] : fields(r.prefixed(MAX_CONTROL_BYTES * 4, "header section"));
  const content = r.done ? new Uint8Array(0) : r.prefixed(max, "content").slice();
  const trailers = r.done ? [] : fields(r.prefixed(MAX_CONTROL_BYTES * 4, "trailer section"));
  if (trailers.length > 0) throw new RangeError("trailer fields are not accepted");
  for (let i = r.at; i < r.bytes.length; i++) {
    if (r.bytes[i] !== 0) throw new RangeError("padding holds a non-zero byte");
  }
  return { headers, content };
}

function framing(r: Reader, expected: 0 | 1, max: number): void {
  if (r.bytes.length > max) throw new RangeError(`message is longer than ${max} bytes`);
  const indicator = r.varint();
  if (indicator !== expected) {
    throw new RangeError(
      indicator === expected + 2
        ? "indeterminate-length messages are not accepted"
        : `framing indicator ${indicator} is not ${expected}`,
    );
  }
}

/** Decodes a known-length request, padding included. RangeError for anything else. */
export function decodeRequest(bytes: Uint8Array): BinaryRequest {
  const r = new Reader(bytes);
  framing(r, 0, MAX_MESSAGE_BYTES);
  const method = r.text(MAX_CONTROL_BYTES, "method");
  const scheme = r.text(MAX_CONTROL_BYTES, "scheme");
  const authority = r.text(MAX_CONTROL_BYTES, "authority");
  const path = r.text(MAX_CONTROL_BYTES, "path");
  if (!/^[A-Z]+$/.test(method)) throw new RangeError("method must be upper-case letters");
  return { method, scheme, authority, path, ...readSections(r, MAX_MESSAGE_BYTES) };
}

/**
 * Decodes a known-length response, padding included; informational (1xx) responses before it are
 * refused, none is ever sent. RangeError for anything else.
 */
export function decodeResponse(bytes: Uint8Array): BinaryResponse {
  const r = new Reader(bytes);
  framing(r, 1, MAX_RESPONSE_BYTES);
  const status = r.varint();
  if (status < 200 || status > 599) throw new RangeError(`status ${status} is not final`);
  return { status, ...readSections(r, MAX_RESPONSE_BYTES) };
}
