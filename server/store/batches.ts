/**
 * Batched commits within the KV limits: the size of a commit as KV counts it, and idempotent sets
 * spread over as few commits as those limits allow (the sealer's proofs, a lab reset's deletions).
 * @module
 */
import { utf8 } from "../../lib/protocol/bytes.ts";
import type { LeafRecord, VoteIndex } from "./layout.ts";
import { backoff, MAX_ATTEMPTS, tryCommit } from "./kv_calls.ts";

/** Default most mutations per batched commit (KV allows 1000). */
export const BATCH_MAX_MUTATIONS = 900;
/**
 * Default most bytes per batched commit as KV counts them, {@link entryBytes} (KV allows 800 KiB).
 */
export const BATCH_MAX_BYTES = 700_000;
/** Default most bytes of the keys one batched commit sets, {@link keyBytes} (KV allows 80 KiB). */
export const BATCH_MAX_KEY_BYTES = 72_000;
/** Sets `entries` in one commit, retrying while the database is locked (sets are idempotent). */
async function commitIdempotent(
  kv: Deno.Kv,
  entries: [Deno.KvKey, unknown][],
): Promise<void> {
  for (let attempt = 0;; attempt++) {
    const op = kv.atomic();
    for (const [key, value] of entries) op.set(key, value);
    const res = await tryCommit(op);
    if (res?.ok) return;
    if (res !== null || attempt >= MAX_ATTEMPTS) {
      throw new Error("A commit of idempotent sets failed");
    }
    await backoff(attempt);
  }
}

// ---- the size of a commit, as KV counts it ----
//
// KV refuses a commit whose keys and values come to more than 800 KiB, counting each key it sets
// twice (once among the commit's keys, once with its value) and each value as stored: V8's
// serialization of it. It also refuses more than 80 KiB of keys set in one commit.

/**
 * The bytes of `key` in KV's encoding (the FoundationDB tuple layer): per part a type byte, then a
 * string's UTF-8 or a byte array's bytes with each 0x00 escaped by one more byte and a 0x00 after
 * them, a number's 8 bytes, a bigint's magnitude (with a length byte beyond 8 bytes), nothing more
 * for a boolean.
 */
export function keyBytes(key: Deno.KvKey): number {
  let bytes = 0;
  for (const part of key) {
    if (typeof part === "string" || part instanceof Uint8Array) {
      const raw = typeof part === "string" ? utf8(part) : part;
      bytes += 2 + raw.length;
      for (const byte of raw) if (byte === 0) bytes++;
    } else if (typeof part === "number") {
      bytes += 9;
    } else if (typeof part === "bigint") {
      bytes += 2 + Math.ceil((part < 0n ? -part : part).toString(16).length / 2);
    } else {
      bytes += 1;
    }
  }
  return bytes;
}

/** What setting `key` to a value of at most `valueBytes` serialized bytes counts in a commit. */
export function entryBytes(key: Deno.KvKey, valueBytes: number): number {
  return 2 * keyBytes(key) + valueBytes;
}

/**
 * At most the serialized bytes of `record`: its path's bytes, and 48 for the serializer's header,
 * the two field names, the index (at most a double's 9 bytes) and the byte array's framing.
 */
export function voteIndexBytes(record: VoteIndex): number {
  return record.path.length + 48;
}

/**
 * At most the serialized bytes of `record`: 2 per UTF-16 unit of the vote id (V8 stores a string
 * with any unit beyond Latin-1 as two bytes a unit), and 24 for the header, the field name and the
 * framing.
 */
export function leafRecordBytes(record: LeafRecord): number {
  return 2 * record.voteId.length + 24;
}

/** Limits of {@link commitInBatches}, and who to tell after each commit. */
export type BatchOptions = {
  /** Most mutations per commit; {@link BATCH_MAX_MUTATIONS} by default. */
  maxMutations?: number;
  /** Most estimated bytes per commit; {@link BATCH_MAX_BYTES} by default. */
  maxBytes?: number;
  /** Most bytes of keys set per commit; {@link BATCH_MAX_KEY_BYTES} by default. */
  maxKeyBytes?: number;
  /** Called, and awaited, after the k-th commit (from 1); a throw stops the writing there. */
  afterCommit?: (k: number) => void | Promise<void>;
  /**
   * Commits the last batch in place of the idempotent commit (the sealer's: the last proofs with
   * the block, checked); not counted by `afterCommit`.
   */
  lastCommit?: (entries: [Deno.KvKey, unknown][]) => Promise<void>;
};

/**
 * Sets idempotent `groups` of entries in as few commits as the limits allow, never splitting a
 * group across commits. Each group comes with its size as KV counts it, estimated from above
 * ({@link entryBytes}); the bytes of its keys are counted here.
 */
export async function commitInBatches(
  kv: Deno.Kv,
  groups: Iterable<{ entries: [Deno.KvKey, unknown][]; bytes: number }>,
  options: BatchOptions = {},
): Promise<void> {
  const maxMutations = options.maxMutations ?? BATCH_MAX_MUTATIONS;
  const maxBytes = options.maxBytes ?? BATCH_MAX_BYTES;
  const maxKeyBytes = options.maxKeyBytes ?? BATCH_MAX_KEY_BYTES;
  let batch: [Deno.KvKey, unknown][] = [];
  let batchBytes = 0;
  let batchKeyBytes = 0;
  let commits = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await commitIdempotent(kv, batch);
    batch = [];
    batchBytes = batchKeyBytes = 0;
    await options.afterCommit?.(++commits);
  };
  for (const { entries, bytes } of groups) {
    let groupKeyBytes = 0;
    for (const [key] of entries) groupKeyBytes += keyBytes(key);
    if (
      batch.length + entries.length > maxMutations || batchBytes + bytes > maxBytes ||
      batchKeyBytes + groupKeyBytes > maxKeyBytes
    ) {
      await flush();
    }
    batch.push(...entries);
    batchBytes += bytes;
    batchKeyBytes += groupKeyBytes;
  }
  if (options.lastCommit && batch.length > 0) await options.lastCommit(batch);
  else await flush();
}
