/**
 * Browser-safe. A call of the API sealed for the Oblivious HTTP gateway (protocol §4.11): the
 * Binary HTTP request built as the gateway accepts it (GET with no header, POST with only
 * `content-type: application/json`), padded to a multiple of 1,024 bytes, a vote to its round's
 * one length, then encapsulated to a pinned key configuration; and the opening of its answer.
 * @module
 */
import { decodeResponse, encodeRequest, type Field, pad, PAD_BLOCK } from "../../protocol/bhttp.ts";
import {
  decapsulateResponse,
  encapsulateRequest,
  type KeyConfig,
  keyConfigsHash,
  parseKeyConfigs,
  REQUEST_MEDIA_TYPE,
} from "../../protocol/ohttp.ts";

export { isVotePath, voteLength } from "../../protocol/vote_padding.ts";

/** The gateway a call is sealed for: its pinned key configuration and its origin. */
export type GatewayTarget = { config: KeyConfig; scheme: "http" | "https"; authority: string };

/** A call of the API: its method, path (under `/api/`) and JSON body on a write. */
export type ApiCall = { method: "GET" | "POST"; path: string; body?: string };

/** An answer from inside an encapsulated response. */
export type OpenedAnswer = { status: number; headers: readonly Field[]; body: Uint8Array };

/** A sealed call: the encapsulated request to post, and the opener of its response. */
export type SealedCall = {
  encapsulated: Uint8Array;
  open(encapsulatedResponse: Uint8Array): Promise<OpenedAnswer>;
};

/**
 * The gateway target of a key configuration list fetched from a relay, checked against the
 * `pinned` SHA-256 (base64url) the presenter's code carries: null when it differs, so nothing is
 * sent to a key the presenter did not show.
 */
export function pinnedTarget(
  keys: Uint8Array,
  pinned: string,
  gatewayOrigin: string,
): GatewayTarget | null {
  if (keyConfigsHash(keys) !== pinned) return null;
  const url = new URL(gatewayOrigin);
  return {
    config: parseKeyConfigs(keys)[0],
    scheme: url.protocol === "https:" ? "https" : "http",
    authority: url.host,
  };
}

function binaryRequest(target: GatewayTarget, call: ApiCall): Uint8Array {
  const write = call.method === "POST";
  return encodeRequest({
    method: call.method,
    scheme: target.scheme,
    authority: target.authority,
    path: call.path,
    headers: write ? [["content-type", "application/json"]] : [],
    content: new TextEncoder().encode(write ? call.body ?? "" : ""),
  });
}

/**
 * Seals `call` for the gateway of `target`, padded to a multiple of 1,024 bytes and, for a vote,
 * to `voteBytes` (its round's {@link voteLength}); RangeError for a vote longer than that.
 */
export async function sealCall(
  target: GatewayTarget,
  call: ApiCall,
  { voteBytes }: { voteBytes?: number } = {},
): Promise<SealedCall> {
  const message = binaryRequest(target, call);
  if (voteBytes !== undefined && message.length > voteBytes) {
    throw new RangeError(`vote of ${message.length} bytes exceeds its round's ${voteBytes}`);
  }
  const padded = pad(message, PAD_BLOCK, voteBytes ?? 0);
  const { encapsulated, context } = await encapsulateRequest(target.config, padded);
  return {
    encapsulated,
    async open(encapsulatedResponse) {
      const answer = decodeResponse(await decapsulateResponse(context, encapsulatedResponse));
      return { status: answer.status, headers: answer.headers, body: answer.content };
    },
  };
}

/** A relay's refusal (its own, or the gateway's outside the encapsulation): status and code. */
export class RelayError extends Error {
  /** The relay's status: 400 `ohttp_key`, 502 `gateway_changed`, 504 `gateway_timeout`, … */
  readonly status: number;
  /** The `error.code` of its body, or null when it had none. */
  readonly code: string | null;
  constructor(status: number, code: string | null) {
    super(`the relay answered ${status}${code === null ? "" : ` ${code}`}`);
    this.name = "RelayError";
    this.status = status;
    this.code = code;
  }
}

/**
 * A fetch-compatible transport (lib/client/api_client.ts's `Transport`) that sends every call
 * sealed through `relay`: the URL's path and query, the method and the JSON body go inside; no
 * header does. Answers the inner answer as a Response; a relay that does not answer 200 is a
 * {@link RelayError}. `voteBytes` gives the one length of a vote path's round.
 */
export function relayTransport({ relay, target, fetch, voteBytes }: {
  relay: string;
  target: GatewayTarget;
  fetch: (url: string, init: RequestInit) => Response | Promise<Response>;
  voteBytes?: (path: string) => number | undefined;
}): (url: string, init: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const { pathname, search } = new URL(url, "http://gateway.invalid");
    const path = pathname + search;
    const method = init.method === "POST" ? "POST" : "GET";
    if ((init.method ?? "GET") !== method) throw new RangeError(`${init.method} is not sent`);
    const body = typeof init.body === "string" ? init.body : undefined;
    const sealed = await sealCall(target, { method, path, body }, {
      voteBytes: method === "POST" ? voteBytes?.(pathname) : undefined,
    });
    const res = await fetch(relay, {
      method: "POST",
      headers: { "content-type": REQUEST_MEDIA_TYPE },
      body: sealed.encapsulated.slice(),
      ...(init.signal ? { signal: init.signal } : {}),
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (res.status !== 200) {
      let code: string | null = null;
      try {
        code = JSON.parse(new TextDecoder().decode(bytes))?.error?.code ?? null;
      } catch {
        // Not the JSON of a refusal: the status says enough.
      }
      throw new RelayError(res.status, code);
    }
    const answer = await sealed.open(bytes);
    return new Response(answer.status === 204 ? null : answer.body.slice(), {
      status: answer.status,
      headers: answer.headers.map(([name, value]): [string, string] => [name, value]),
    });
  };
}
