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
      redirect: "error", // The configuration is the gateway's own, read from nowhere else.
      headers: { accept: KEYS_MEDIA_TYPE },
    };
    res = await fetch(new URL(KEYS_PATH, gateway), init);
  } catch (error) {
    throw new PinError(`the gateway did not answer: ${(error as Error).message}`);
  }
  const bytes = await readAtMost(res.body, MAX_KEYS_BYTES);
  if (res.status !== 200) throw new PinError(`the gateway answered ${res.status}`);
  const type = (res.headers.get("content-type") ?? "").split(";", 1)[0].trim().toLowerCase();
  if (type !== KEYS_MEDIA_TYPE) throw new PinError(`the gateway answered ${type || "no type"}`);
  if (bytes === null) throw new PinError("the key configuration list is too long");
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

/**
 * The bytes of `body`, read only up to `max`: null past it (the rest is not read), none when the
 * body fails or is missing.
 */
async function readAtMost(
  body: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<Uint8Array | null> {
  const out = new Uint8Array(max);
  let size = 0;
  if (body === null) return out.subarray(0, 0);
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return out.slice(0, size);
      if (size + value.length > max) return null;
      out.set(value, size);
      size += value.length;
    }
  } catch {
    return out.subarray(0, 0);
  } finally {
    reader.cancel().catch(() => {});
  }
}
