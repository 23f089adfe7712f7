// Security headers on every answer, API and pages alike, errors and 404s included; the Host check;
// and the JSON content type every write call of the API must carry.
// The policy allows exactly what the pages load: module scripts and the stylesheet from this
// origin (static/build/), fetches to this origin and to a relay, and nothing inline but style attributes
// (bar widths); island props travel in `<script type="application/json">`, which is data, not
// code, so no script needs 'unsafe-inline'.
import type { MiddlewareHandler } from "hono";
import { quote, refusal } from "./errors.ts";

/** The Content-Security-Policy of every answer. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // Inline style attributes only (rendered bar widths); inline <style> elements stay refused.
  "style-src-attr 'unsafe-inline'",
  // Fetches to this origin, and to the relay phones send through (protocol §7): the presenter
  // names it in the browser and the server never does, so any http(s) origin may be it.
  "connect-src 'self' http: https:",
  // Module workers built from islands/workers/ (the board's audit and anonymity analysis).
  "worker-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Every header the middleware sets, name → value. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy": CONTENT_SECURITY_POLICY,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
};

/** Middleware adding {@link SECURITY_HEADERS} to the answer, whatever produced it. */
export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
      c.res.headers.set(name, value);
    }
  };
}

/** Longest `Host` header accepted: a DNS name (253) with a port. */
export const MAX_HOST_LENGTH = 261;

/**
 * Middleware answering 400 `invalid_host` to a request whose `Host` header is over
 * {@link MAX_HOST_LENGTH} characters, or is not what a URL's host can be (the request's URL and the
 * page's address and QR code are built from it), so a hostile header never reaches a 500. Any host
 * a URL takes passes, `_` in a container's name included.
 */
export function hostGuard(): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host");
    if (host !== undefined && !isUrlHost(host)) {
      throw refusal(
        "invalid_host",
        `Host header is not a host name, or over ${MAX_HOST_LENGTH} characters`,
      );
    }
    await next();
  };
}

/** True when `host` is at most {@link MAX_HOST_LENGTH} characters and a URL's whole host. */
export function isUrlHost(host: string): boolean {
  if (host.length === 0 || host.length > MAX_HOST_LENGTH || /[\s/?#@\\]/.test(host)) return false;
  return URL.canParse(`http://${host}/`);
}

/** The methods of write calls: every one of them under `/api/` takes a JSON body. */
const WRITE_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Middleware answering 415 `unsupported_media_type` to a write call (POST, PUT, PATCH, DELETE)
 * whose `Content-Type` is not `application/json` (parameters such as `charset` allowed, any case),
 * or that has none, bodiless calls (`POST /api/lab/reset`) included. A browser sends a form or a
 * `text/plain` POST to another site without asking it first (no CORS preflight), never one of this
 * type, so no page elsewhere can make a visitor's browser write here. It reads neither the body nor
 * the database.
 */
export function jsonWrites(): MiddlewareHandler {
  return async (c, next) => {
    // The Oblivious HTTP gateway takes message/ohttp-req; the write inside is held to this rule.
    if (WRITE_METHODS.has(c.req.method) && c.req.path !== "/api/ohttp") {
      const type = c.req.header("content-type");
      if (type === undefined || !isJsonMediaType(type)) {
        const sent = type === undefined ? "no Content-Type" : `"${quote(type)}"`;
        throw refusal(
          "unsupported_media_type",
          `Send write calls with Content-Type: application/json, got ${sent}`,
        );
      }
    }
    await next();
  };
}

/** True when the media type of Content-Type header `value` is `application/json`. */
function isJsonMediaType(value: string): boolean {
  return value.split(";", 1)[0].trim().toLowerCase() === "application/json";
}

/** A Host header: a name or IPv4 address, or a bracketed IPv6 one, and an optional port. */
export const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;
