/**
 * A deadline on reading a request's body (protocol §4.1): a write call whose body has not arrived
 * in full within {@link BODY_DEADLINE_MS} of its handler asking for it is answered 408
 * `body_timeout`, and its connection's body is cancelled. So a key or a vote cannot be held back
 * behind headers sent early and land long after: whatever arrives later is never read.
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { refusal } from "../errors.ts";

/** How long a write call's body may take to arrive, ms. */
export const BODY_DEADLINE_MS = 10_000;

/**
 * Middleware reading the body of a POST within `deadlineMs`, then handing it on to the handler
 * as the request's body, read in full; 408 `body_timeout` when it takes longer.
 */
export function bodyDeadline(deadlineMs = BODY_DEADLINE_MS): MiddlewareHandler {
  return async (c, next) => {
    const body = c.req.method === "POST" ? c.req.raw.body : null;
    if (body !== null) {
      const bytes = await readWithin(body, deadlineMs);
      c.req.raw = new Request(c.req.raw, { body: bytes });
    }
    await next();
  };
}

/** Every byte of `body`, or 408 `body_timeout` (the stream cancelled) after `deadlineMs`. */
async function readWithin(body: ReadableStream<Uint8Array>, deadlineMs: number) {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(refusal(
        "body_timeout",
        `The request body did not arrive within ${deadlineMs / 1000} s: it is not read`,
      ));
    }, deadlineMs);
  });
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), late]);
      if (done) break;
      chunks.push(value);
    }
  } catch (error) {
    // Whatever arrives later is dropped unread.
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const bytes = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes.buffer as ArrayBuffer;
}
