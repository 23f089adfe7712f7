/**
 * The Oblivious HTTP relay (RFC 9458 §5, protocol §7.3): `POST /` forwards an encapsulated request
 * to its one gateway over one shared connection pool, with no client header, cookie or address,
 * only its content type, and within a deadline; it serves its pinned key configuration, answers
 * the voting page's cross-origin requests, refuses another key id, stops forwarding once the
 * gateway's configuration changes, and keeps counts only (`GET /stats`).
 * @module
 */
import { KEYS_PATH, REQUEST_MEDIA_TYPE, RESPONSE_MEDIA_TYPE } from "../lib/protocol/ohttp.ts";
import { fetchKeys, type PinnedKeys } from "./pin.ts";

/** Largest encapsulated request forwarded, bytes: the gateway's own body limit. */
export const MAX_REQUEST_BYTES = 64 * 1024;
/** Largest encapsulated response passed back, bytes. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024 + 64;

/** What the relay answers at `GET /stats`: counts, never bodies or addresses. */
export type RelayStats = { requests: number; clients: number; bytes: number; sameMachine: boolean };

/** A relay's settings. */
export type RelayOptions = {
  /** The gateway's origin; requests go to its `/api/ohttp`. */
  gateway: URL;
  /** Its key configuration list as pinned at start. */
  pinned: PinnedKeys;
  /** The one connection pool every forwarded request shares. */
  client: Deno.HttpClient;
  /** How long the gateway may take to answer, ms; after it the client gets a 504. */
  deadlineMs: number;
  /** Whether the gateway runs on this machine. */
  sameMachine: boolean;
};

/** A running relay's request handler, counts and re-check of its pin. */
export type Relay = {
  handler(request: Request, info: { remoteAddr: Deno.Addr }): Promise<Response>;
  stats(): RelayStats;
  /** Reads the gateway's configuration again; stops forwarding for good if it changed. */
  recheck(): Promise<void>;
  /** Why forwarding stopped, or null while it goes on. */
  stopped(): string | null;
};

/** A fetch's options with the shared connection pool (Deno's `client`, unknown to the DOM types). */
export type PooledInit = RequestInit & { client: Deno.HttpClient };

const CORS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
  "Access-Control-Allow-Headers": "content-type",
  "Access-Control-Max-Age": "600",
};

function answer(status: number, body: BodyInit | null, type: string): Response {
  return new Response(body, {
    status,
    headers: { ...CORS, "Content-Type": type, "Cache-Control": "no-store" },
  });
}

function refusal(status: number, code: string, message: string): Response {
  return answer(status, JSON.stringify({ error: { code, message } }), "application/json");
}

/** The body of `request`, or null when it is longer than `max` bytes. */
async function boundedBody(body: ReadableStream<Uint8Array> | null, max: number) {
  const parts: Uint8Array[] = [];
  let size = 0;
  if (body === null) return new Uint8Array(0);
  for await (const part of body) {
    size += part.length;
    if (size > max) return null;
    parts.push(part);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The relay over `options`. */
export function createRelay(options: RelayOptions): Relay {
  const { gateway, pinned, client, deadlineMs } = options;
  const target = new URL("/api/ohttp", gateway);
  const counts = { requests: 0, bytes: 0 };
  // Distinct clients are counted by a keyed hash of their address: the set never holds one.
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const seen = new Set<string>();
  let stoppedBecause: string | null = null;

  const countClient = async (addr: Deno.Addr) => {
    const host = "hostname" in addr ? addr.hostname : "";
    const bytes = new Uint8Array([...salt, ...new TextEncoder().encode(host)]);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    seen.add(Array.from(digest.subarray(0, 12), (b) => b.toString(16)).join(":"));
  };

  const recheck = async () => {
    if (stoppedBecause !== null) return;
    let now: PinnedKeys;
    try {
      now = await fetchKeys(gateway, { client, deadlineMs });
    } catch {
      return; // Not readable now is no change: forwarding goes on, and fails on its own.
    }
    if (now.sha256 !== pinned.sha256) {
      stoppedBecause =
        `the gateway's key configuration changed (pinned ${pinned.sha256}, now ${now.sha256})`;
    }
  };

  const forward = async (request: Request, info: { remoteAddr: Deno.Addr }) => {
    const type = (request.headers.get("content-type") ?? "").split(";", 1)[0].trim().toLowerCase();
    if (type !== REQUEST_MEDIA_TYPE) {
      return refusal(415, "unsupported_media_type", `Send ${REQUEST_MEDIA_TYPE}`);
    }
    const body = await boundedBody(request.body, MAX_REQUEST_BYTES).catch(() => undefined);
    if (body === undefined) return refusal(400, "invalid_request", "The body could not be read");
    if (body === null) {
      return refusal(413, "body_too_large", `Bodies are at most ${MAX_REQUEST_BYTES} bytes`);
    }
    await countClient(info.remoteAddr);
    if (body.length === 0 || !pinned.keyIds.has(body[0])) {
      return refusal(400, "ohttp_key", "The request names another key than the one pinned");
    }
    if (stoppedBecause !== null) return refusal(502, "gateway_changed", stoppedBecause);
    counts.requests++;
    counts.bytes += body.length;
    let res: Response;
    try {
      const init: PooledInit = {
        method: "POST",
        headers: { "content-type": REQUEST_MEDIA_TYPE },
        body,
        client,
        signal: AbortSignal.timeout(deadlineMs),
      };
      res = await fetch(target, init);
    } catch (error) {
      return (error as Error).name === "TimeoutError"
        ? refusal(504, "gateway_timeout", `The gateway did not answer within ${deadlineMs} ms`)
        : refusal(502, "gateway_unreachable", "The gateway could not be reached");
    }
    let out: Uint8Array | null;
    try {
      out = await boundedBody(res.body, MAX_RESPONSE_BYTES);
    } catch {
      return refusal(504, "gateway_timeout", `The gateway did not answer within ${deadlineMs} ms`);
    }
    if (out === null) return refusal(502, "gateway_answer_too_large", "The answer is too large");
    counts.bytes += out.length;
    if (res.status >= 400 && res.status < 500) void recheck();
    const outType = res.headers.get("content-type") ?? RESPONSE_MEDIA_TYPE;
    return answer(res.status, out.slice().buffer, outType);
  };

  return {
    async handler(request, info) {
      const { pathname } = new URL(request.url);
      if (request.method === "OPTIONS") return answer(204, null, "text/plain");
      if (pathname === "/" && request.method === "POST") return await forward(request, info);
      if (pathname === KEYS_PATH && request.method === "GET") {
        return answer(200, pinned.bytes.slice().buffer, "application/ohttp-keys");
      }
      if (pathname === "/stats" && request.method === "GET") {
        return answer(200, JSON.stringify(this.stats()), "application/json");
      }
      return refusal(404, "not_found", `No route for ${request.method} "${pathname}"`);
    },
    stats: () => ({ ...counts, clients: seen.size, sameMachine: options.sameMachine }),
    recheck,
    stopped: () => stoppedBecause,
  };
}
