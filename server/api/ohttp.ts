/**
 * The Oblivious HTTP gateway of protocol §4.11 (RFC 9458): `GET /.well-known/ohttp-gateway`
 * answers the key configuration (RFC 9540), `POST /api/ohttp` opens an encapsulated request,
 * serves the Binary HTTP request inside it with this same application (no network hop) and seals
 * its answer, padded, in a 200 whatever the inner status; `POST /api/ohttp/key` is the presenter's
 * call that replaces the key.
 * @module
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import {
  type BinaryRequest,
  decodeRequest,
  encodeResponse,
  type Field,
  pad,
  PAD_BLOCK,
} from "../../lib/protocol/bhttp.ts";
import {
  decapsulateRequest,
  encapsulateResponse,
  keyConfigsHash,
  KEYS_MEDIA_TYPE,
  KEYS_PATH,
  OhttpError,
  REQUEST_MEDIA_TYPE,
  RESPONSE_MEDIA_TYPE,
} from "../../lib/protocol/ohttp.ts";
import { RoundList } from "../../lib/protocol/schemas.ts";
import { isVotePath, voteLength, voteRound } from "../../lib/protocol/vote_padding.ts";
import { invalidRequest, refusal } from "../errors.ts";
import type { GatewayKeys } from "../store/ohttp_key.ts";

/** Where encapsulated requests are posted. */
export const GATEWAY_PATH = "/api/ohttp";
/** The presenter's call replacing the gateway's key. */
export const GATEWAY_KEY_PATH = "/api/ohttp/key";
/** The one header an inner request may carry, and only on a write. */
const JSON_TYPE: Field = ["content-type", "application/json"];
/** The answer headers carried inside an encapsulated response. */
const ANSWER_HEADERS = ["content-type", "retry-after"];

/** What the gateway needs. */
export type GatewayOptions = {
  keys: GatewayKeys;
  /** Serves an inner request: the application itself, in this process. */
  serve: (request: Request) => Response | Promise<Response>;
  /** The presenter's token; without one the key cannot be replaced over HTTP. */
  adminToken?: string;
  /** `PUBLIC_URL`: its host is the gateway's authority too (behind a proxy). */
  publicUrl?: string | null;
};

/** The gateway's routes, for `app.route("/", …)`. */
export function createGatewayApp(options: GatewayOptions): Hono {
  const app = new Hono();
  app.get(KEYS_PATH, async (c) => {
    const { keys } = await options.keys.current();
    return c.body(keys.slice().buffer, 200, {
      "Content-Type": KEYS_MEDIA_TYPE,
      "Cache-Control": "no-cache",
    });
  });
  if (options.adminToken !== undefined) {
    app.post(GATEWAY_KEY_PATH, presenterOnly(options.adminToken), async (c) => {
      const { key, keys } = await options.keys.replace();
      return c.json({ keyId: key.config.keyId, sha256: keyConfigsHash(keys) });
    });
  }
  app.post(GATEWAY_PATH, (c) => gateway(c, options));
  return app;
}

async function gateway(c: Context, options: GatewayOptions): Promise<Response> {
  const type = c.req.header("content-type") ?? "";
  if (type.split(";", 1)[0].trim().toLowerCase() !== REQUEST_MEDIA_TYPE) {
    throw refusal("unsupported_media_type", `Send ${REQUEST_MEDIA_TYPE} to ${GATEWAY_PATH}`);
  }
  const { key } = await options.keys.current();
  const body = new Uint8Array(await c.req.arrayBuffer());
  let opened;
  try {
    opened = await decapsulateRequest(key, body);
  } catch (error) {
    if (!(error instanceof OhttpError)) throw error;
    throw error.kind === "key-id" || error.kind === "suite"
      ? refusal("ohttp_key", "The encapsulated request names another key configuration", {
        extra: { keyId: key.config.keyId },
      })
      : refusal("bad_encapsulation", "The encapsulated request does not open with this key");
  }
  const inner = innerRequest(opened.request, authorities(c.req.url, options.publicUrl));
  await checkVoteLength(inner, opened.request.length, options.serve);
  const answer = await options.serve(inner);
  const headers: Field[] = [];
  for (const name of ANSWER_HEADERS) {
    const value = answer.headers.get(name);
    if (value !== null) headers.push([name, value]);
  }
  const content = new Uint8Array(await answer.arrayBuffer());
  const message = pad(encodeResponse({ status: answer.status, headers, content }));
  const sealed = await encapsulateResponse(opened.context, message);
  return c.body(sealed.slice().buffer, 200, {
    "Content-Type": RESPONSE_MEDIA_TYPE,
    "Cache-Control": "no-store",
  });
}

