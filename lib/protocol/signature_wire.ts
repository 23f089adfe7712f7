/**
 * Browser-safe. The wire form of a ring signature (protocol §2): JSON.stringify({c0, r, I, ring})
 * in lowercase hex, and its strict parse, so that one signature has one wire form.
 * @module
 */
import { bytesToHex, hexToBytes } from "./bytes.ts";
import { MAX_RING, type RingSignature } from "./ring_signature.ts";

/** The wire form of protocol §2: JSON.stringify({c0, r, I, ring}), lowercase hex. */
export function encodeSignature(sig: RingSignature): string {
  return JSON.stringify({
    c0: bytesToHex(sig.c0),
    r: sig.r.map(bytesToHex),
    I: bytesToHex(sig.tag),
    ring: sig.ring.map(bytesToHex),
  });
}

function hexList(value: unknown, name: string): Uint8Array[] {
  if (!Array.isArray(value)) throw new TypeError(`${name} must be an array`);
  if (value.length > MAX_RING) throw new RangeError(`${name} has more than ${MAX_RING} entries`);
  return value.map((v, i) => hexToBytes(v, 32, `${name}[${i}]`));
}

/**
 * Parses the wire form. Throws SyntaxError for invalid JSON, TypeError/RangeError for a wrong
 * shape, a field that is not 32 bytes of lowercase hex, or a string that is not exactly the
 * canonical encoding (so one signature has one wire form, and one vote hash).
 */
export function decodeSignature(json: string): RingSignature {
  if (typeof json !== "string") throw new TypeError("signature must be a string");
  const parsed: unknown = JSON.parse(json);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new TypeError("signature must be a JSON object");
  }
  const o = parsed as Record<string, unknown>;
  const sig: RingSignature = {
    c0: hexToBytes(o.c0, 32, "c0"),
    r: hexList(o.r, "r"),
    tag: hexToBytes(o.I, 32, "I"),
    ring: hexList(o.ring, "ring"),
  };
  if (sig.r.length !== sig.ring.length) {
    throw new RangeError("r and ring must have the same length");
  }
  if (encodeSignature(sig) !== json) {
    throw new RangeError("signature must be exactly JSON.stringify({c0, r, I, ring})");
  }
  return sig;
}
