// Browser-safe. The two hash functions of protocol §2–§3, over concatenated parts.
import { sha256 as nobleSha256, sha512 as nobleSha512 } from "@noble/hashes/sha2.js";
import { concatBytes } from "./bytes.ts";

/** SHA-256 of the concatenation of `parts` (Merkle nodes and block hashes, protocol §3). */
export function sha256(...parts: Uint8Array[]): Uint8Array {
  return nobleSha256(parts.length === 1 ? parts[0] : concatBytes(...parts));
}

/** SHA-512 of the concatenation of `parts` (key expansion and Hs, protocol §2). */
export function sha512(...parts: Uint8Array[]): Uint8Array {
  return nobleSha512(parts.length === 1 ? parts[0] : concatBytes(...parts));
}
