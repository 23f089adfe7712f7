// The one error type of the HTTP API. Handlers, the store, the middleware and the page routes
// throw it; the app's one `onError` (server/app.ts) answers with the response it carries, so every
// refusal, 404, 413, 415 and 429 included, has the shape `{"error": {"code", "message"}}` of
// protocol §4 (a browser asking for a page gets the same status and message as plain text).
import { HTTPException } from "hono/http-exception";

/**
 * Status codes of error answers: 4xx the caller's fault (429: too soon, try later), 503 busy or KV
 * down, 500 a bug.
 */
export type ErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 413 | 415 | 422 | 429 | 500 | 503;

/** The JSON body of every error answer. */
export type ErrorAnswer = { error: { code: string; message: string } & Record<string, unknown> };

/** Extra body fields of an error answer (`duplicate_key` carries `id`) and extra headers. */
export type ErrorDetails = { extra?: Record<string, unknown>; headers?: Record<string, string> };

/** An error answer: its snake_case `code`, HTTP `status`, message, extra body fields and headers. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: ErrorStatus;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(status: ErrorStatus, code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.extra = details.extra ?? {};
    this.headers = details.headers ?? {};
  }

  /** The JSON body of the answer. */
  toBody(): ErrorAnswer {
    return { error: { code: this.code, message: this.message, ...this.extra } };
  }

  /** The answer itself: the body as JSON with the error's status and headers. */
  getResponse(): Response {
    return Response.json(this.toBody(), { status: this.status, headers: this.headers });
  }

  /** The answer for a browser asking for a page: the message as plain text, same status. */
  getTextResponse(): Response {
    return new Response(this.message, {
      status: this.status,
      headers: { ...this.headers, "Content-Type": "text/plain; charset=utf-8" },
    });
  }
}

/** The status of every error code of protocol §4: the one mapping from refusal to HTTP. */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_key: 400,
  invalid_signature: 400,
  invalid_host: 400,
  not_a_choice: 400,
  not_a_group: 400,
  ohttp_key: 400,
  bad_encapsulation: 400,
  card_signature: 400,
  unauthorized: 401,
  unregistered_key: 403,
  card_required: 403,
  card_unknown: 403,
  not_found: 404,
  unknown_key: 404,
  unknown_block: 404,
  unknown_vote: 404,
  block_not_sealed: 404,
  unknown_tag: 404,
  unknown_lie: 404,
  unknown_round: 404,
  unknown_group: 404,
  unknown_tree: 404,
  unknown_cards: 404,
  no_cards: 404,
  body_timeout: 408,
  duplicate_key: 409,
  duplicate_tag: 409,
  lab_full: 409,
  lab_reset: 409,
  round_closed: 409,
  round_voting: 409,
  voting_not_open: 409,
  too_few_voters: 409,
  directory_full: 409,
  card_used: 409,
  payload_too_large: 413,
  body_too_large: 413,
  unsupported_media_type: 415,
  bad_cosignature: 422,
  reset_too_soon: 429,
  too_many_attempts: 429,
  internal_error: 500,
  busy: 503,
  kv_unavailable: 503,
  not_built: 503,
} as const satisfies Record<string, ErrorStatus>;

/** An error code of protocol §4. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** The error answer `code`, with its status from {@link ERROR_STATUS} and any details. */
export function refusal(code: ErrorCode, message: string, details: ErrorDetails = {}): ApiError {
  return new ApiError(ERROR_STATUS[code], code, message, details);
}

/** 503 `busy` with `Retry-After`: verification capacity is saturated and nothing was stored. */
export function busy(retryAfterSeconds: number): ApiError {
  return refusal("busy", `The server is busy: retry in ${retryAfterSeconds} s`, {
    headers: { "Retry-After": String(retryAfterSeconds) },
  });
}

/**
 * 503 `kv_unavailable` with `Retry-After`: the database did not answer within `boundMs`. A write
 * may still land: sent again, it is answered 409 with what landed (protocol §5.5).
 */
export function kvUnavailable(boundMs: number, retryAfterSeconds: number): ApiError {
  return refusal(
    "kv_unavailable",
    `The database did not answer within ${boundMs / 1000} s: retry in ${retryAfterSeconds} s`,
    { headers: { "Retry-After": String(retryAfterSeconds) } },
  );
}

/** 409 `duplicate_key`: `key` is registered already, under `id` (carried in the body). */
export function duplicateKey(key: string, id: number): ApiError {
  return refusal("duplicate_key", `Key "${quote(key)}" is already registered`, { extra: { id } });
}

/** 409 `duplicate_tag`: a vote with this tag is stored already. */
export function duplicateTag(tag: string): ApiError {
  return refusal("duplicate_tag", `Tag "${quote(tag)}" has already voted`);
}

/** 400 `invalid_request`: the body or a parameter does not have the documented shape. */
export function invalidRequest(message: string): ApiError {
  return refusal("invalid_request", message);
}

/** 404 `not_found`: no such route, or no such built file. */
export function notFound(method: string, path: string): ApiError {
  return refusal("not_found", `No route for ${method} "${path}"`);
}

/** 503 `not_built`: a page asked for before its scripts were built. */
export function notBuilt(): ApiError {
  return refusal("not_built", "The page's scripts are not built: run `deno task build`");
}

/**
 * The answer for any thrown value: an ApiError answers itself; a framework refusal below 500 is
 * an `invalid_request`; anything else is a bug, answered 500 with no detail (the caller logs it).
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof HTTPException && error.status < 500) return invalidRequest(error.message);
  return refusal("internal_error", "Internal server error");
}

/** Shortens a caller-supplied value for quoting inside a message. */
export function quote(value: string, max = 80): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}
