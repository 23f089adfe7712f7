// Security headers on every answer, API and pages alike, errors and 404s included.
// The policy allows exactly what the pages load: module scripts and the stylesheet from this
// origin (static/build/), fetches to this origin, and nothing inline but style attributes
// (bar widths); island props travel in `<script type="application/json">`, which is data, not
// code, so no script needs 'unsafe-inline'.
import type { MiddlewareHandler } from "hono";
import { refusal } from "./errors.ts";

/** The Content-Security-Policy of every answer. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // Inline style attributes only (rendered bar widths); inline <style> elements stay refused.
  "style-src-attr 'unsafe-inline'",
  "connect-src 'self'",
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

/** A Host header: a name or IPv4 address, or a bracketed IPv6 one, and an optional port. */
export const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;
