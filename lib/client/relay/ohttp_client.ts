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
