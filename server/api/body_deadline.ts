/**
 * A deadline on reading a request's body (protocol §4.1): a write call whose body has not arrived
 * in full within {@link BODY_DEADLINE_MS} of its handler asking for it is answered 408
 * `body_timeout`. So a key or a vote cannot be held back behind headers sent early and land long
 * after: whatever arrives later is never parsed.
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { refusal } from "../errors.ts";

/** How long a write call's body may take to arrive, ms. */
export const BODY_DEADLINE_MS = 10_000;

/**
 * Middleware reading the body of a POST within `deadlineMs` (the handler then reads it from
 * Hono's body cache); 408 `body_timeout` when it takes longer.
 */
export function bodyDeadline(deadlineMs = BODY_DEADLINE_MS): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === "POST" && c.req.raw.body !== null) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          reject(refusal(
            "body_timeout",
            `The request body did not arrive within ${deadlineMs / 1000} s: it is not read`,
          ));
        }, deadlineMs);
      });
      const body = c.req.arrayBuffer();
      // A body cut short by the deadline is dropped: its read ends with the connection.
      body.catch(() => {});
      try {
        await Promise.race([body, late]);
      } finally {
        clearTimeout(timer);
      }
    }
    await next();
  };
}
