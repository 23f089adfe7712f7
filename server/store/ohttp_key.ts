/**
 * The Oblivious HTTP gateway's key (protocol §4.11), kept in KV under `["ohttp", "key"]` so that
 * every process serves the same key configuration: made once at the first start with a commit that
 * checks none is there, replaced by the presenter with one that checks it is unchanged since read.
 * Replacing overwrites the old private key: traffic recorded under it no longer opens.
 *
 * A process keeps the key it read for {@link KEY_KEEP_MS} to open requests, so a relayed request
 * costs no KV round trip: a replacement made in this process holds at once, one made in another
 * process within {@link KEY_KEEP_MS} of the next request here, or at once for a request naming the
 * new key id (read again, at most every {@link KEY_RECHECK_MS}). An idle process reads nothing.
 * @module
 */
import {
  AEAD_AES_128_GCM,
  encodeKeyConfigs,
  type GatewayKey,
  generateGatewayKey,
  KDF_HKDF_SHA256,
  KEM_X25519_SHA256,
} from "../../lib/protocol/ohttp.ts";
import { backoff, MAX_ATTEMPTS, readRetrying, tryCommit } from "./kv_calls.ts";

/** How long a process opens requests with the key it last read from KV, ms (protocol §4.11). */
export const KEY_KEEP_MS = 2_000;
/** The least time between two reads for requests naming a key id other than the one kept, ms. */
export const KEY_RECHECK_MS = 250;

/** The KV key of the gateway's key. */
export const GATEWAY_KEY = ["ohttp", "key"] as const;

/** The gateway's key as stored: its id (0–255) and raw X25519 keys. */
export type GatewayKeyRecord = { keyId: number; privateKey: Uint8Array; publicKey: Uint8Array };

/** The gateway's current key and its `application/ohttp-keys` list. */
export type CurrentGatewayKey = { key: GatewayKey; keys: Uint8Array };

/** The gateway's key store. */
export type GatewayKeys = {
  /** The key as KV holds it now (read at every call: another process may have replaced it). */
  current(): Promise<CurrentGatewayKey>;
  /**
   * The key to open a request naming `keyId` with: the one this process read, unless it was read
   * more than {@link KEY_KEEP_MS} ago, or names another key id and was read more than
   * {@link KEY_RECHECK_MS} ago; then read again. Concurrent requests share one read.
   */
  opening(keyId: number): Promise<CurrentGatewayKey>;
  /** Replaces the key with a fresh one under another key id; answers the new one. */
  replace(): Promise<CurrentGatewayKey>;
};

function fromRecord(record: GatewayKeyRecord): CurrentGatewayKey {
  const key: GatewayKey = {
    config: {
      keyId: record.keyId,
      kemId: KEM_X25519_SHA256,
      publicKey: record.publicKey,
      suites: [{ kdfId: KDF_HKDF_SHA256, aeadId: AEAD_AES_128_GCM }],
    },
    privateKey: record.privateKey,
  };
  return { key, keys: encodeKeyConfigs([key.config]) };
}

async function freshRecord(avoid: number | null): Promise<GatewayKeyRecord> {
  let keyId = crypto.getRandomValues(new Uint8Array(1))[0];
  if (keyId === avoid) keyId = (keyId + 1) % 256;
  const made = await generateGatewayKey(keyId);
  return { keyId, privateKey: made.privateKey, publicKey: made.config.publicKey };
}

/**
 * The gateway's key store over `kv`; makes the key at once when there is none. `now` (ms on a
 * monotonic clock, `performance.now` by default) times how long a key read is kept.
 */
export async function createGatewayKeys(
  kv: Deno.Kv,
  { now = () => performance.now() }: { now?: () => number } = {},
): Promise<GatewayKeys> {
  const key = [...GATEWAY_KEY];
  /** Stores a fresh key when the entry is still at `versionstamp`; null when another won. */
  const put = async (versionstamp: string | null, avoid: number | null) => {
    const record = await freshRecord(avoid);
    const res = await tryCommit(kv.atomic().check({ key, versionstamp }).set(key, record));
    return res?.ok ? { record, versionstamp: res.versionstamp } : null;
  };
  const read = () => readRetrying(() => kv.get<GatewayKeyRecord>(key));
  let memo: { versionstamp: string; current: CurrentGatewayKey; readAt: number } | null = null;
  /** Keeps `record` at `versionstamp` as this process's key, read at `readAt`. */
  const keep = (versionstamp: string, record: GatewayKeyRecord, readAt: number) => {
    // A read that left before a replacement here and answers after it does not bring back the old.
    if (memo !== null && versionstamp < memo.versionstamp) return memo.current;
    if (memo?.versionstamp !== versionstamp) {
      memo = { versionstamp, current: fromRecord(record), readAt };
    } else memo.readAt = readAt;
    return memo.current;
  };
  const current = async (): Promise<CurrentGatewayKey> => {
    for (let attempt = 0;; attempt++) {
      const readAt = now();
      const entry = await read();
      if (entry.value && entry.versionstamp) {
        return keep(entry.versionstamp, entry.value, readAt);
      }
      if (await put(null, null)) continue;
      if (attempt >= MAX_ATTEMPTS) throw new Error("Could not store the gateway key");
      await backoff(attempt);
    }
  };
  await current();
  let reading: Promise<CurrentGatewayKey> | null = null;
  return {
    current,
    opening(keyId) {
      const kept = memo;
      if (kept !== null) {
        const age = now() - kept.readAt;
        const same = kept.current.key.config.keyId === keyId;
        if (age < (same ? KEY_KEEP_MS : KEY_RECHECK_MS)) return Promise.resolve(kept.current);
      }
      return reading ??= current().finally(() => reading = null);
    },
    async replace() {
      for (let attempt = 0;; attempt++) {
        const entry = await read();
        const made = await put(entry.versionstamp, entry.value?.keyId ?? null);
        // Kept at once: this process opens nothing more with the old key.
        if (made) return keep(made.versionstamp, made.record, now());
        if (attempt >= MAX_ATTEMPTS) throw new Error("Could not replace the gateway key");
        await backoff(attempt);
      }
    },
  };
}