/**
 * 400 `invalid_request` for a vote whose Binary HTTP length is not its round's one length
 * (protocol §4.11); the round's choices are read from this application's `GET /api/rounds` (none,
 * free text, for the election without rounds). A round not listed is left to the call's own 404.
 */
async function checkVoteLength(
  inner: Request,
  length: number,
  serve: GatewayOptions["serve"],
): Promise<void> {
  const url = new URL(inner.url);
  if (inner.method !== "POST" || !isVotePath(url.pathname)) return;
  const listed = await serve(new Request(new URL("/api/rounds", url)));
  const parsed = RoundList.safeParse(listed.ok ? await listed.json() : null);
  const round = parsed.success
    ? parsed.data.rounds.find((r) => r.id === voteRound(url.pathname))
    : voteRound(url.pathname) === 1
    ? { choices: [] }
    : undefined;
  if (round === undefined) return;
  const expected = voteLength(
    { scheme: url.protocol.slice(0, -1), authority: url.host },
    url.pathname,
    round.choices,
  );
  if (length !== expected) {
    throw invalidRequest(`A vote is padded to its round's one length, ${expected} bytes`);
  }
}

/** The authorities an inner request may name: the gateway's own host, and PUBLIC_URL's. */
function authorities(url: string, publicUrl: string | null | undefined): Set<string> {
  const out = new Set([new URL(url).host]);
  if (publicUrl) out.add(new URL(publicUrl).host);
  return out;
}

/**
 * The request inside an encapsulation, as a Request for this application; 400 `invalid_request`
 * for one that is not padded known-length Binary HTTP, names another authority, a path outside
 * `/api/` (or the gateway itself), another method, or any header but the write's JSON type.
 */
export function innerRequest(bytes: Uint8Array, own: ReadonlySet<string>): Request {
  let request: BinaryRequest;
  try {
    request = decodeRequest(bytes);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw invalidRequest(
      `The encapsulated request is not known-length Binary HTTP: ${error.message}`,
    );
  }
  if (bytes.length % PAD_BLOCK !== 0) {
    throw invalidRequest(`The Binary HTTP request is not padded to a multiple of ${PAD_BLOCK}`);
  }
  if (request.scheme !== "http" && request.scheme !== "https") {
    throw invalidRequest("The inner request's scheme is not http or https");
  }
  if (!own.has(request.authority)) {
    throw invalidRequest("The inner request names another authority than this gateway's");
  }
  if (!isServedPath(request.path)) {
    throw invalidRequest(`The inner request's path is not a call of this API under /api/`);
  }
  const write = request.method === "POST";
  if (!write && request.method !== "GET") {
    throw invalidRequest("The inner request's method is not GET or POST");
  }
  const headersOk = write
    ? request.headers.length === 1 && request.headers[0][0] === JSON_TYPE[0] &&
      request.headers[0][1] === JSON_TYPE[1]
    : request.headers.length === 0;
  if (!headersOk) {
    throw invalidRequest(
      "The inner request carries a header other than content-type: application/json on a write",
    );
  }
  if (!write && request.content.length > 0) {
    throw invalidRequest("The inner GET request carries content");
  }
  const url = new URL(request.path, `${request.scheme}://${request.authority}`);
  return new Request(url, {
    method: request.method,
    headers: write ? [JSON_TYPE as [string, string]] : [],
    ...(write ? { body: request.content.slice() } : {}),
  });
}

/** True for a normalised path (and query) under `/api/`, other than the gateway's own. */
export function isServedPath(path: string): boolean {
  if (!path.startsWith("/api/") || /[#\\]|\/\//.test(path)) return false;
  let url: URL;
  try {
    url = new URL(path, "http://gateway.invalid");
  } catch {
    return false;
  }
  if (url.pathname + url.search !== path) return false; // "..", "//"-free and percent-normal
  return url.pathname !== GATEWAY_PATH && !url.pathname.startsWith(`${GATEWAY_PATH}/`);
}

/** `Authorization: Bearer <token>` with the presenter's token, compared in constant time. */
function presenterOnly(token: string): MiddlewareHandler {
  const expected = new TextEncoder().encode(token);
  return async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    const given = new TextEncoder().encode(/^bearer /i.test(header) ? header.slice(7) : "");
    let diff = given.length ^ expected.length;
    for (let i = 0; i < expected.length; i++) diff |= (given[i] ?? 0) ^ expected[i];
    if (diff !== 0) {
      throw refusal("unauthorized", "This call is the presenter's: send Authorization: Bearer", {
        headers: { "WWW-Authenticate": 'Bearer realm="ringvote presenter"' },
      });
    }
    await next();
  };
}
