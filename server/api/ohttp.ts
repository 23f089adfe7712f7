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
import {
  isVotePath,
  isVoteProofPath,
  voteLength,
  voteProofLength,
  voteRound,
} from "../../lib/protocol/vote_padding.ts";
import { invalidRequest, refusal } from "../errors.ts";
import type { GatewayKeys } from "../store/ohttp_key.ts";
import { bodyDeadline } from "./body_deadline.ts";

/** Where encapsulated requests are posted. */
export const GATEWAY_PATH = "/api/ohttp";
/** The presenter's call replacing the gateway's key. */
export const GATEWAY_KEY_PATH = "/api/ohttp/key";
/** The one header an inner request may carry, and only on a write. */
const JSON_TYPE: Field = ["content-type", "application/json"];
/** The Binary HTTP length of every answer to a read of a vote's proof (protocol §4.11). */
const PROOF_ANSWER_BYTES = voteProofLength();
/**
 * The least time between a vote's arrival and its answer, ms: longer than the verification of the
 * largest ring, so that the time the answer takes does not show the vote's ring to the relay.
 */
export const VOTE_ANSWER_FLOOR_MS = 1_000;
/** The answer headers carried inside an encapsulated response. */
const ANSWER_HEADERS = ["content-type", "retry-after"];

/** What the gateway needs. */
export type GatewayOptions = {
  keys: GatewayKeys;
  /** Serves an inner request: the application itself, in this process. */
  serve: (request: Request) => Response | Promise<Response>;
  /** The presenter's check (server/presenter_auth.ts); without one the key cannot be replaced over HTTP. */
  presenter?: MiddlewareHandler;
  /** `PUBLIC_URL`: its host is the gateway's authority too (behind a proxy). */
  publicUrl?: string | null;
  /** Milliseconds on a monotonic clock; `performance.now` by default. */
  now?: () => number;
  /** Waits `ms` milliseconds; a timer by default. */
  sleep?: (ms: number) => Promise<void>;
  /** How long an encapsulated request's body may take to arrive: `BODY_DEADLINE_MS` by default. */
  bodyDeadlineMs?: number;
};

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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
  if (options.presenter !== undefined) {
    app.post(GATEWAY_KEY_PATH, options.presenter, async (c) => {
      await refuseWhileRelayedVoting(options.serve, new URL(c.req.url));
      const { key, keys } = await options.keys.replace();
      return c.json({ keyId: key.config.keyId, sha256: keyConfigsHash(keys) });
    });
  }
  // The body within the deadline of direct writes (protocol §4.1), then the key: a request sealed
  // to a key replaced while its body was on the way gets `ohttp_key`.
  app.post(GATEWAY_PATH, bodyDeadline(options.bodyDeadlineMs), (c) => gateway(c, options));
  return app;
}

/**
 * 409 `round_voting` while a relayed round is voting (this application's `GET /api/rounds`): its
 * phones hold the key configuration they joined under, and a new key would refuse their votes.
 */
async function refuseWhileRelayedVoting(
  serve: GatewayOptions["serve"],
  base: URL,
): Promise<void> {
  const listed = await serve(new Request(new URL("/api/rounds", base)));
  // Fails closed: rounds that cannot be read may be voting, so no key is replaced then.
  const parsed = listed.ok ? RoundList.safeParse(await listed.json()) : null;
  if (parsed === null) await listed.body?.cancel();
  if (parsed === null || !parsed.success) {
    throw refusal("busy", "The rounds could not be read: the key is kept, try again", {
      headers: { "Retry-After": "1" },
    });
  }
  const voting = parsed.data.rounds.find((r) => r.relayed && r.phase === "voting");
  if (voting !== undefined) {
    throw refusal(
      "round_voting",
      `Round ${voting.id} is voting through the relay: replace the key once it is closed`,
      { extra: { round: voting.id } },
    );
  }
}

async function gateway(c: Context, options: GatewayOptions): Promise<Response> {
  const { now = () => performance.now(), sleep = wait } = options;
  const arrived = now();
  const type = c.req.header("content-type") ?? "";
  if (type.split(";", 1)[0].trim().toLowerCase() !== REQUEST_MEDIA_TYPE) {
    throw refusal("unsupported_media_type", `Send ${REQUEST_MEDIA_TYPE} to ${GATEWAY_PATH}`);
  }
  const body = new Uint8Array(await c.req.arrayBuffer());
  // After the body (read by the deadline's middleware): the key as of its arrival.
  const { key } = await options.keys.opening(body.length > 0 ? body[0] : -1);
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
  // The proof of a vote holds the vote: its answer has one length, whatever the ring and choice.
  const least = inner.method === "GET" && isVoteProofPath(new URL(inner.url).pathname)
    ? PROOF_ANSWER_BYTES
    : 0;
  const message = pad(
    encodeResponse({ status: answer.status, headers, content }),
    PAD_BLOCK,
    least,
  );
  const sealed = await encapsulateResponse(opened.context, message);
  if (inner.method === "POST" && isVotePath(new URL(inner.url).pathname)) {
    // A vote's verification takes time in proportion to its ring: every vote is answered no
    // sooner than the floor after it arrived, whatever its ring and its answer.
    const left = arrived + VOTE_ANSWER_FLOOR_MS - now();
    if (left > 0) await sleep(left);
  }
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

/**
 * True for a normalised path (and query) under `/api/`, other than the gateway's own. The path
 * holds no percent escape (the query may): the router decodes them, so `/api/ohtt%70` would reach
 * the gateway and `/api/vot%65` a vote that the length check does not see as one.
 */
export function isServedPath(path: string): boolean {
  if (!path.startsWith("/api/") || /[#\\]|\/\//.test(path)) return false;
  if (path.split("?", 1)[0].includes("%")) return false;
  let url: URL;
  try {
    url = new URL(path, "http://gateway.invalid");
  } catch {
    return false;
  }
  if (url.pathname + url.search !== path) return false; // "..", "//"-free and percent-normal
  return url.pathname !== GATEWAY_PATH && !url.pathname.startsWith(`${GATEWAY_PATH}/`);
}
