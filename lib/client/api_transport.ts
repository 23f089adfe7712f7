/**
 * Browser-safe. The transport under the API client (protocol §4): one call sent with its deadline,
 * its answer checked against a schema, every failure as one typed {@link ApiCallError}; the paging
 * helpers over a paged call.
 * @module
 */
import * as z from "zod/mini";
import { describeIssues, ErrorBody, MAX_PAGE_LIMIT } from "../protocol/schemas.ts";
import { messageOf } from "./text.ts";
/** A fetch-compatible function: `fetch` itself, or a Hono app's `request` in tests. */
export type Transport = (url: string, init: RequestInit) => Response | Promise<Response>;

/** Codes the client gives failures that carry no error body of the server's. */
export type ClientErrorCode = "network_error" | "timeout" | "malformed_answer" | "http_error";

/** What went wrong with one call; see {@link ApiCallError}. */
export type Failure = {
  /** The HTTP status; 0 when no answer arrived. */
  status: number;
  /** The server's error code, or a {@link ClientErrorCode}. */
  code: string;
  /** The server's message, or what the client found. */
  reason: string;
  /** The error body's other fields (`duplicate_key` carries `id`). */
  details?: Record<string, unknown>;
  /** For a 503 or a 429: the seconds the server asked to wait (`Retry-After`), null when absent. */
  retryAfterSeconds?: number | null;
};

/** The one failure of every call: `call` ("GET /api/tally") and its {@link Failure}. */
export class ApiCallError extends Error {
  declare readonly status: number;
  declare readonly code: string;
  declare readonly reason: string;
  declare readonly details: Record<string, unknown>;
  declare readonly retryAfterSeconds: number | null;

  constructor(readonly call: string, failure: Failure) {
    const { status, reason } = failure;
    super(status === 0 ? `${call} failed: ${reason}` : `${call} answered ${status}: ${reason}`);
    Object.assign(this, { name: "ApiCallError", details: {}, retryAfterSeconds: null, ...failure });
  }
}

/** One page of a paged call: items from some offset on, and the size of the whole collection. */
export type Page<T> = { items: T[]; total: number };
/** A paged call: at most `limit` (≤ MAX_PAGE_LIMIT) items of the collection from `offset`. */
export type PagedCall<T> = (offset: number, limit: number) => Promise<Page<T>>;

/** The schema of a text answer: the client keeps it whole. */
export const TEXT = z.string();

/**
 * The pages of `call` from `offset` on, at most `count` items in all, each as large as the API
 * allows; ends at the collection's end or at an empty page (a shrinking collection).
 */
export async function* pagesOf<T>(
  call: PagedCall<T>,
  { offset = 0, count = Infinity }: { offset?: number; count?: number } = {},
): AsyncGenerator<Page<T> & { offset: number }> {
  const end = offset + count;
  for (let at = offset; at < end;) {
    const page = await call(at, Math.min(MAX_PAGE_LIMIT, end - at));
    yield { ...page, offset: at };
    at += page.items.length;
    if (page.items.length === 0 || at >= page.total) return;
  }
}

/** Every item of `call` from `offset` on (at most `count`), and the collection's size. */
export async function readPages<T>(
  call: PagedCall<T>,
  range: { offset?: number; count?: number } = {},
): Promise<Page<T>> {
  const items: T[] = [];
  let total = 0;
  for await (const page of pagesOf(call, range)) {
    items.push(...page.items);
    total = page.total;
  }
  return { items, total };
}

/**
 * Sends one call; a failed request, a non-2xx or a body unlike `schema` is an ApiCallError, and so
 * is an answer not whole by `timeoutMs` (`timeout`: the request is aborted, and the wait ends even
 * when the transport ignores the abort).
 */
export async function send<T>(
  { fetch, root, timeoutMs }: { fetch: Transport; root: string; timeoutMs?: number },
  { method, path, body, headers = {}, schema }: {
    method: "GET" | "POST";
    path: string;
    body?: unknown;
    headers?: Record<string, string>;
    schema: z.ZodMiniType<T>;
  },
): Promise<T> {
  const call = `${method} ${path}`;
  const asText = (schema as unknown) === TEXT;
  const accept = asText ? "text/plain" : "application/json";
  // Every write says it is JSON, a bodiless one too: the server refuses any other (protocol §4.1).
  const type: Record<string, string> = method === "POST"
    ? { "content-type": "application/json" }
    : {};
  const init: RequestInit = { method, headers: { accept, ...type, ...headers } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const deadline = timeoutMs === undefined ? null : deadlineOf(timeoutMs);
  const read = async () => {
    const response = await fetch(
      root + path,
      deadline ? { ...init, signal: deadline.signal } : init,
    );
    return { response, text: await response.text() };
  };
  let response: Response;
  let json: unknown;
  let answerText = "";
  try {
    // The race also hears a late failure of the abandoned read, so none goes unhandled.
    const answer = await (deadline ? Promise.race([read(), deadline.expired]) : read());
    response = answer.response;
    answerText = answer.text;
    // 204 (the presenter check) has no body: nothing to parse.
    json = response.status === 204 || (asText && response.ok) ? null : parseJson(answer.text);
  } catch (error) {
    if (deadline?.signal.aborted) {
      const reason = `no answer within ${duration(timeoutMs!)}`;
      throw new ApiCallError(call, { status: 0, code: "timeout", reason });
    }
    const reason = messageOf(error);
    throw new ApiCallError(call, { status: 0, code: "network_error", reason });
  } finally {
    deadline?.clear();
  }
  const { status } = response;
  if (!response.ok) {
    const retryAfterSeconds = status === 503 || status === 429
      ? retryAfter(response.headers.get("retry-after"))
      : null;
    const refusal = ErrorBody.safeParse(json);
    if (!refusal.success) {
      throw new ApiCallError(call, {
        status,
        code: "http_error",
        reason: `status ${status}`,
        retryAfterSeconds,
      });
    }
    const { code, message, ...details } = refusal.data.error;
    throw new ApiCallError(call, { status, code, reason: message, details, retryAfterSeconds });
  }
  if (asText) return answerText as T;
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const reason = json === undefined
      ? "the answer is not JSON"
      : `unexpected answer: ${describeIssues(parsed.error)}`;
    throw new ApiCallError(call, { status, code: "malformed_answer", reason });
  }
  return parsed.data;
}

/**
 * A deadline `ms` from now: `signal` aborts then, and `expired` rejects then, for a transport that
 * ignores the signal. `clear` stops the timer once the answer is in.
 */
function deadlineOf(ms: number) {
  const controller = new AbortController();
  let fire!: () => void;
  const expired = new Promise<never>((_, reject) => {
    fire = () => {
      controller.abort(new DOMException(`No answer within ${duration(ms)}`, "TimeoutError"));
      reject(controller.signal.reason);
    };
  });
  const timer = setTimeout(fire, ms);
  return { signal: controller.signal, expired, clear: () => clearTimeout(timer) };
}

/** `ms` in words: whole seconds as "8 s", anything else in milliseconds. */
function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Seconds of a `Retry-After` header in its delta-seconds form, the form the server sends. */
function retryAfter(header: string | null): number | null {
  return header !== null && /^\s*\d+\s*$/.test(header) ? Number(header) : null;
}
