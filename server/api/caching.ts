/**
 * How long an answer may be kept (protocol §4.1): an answer about a sealed block never changes, so
 * it is cached for a year with an `ETag`; the chain's live state (head, checkpoint, tally, open
 * block) is never stored; listings that grow are revalidated by their `ETag`.
 * @module
 */
import type { Context } from "hono";
import { createHash } from "node:crypto";

/** The `Cache-Control` of an answer about a sealed block: the same bytes for good. */
export const IMMUTABLE = "public, max-age=31536000, immutable";
/** The `Cache-Control` of the chain's live state: asked afresh every time. */
export const NO_STORE = "no-store";
/** The `Cache-Control` of a listing that grows: kept, but revalidated by its `ETag` before use. */
export const REVALIDATE = "no-cache";

/**
 * The attack lab's practice ledger (server/app.ts `LAB_API`): a reset replaces it, so its sealed
 * blocks are not for good and its answers are only revalidated.
 */
const RESETTABLE = "/api/lab/";

/** An answer about a sealed block, as JSON: {@link IMMUTABLE} (revalidated in the lab). */
export function sealedJson(c: Context, value: unknown): Response {
  return cached(c, {
    text: JSON.stringify(value),
    type: "application/json",
    cacheControl: c.req.path.startsWith(RESETTABLE) ? REVALIDATE : IMMUTABLE,
  });
}

/** An answer about sealed blocks, as the log's text (protocol §4.10), cached as {@link sealedJson}. */
export function sealedText(c: Context, text: string): Response {
  return cached(c, {
    text,
    type: "text/plain; charset=utf-8",
    cacheControl: c.req.path.startsWith(RESETTABLE) ? REVALIDATE : IMMUTABLE,
  });
}

/** A listing that grows, as JSON: {@link REVALIDATE}, with its `ETag`. */
export function growingJson(c: Context, value: unknown): Response {
  return cached(c, {
    text: JSON.stringify(value),
    type: "application/json",
    cacheControl: REVALIDATE,
  });
}

/** The chain's live state, as JSON: {@link NO_STORE}. */
export function liveJson(c: Context, value: unknown): Response {
  c.header("Cache-Control", NO_STORE);
  return c.json(value);
}

/**
 * `text` with its `ETag` (the first 16 bytes of its SHA-256, hex) and `cacheControl`; 304 Not
 * Modified without a body when the request's `If-None-Match` names that tag (weak comparison, RFC
 * 9110 §13.1.2: the tag made weak by compression matches too).
 */
function cached(
  c: Context,
  { text, type, cacheControl }: { text: string; type: string; cacheControl: string },
): Response {
  const etag = `"${createHash("sha256").update(text).digest("hex").slice(0, 32)}"`;
  const headers = { "Cache-Control": cacheControl, ETag: etag };
  if (matches(c.req.header("If-None-Match"), etag)) return c.body(null, 304, headers);
  return c.body(text, 200, { ...headers, "Content-Type": type });
}

/** True when an `If-None-Match` header names `etag`, weakly compared, or is `*`. */
export function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, "");
  return header.split(",").some((tag) => tag.trim() === "*" || bare(tag) === bare(etag));
}
