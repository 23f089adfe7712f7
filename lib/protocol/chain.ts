// Browser-safe. The block chain of protocol §3: block hash, genesis block and the link between a
// block and its predecessor. Hash fields are 64 lowercase hex characters; malformed input throws.
import { assertNonNegativeInteger, bytesToHex, concatBytes, hexToBytes, u64be } from "./bytes.ts";
import { sha256 } from "./hash.ts";
import { emptyRoot } from "./merkle.ts";
import type { BlockRecord } from "./schemas.ts";

/** The fields a block hash commits to. */
export type BlockHeader = Pick<
  BlockRecord,
  "merkle_root" | "timestamp" | "height" | "prev_hash" | "size"
>;

/** `prev_hash` of the genesis block: 32 zero bytes. */
export const GENESIS_PREV_HASH = "0".repeat(64);

/**
 * The genesis rule (protocol §3): the fields every genesis block has, whatever its timestamp —
 * height 0, size 0, the empty tree's root, a zero `prev_hash`.
 */
const GENESIS_FIELDS = {
  height: 0,
  size: 0,
  merkle_root: bytesToHex(emptyRoot()),
  prev_hash: GENESIS_PREV_HASH,
} as const;

function assertObject(value: unknown, name: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null) throw new TypeError(`${name} must be an object`);
  return value as Record<string, unknown>;
}

/**
 * Block hash, hex of `SHA-256(merkle_root ‖ u64be(timestamp) ‖ u64be(height) ‖ prev_hash ‖
 * u64be(size))` (protocol §3). Requires 32-byte hex roots and hashes and integers in
 * [0, 2^53); throws TypeError or RangeError otherwise.
 */
export function blockHash(header: BlockHeader): string {
  const h = assertObject(header, "block");
  const root = hexToBytes(h.merkle_root, 32, "merkle_root");
  const timestamp = assertNonNegativeInteger(h.timestamp, "timestamp");
  const height = assertNonNegativeInteger(h.height, "height");
  const prev = hexToBytes(h.prev_hash, 32, "prev_hash");
  const size = assertNonNegativeInteger(h.size, "size");
  return bytesToHex(
    sha256(concatBytes(root, u64be(timestamp), u64be(height), prev, u64be(size))),
  );
}

/**
 * The genesis block closed at `timestamp`: height 0, size 0, empty-tree root, zero prev_hash — or,
 * for a carded round (protocol §2.11), `prevHash`, its card set's sha256 (hex).
 */
export function genesisBlock(timestamp: number, prevHash = GENESIS_PREV_HASH): BlockRecord {
  const header = {
    ...GENESIS_FIELDS,
    prev_hash: hexToBytes(prevHash, 32, "prev_hash") && prevHash,
    timestamp: assertNonNegativeInteger(timestamp, "timestamp"),
  };
  return { ...header, hash: blockHash(header) };
}

/**
 * True when `block` has the genesis fields of protocol §3 (any timestamp), with `prevHash` (a
 * carded round's: its card set's sha256) in place of the zero `prev_hash` when given. Its hash is not
 * compared here: {@link verifyBlockHash} says whether it matches the fields. Never throws.
 */
export function isGenesis(block: BlockHeader, prevHash = GENESIS_PREV_HASH): boolean {
  const fields = Object.entries({ ...GENESIS_FIELDS, prev_hash: prevHash }) as [
    keyof typeof GENESIS_FIELDS,
    unknown,
  ][];
  return fields.every(([name, value]) => block[name] === value);
}

/** True when `block.hash` equals {@link blockHash} of its fields; throws for a malformed block. */
export function verifyBlockHash(block: BlockRecord): boolean {
  const b = assertObject(block, "block");
  const hash = hexToBytes(b.hash, 32, "hash");
  return bytesToHex(hash) === blockHash(block);
}

/**
 * True when `block` follows `prev`: `block.height === prev.height + 1`,
 * `block.prev_hash === prev.hash` and `block.hash === blockHash(block)`. Throws TypeError or
 * RangeError for a malformed block; a well-formed block that does not link is false.
 */
export function checkLink(block: BlockRecord, prev: BlockRecord): boolean {
  const b = assertObject(block, "block");
  const p = assertObject(prev, "prev");
  assertNonNegativeInteger(p.height, "prev.height");
  hexToBytes(p.hash, 32, "prev.hash");
  const hashOk = verifyBlockHash(block);
  return b.height === (p.height as number) + 1 && b.prev_hash === p.hash && hashOk;
}
