/**
 * Compression of the API's answers (protocol §4.1): an answer over {@link COMPRESS_MIN_BYTES} whose
 * type is JSON or text is sent brotli- or gzip-encoded, as the request's `Accept-Encoding` allows
 * (brotli first: a sealed vote is about 540 bytes so, against 670 with gzip and 1,920 as JSON).
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

/** Answers this long or shorter are sent as they are: encoding them saves next to nothing. */
export const COMPRESS_MIN_BYTES = 1024;

/** The encodings the API answers in, best first. */
export const ENCODINGS = ["br", "gzip"] as const;

/** One of {@link ENCODINGS}. */
export type Encoding = typeof ENCODINGS[number];

/** The answer types worth compressing: the API's JSON and the log's text (protocol §4.10). */
const COMPRESSIBLE = /^(?:application\/json|text\/plain)\b/i;

/**
 * Brotli's quality 4 and gzip's level 6: a few milliseconds for a page of 100 votes (190 KB), on
 * the request's thread (node:zlib's asynchronous calls take that thread too under Deno); higher
 * brotli qualities save another 10% for 40 to 80 times the time.
 */
const ENCODERS: Record<Encoding, (bytes: Uint8Array<ArrayBuffer>) => Uint8Array<ArrayBuffer>> = {
  br: (bytes) =>
    new Uint8Array(brotliCompressSync(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 4,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    })),
  gzip: (bytes) => new Uint8Array(gzipSync(bytes, { level: 6 })),
};

/**
 * The encoding to answer in for an `Accept-Encoding` header (RFC 9110 §12.5.3): the accepted one
 * of highest weight among {@link ENCODINGS}, brotli on a tie; `*` stands for any not named; none
 * for a missing header, or when every one is refused (`q=0`).
 */
export function chooseEncoding(header: string | null | undefined): Encoding | null {
  if (header === null || header === undefined) return null;
  const weights = new Map<string, number>();
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (name === "") continue;
    const q = params.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p)).find((m) => m !== null);
    const weight = q ? Number(q[1]) : 1;
    weights.set(name.trim(), Number.isFinite(weight) ? weight : 0);
  }
  let best: { encoding: Encoding; weight: number } | null = null;
  for (const encoding of ENCODINGS) {
    const weight = weights.get(encoding) ?? weights.get("*") ?? 0;
    if (weight > 0 && (best === null || weight > best.weight)) best = { encoding, weight };
  }
  return best?.encoding ?? null;
}

/**
 * Middleware compressing the answers under it: a JSON or text answer over
 * {@link COMPRESS_MIN_BYTES} gets the encoding {@link chooseEncoding} picks for the request, its
 * `Content-Length` dropped and a strong `ETag` made weak (RFC 9110 §8.8.1: the encoded bytes are
 * another representation, equivalent in meaning). Such an answer, and a 304 in its place, says
 * `Vary: Accept-Encoding`, so a shared cache keeps each encoding apart; a shorter one is the same
 * for every request and says nothing (the board's polls are most answers, and headers most of
 * their bytes).
 */
export function compressAnswers(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (c.res.status === 304) {
      c.res.headers.append("Vary", "Accept-Encoding");
      return;
    }
    const type = c.res.headers.get("Content-Type") ?? "";
    if (
      !COMPRESSIBLE.test(type) || c.req.method === "HEAD" || c.res.body === null ||
      c.res.headers.has("Content-Encoding") ||
      /\bno-transform\b/i.test(c.res.headers.get("Cache-Control") ?? "")
    ) return;
    const bytes = new Uint8Array(await c.res.arrayBuffer());
    const { status, statusText } = c.res;
    const headers = new Headers(c.res.headers);
    const encoding = chooseEncoding(c.req.header("Accept-Encoding"));
    let body = bytes;
    if (bytes.length > COMPRESS_MIN_BYTES) {
      headers.append("Vary", "Accept-Encoding");
      if (encoding !== null) {
        body = ENCODERS[encoding](bytes);
        headers.delete("Content-Length");
        headers.set("Content-Encoding", encoding);
        const etag = headers.get("ETag");
        if (etag !== null && !etag.startsWith("W/")) headers.set("ETag", `W/${etag}`);
      }
    }
    // A fresh Response: Hono's setter would copy the old headers over the new ones.
    c.res = undefined;
    c.res = new Response(body, { status, statusText, headers });
  };
}
