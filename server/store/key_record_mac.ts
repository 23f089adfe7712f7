/**
 * The MAC that binds a key record's precomputation to its key (protocol §5.2).
 * @module
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { assertBytes, utf8 } from "../../lib/protocol/bytes.ts";
import {
  isStoredPrecomputation,
  type KeyPrecomputation,
  PRECOMPUTATION_BYTES,
} from "../../lib/protocol/key_precomputation.ts";

//
// Why a MAC, and not a check of the stored combs against P and a recomputed Hp(P): that check
// needs Hp(P) and the 204 doublings of the combs' rows, about 0.8 ms per record, so more than a
// tenth of a ring-8 verification for each member read from KV; HMAC-SHA-256 over the record's 4 KB
// takes 12 to 20 µs natively (node:crypto), 35 to 45 µs with noble's JavaScript HMAC. With every
// vote reading its 8 records from KV (a directory beyond the memory budgets),
// bench/record_binding.ts measures ingest at about 1.04 times its time without the check natively,
// 1.06 with noble's; with records held in memory, 1.00. The secret is derived from the server
// seed, so the MAC guards against records altered, corrupted or copied from another key or
// database, not against a party that can read that seed and write KV, who could sign heads as
// well (protocol §7).

/** Domain label of the MAC binding a stored precomputation to its key. */
export const KEY_RECORD_MAC_LABEL = "ringvote/v1/key-record";
/** Domain label deriving the key records' MAC secret from the server seed. */
export const KEY_RECORD_SECRET_LABEL = "ringvote/v1/key-record-secret";
/** Bytes of a key record's MAC, and of its secret. */
export const KEY_RECORD_MAC_BYTES = 32;

const macLabel = utf8(KEY_RECORD_MAC_LABEL);

/**
 * The secret of key-record MACs: HMAC-SHA-256(serverSeed, utf8("ringvote/v1/key-record-secret")).
 * Derived, so nothing new is stored, and under its own label, so it is never the seed itself.
 * RangeError unless `serverSeed` is 32 bytes.
 */
export function keyRecordSecret(serverSeed: Uint8Array): Uint8Array {
  assertBytes(serverSeed, 32, "serverSeed");
  return new Uint8Array(
    createHmac("sha256", serverSeed).update(utf8(KEY_RECORD_SECRET_LABEL)).digest(),
  );
}

/**
 * HMAC-SHA-256(secret, utf8("ringvote/v1/key-record") ‖ key ‖ pre): binds every byte of a stored
 * precomputation to the 32-byte key it is stored for (each part has a fixed length).
 * TypeError/RangeError for a part of the wrong type or length.
 */
export function keyRecordMac(
  pre: KeyPrecomputation,
  { key, secret }: { key: Uint8Array; secret: Uint8Array },
): Uint8Array {
  assertBytes(pre, PRECOMPUTATION_BYTES, "pre");
  assertBytes(key, 32, "key");
  assertBytes(secret, KEY_RECORD_MAC_BYTES, "secret");
  return new Uint8Array(
    createHmac("sha256", secret).update(macLabel).update(key).update(pre).digest(),
  );
}

/**
 * True when `record` holds a precomputation in the current form and its {@link keyRecordMac} for
 * `key` under `secret`: only then may its combs be used for `key`. False for a record altered
 * anywhere, copied from another key or another server, or written without a MAC (before records
 * carried one). The MACs are compared in constant time. Throws only for a `key` or `secret` that
 * is not 32 bytes.
 */
export function isBoundRecord(
  record: { pre?: unknown; mac?: unknown },
  { key, secret }: { key: Uint8Array; secret: Uint8Array },
): record is { pre: KeyPrecomputation; mac: Uint8Array } {
  assertBytes(key, 32, "key");
  assertBytes(secret, KEY_RECORD_MAC_BYTES, "secret");
  const { pre, mac } = record;
  if (!isStoredPrecomputation(pre)) return false;
  if (!(mac instanceof Uint8Array) || mac.length !== KEY_RECORD_MAC_BYTES) return false;
  return timingSafeEqual(keyRecordMac(pre, { key, secret }), mac);
}
