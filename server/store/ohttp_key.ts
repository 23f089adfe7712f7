/**
 * The Oblivious HTTP gateway's key (protocol §4.11), kept in KV under `["ohttp", "key"]` so that
 * every process serves the same key configuration: made once at the first start with a commit that
 * checks none is there, replaced by the presenter with one that checks it is unchanged since read.
 * Replacing overwrites the old private key: traffic recorded under it no longer opens.
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
import { backoff, MAX_ATTEMPTS, readRetrying, tryCommit } from "./layout.ts";

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

/** The gateway's key store over `kv`; makes the key at once when there is none. */
export async function createGatewayKeys(kv: Deno.Kv): Promise<GatewayKeys> {
  const key = [...GATEWAY_KEY];
  /** Stores a fresh key when the entry is still at `versionstamp`; null when another won. */
  const put = async (versionstamp: string | null, avoid: number | null) => {
    const record = await freshRecord(avoid);
    const res = await tryCommit(kv.atomic().check({ key, versionstamp }).set(key, record));
    return res?.ok ? record : null;
  };
  const read = () => readRetrying(() => kv.get<GatewayKeyRecord>(key));
  let memo: { versionstamp: string; current: CurrentGatewayKey } | null = null;
  const current = async (): Promise<CurrentGatewayKey> => {
    for (let attempt = 0;; attempt++) {
      const entry = await read();
      if (entry.value && entry.versionstamp) {
        if (memo?.versionstamp !== entry.versionstamp) {
          memo = { versionstamp: entry.versionstamp, current: fromRecord(entry.value) };
        }
        return memo.current;
      }
      if (await put(null, null)) continue;
      if (attempt >= MAX_ATTEMPTS) throw new Error("Could not store the gateway key");
      await backoff(attempt);
    }
  };
  await current();
  return {
    current,
    async replace() {
      for (let attempt = 0;; attempt++) {
        const entry = await read();
        const made = await put(entry.versionstamp, entry.value?.keyId ?? null);
        if (made) return fromRecord(made);
        if (attempt >= MAX_ATTEMPTS) throw new Error("Could not replace the gateway key");
        await backoff(attempt);
      }
    },
  };
}
