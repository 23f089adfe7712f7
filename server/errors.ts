// Typed errors thrown by the store and the API handlers. `app.onError` (server/app.ts) is the one
// place that turns them into `{"error": {"code", "message"}}` answers (protocol §4).

/** Status codes a caller's fault maps to, and 503 when verification capacity is saturated. */
export type ErrorStatus = 400 | 403 | 404 | 409 | 413 | 503;

/** An error the caller caused: its snake_case `code`, HTTP `status` and extra body fields. */
export class ApiError extends Error {
  readonly code: string;
  readonly status: ErrorStatus;
  readonly extra: Record<string, unknown>;
  /** Response headers the answer carries (`Retry-After` on 503 `busy`). */
  readonly headers: Record<string, string>;

  constructor(
    status: ErrorStatus,
    code: string,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.headers = headers;
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.extra = extra;
  }

  /** The JSON body of the answer. */
  toBody(): { error: { code: string; message: string } & Record<string, unknown> } {
    return { error: { code: this.code, message: this.message, ...this.extra } };
  }
}

/** 400 `invalid_request`: the body or a parameter does not have the documented shape. */
export function invalidRequest(message: string): ApiError {
  return new ApiError(400, "invalid_request", message);
}

/** 409 `duplicate_key`: `key` is registered already, under `id` (carried in the body). */
export function duplicateKey(key: string, id: number): ApiError {
  return new ApiError(409, "duplicate_key", `Key "${quote(key)}" is already registered`, { id });
}

/** 409 `duplicate_tag`: a vote with this tag is stored already. */
export function duplicateTag(tag: string): ApiError {
  return new ApiError(409, "duplicate_tag", `Tag "${quote(tag)}" has already voted`);
}

/** Seconds a caller refused with 503 `busy` is asked to wait before retrying. */
export const BUSY_RETRY_AFTER_SECONDS = 1;

/**
 * 503 `busy` with `Retry-After` (protocol §4): verification capacity is saturated and nothing was
 * stored, so the same request may simply be sent again later.
 */
export function busy(message: string): ApiError {
  return new ApiError(503, "busy", message, {}, {
    "Retry-After": String(BUSY_RETRY_AFTER_SECONDS),
  });
}

/** 404 `not_found`: no such route. */
export function routeNotFound(method: string, path: string): ApiError {
  return new ApiError(404, "not_found", `No route for ${method} "${path}"`);
}

/** Shortens a caller-supplied value for quoting inside a message. */
export function quote(value: string, max = 80): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}
