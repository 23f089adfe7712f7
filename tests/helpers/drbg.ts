// Deterministic byte source for reproducible signatures in tests and frozen vectors:
// block i is SHA-512(utf8(label) ‖ u32be(i)), consumed in order.
import { concatBytes, u32be, utf8 } from "../../lib/protocol/bytes.ts";
import { sha512 } from "../../lib/protocol/hash.ts";

/** A RandomBytes source that yields the same stream for the same label. */
export function drbg(label: string): (length: number) => Uint8Array {
  let counter = 0;
  let pool: Uint8Array = new Uint8Array(0);
  return (length) => {
    while (pool.length < length) pool = concatBytes(pool, sha512(utf8(label), u32be(counter++)));
    const out = pool.slice(0, length);
    pool = pool.slice(length);
    return out;
  };
}
