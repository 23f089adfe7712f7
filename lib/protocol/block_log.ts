// Browser-safe. The log of a ledger (protocol §4.10): a transparency log in the sense of RFC 9162
// whose entry i is the 32-byte hash of block i, genesis included, so its tree size is the head
// height + 1; and the rule that names its origin when `LOG_ORIGIN` does not.
import { assertNonNegativeInteger, hexToBytes } from "./bytes.ts";
import { hashLeaf } from "./merkle.ts";

/** What every derived origin starts with; the first 16 hex digits of the ledger's key follow. */
export const DERIVED_ORIGIN_PREFIX = "ringvote.local/log/";

/**
 * The origin of a ledger whose operator named none: `ringvote.local/log/` then the first 16 hex
 * digits of its head-signing public key (hex, 32 bytes). Stable while the key is, and different
 * for every ledger, since each has a key of its own.
 */
export function derivedOrigin(serverKey: string): string {
  hexToBytes(serverKey, 32, "serverKey");
  return `${DERIVED_ORIGIN_PREFIX}${serverKey.slice(0, 16)}`;
}

/** The log's leaf hash of a block: `hashLeaf(hash)`, over the block hash's 32 bytes (hex in). */
export function logLeafHash(blockHash: string): Uint8Array {
  return hashLeaf(hexToBytes(blockHash, 32, "blockHash"));
}

/** The log's tree size when the head block is at `height`: every block, genesis included. */
export function logSize(height: number): number {
  return assertNonNegativeInteger(height, "height") + 1;
}
