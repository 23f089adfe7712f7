/**
 * The relay's pin of its gateway's key configuration (RFC 9458 §3, RFC 9540): fetched once at start
 * and served as is; fetched again to tell whether the gateway still publishes the very same bytes.
 * @module
 */
import {
  keyConfigsHash,
  KEYS_MEDIA_TYPE,
  KEYS_PATH,
  parseKeyConfigs,
} from "../lib/protocol/ohttp.ts";

/** Largest key configuration list read from a gateway, bytes. */
const MAX_KEYS_BYTES = 4096;

/** A gateway's key configuration list as pinned: its bytes, SHA-256 (base64url) and key ids. */
export type PinnedKeys = { bytes: Uint8Array; sha256: string; keyIds: ReadonlySet<number> };

/** A gateway whose key configuration could not be read, and why. */
export class PinError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PinError";
  }
}

/** Reads `gateway`'s key configuration list within `deadlineMs`; PinError when it cannot. */
export async function fetchKeys(
  gateway: URL,
  { client, deadlineMs }: { client: Deno.HttpClient; deadlineMs: number },
): Promise<PinnedKeys> {
  let res: Response;
  try {
    const init: RequestInit & { client: Deno.HttpClient } = {
      client,
      signal: AbortSignal.timeout(deadlineMs),
      headers: { accept: KEYS_MEDIA_TYPE },
    };
    res = await fetch(new URL(KEYS_PATH, gateway), init);
  } catch (error) {
    throw new PinError(`the gateway did not answer: ${(error as Error).message}`);
  }
  const bytes = new Uint8Array(await res.arrayBuffer().catch(() => new ArrayBuffer(0)));
  if (res.status !== 200) throw new PinError(`the gateway answered ${res.status}`);
  const type = (res.headers.get("content-type") ?? "").split(";", 1)[0].trim().toLowerCase();
  if (type !== KEYS_MEDIA_TYPE) throw new PinError(`the gateway answered ${type || "no type"}`);
  if (bytes.length > MAX_KEYS_BYTES) throw new PinError("the key configuration list is too long");
  try {
    const configs = parseKeyConfigs(bytes);
    return {
      bytes,
      sha256: keyConfigsHash(bytes),
      keyIds: new Set(configs.map((c) => c.keyId)),
    };
  } catch (error) {
    throw new PinError(`the key configuration list does not parse: ${(error as Error).message}`);
  }
}
