/**
 * The presenter's calls (protocol §4.9): `Authorization: Bearer <token>` with the admin token,
 * compared in constant time, and a bound on wrong guesses. Each address may fail
 * {@link PRESENTER_FAILURES_PER_WINDOW} times in {@link PRESENTER_WINDOW_MS}; beyond that, every
 * presenter call from it is answered 429 `too_many_attempts` with `Retry-After` until the window
 * ends, right token or not, so that guessing costs a minute per ten tries.
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { refusal } from "./errors.ts";
import { peerOf } from "./pages/address.ts";

/** Wrong presenter tokens one address may send in {@link PRESENTER_WINDOW_MS}. */
export const PRESENTER_FAILURES_PER_WINDOW = 10;
/** The window over which wrong presenter tokens are counted, ms. */
export const PRESENTER_WINDOW_MS = 60_000;
/** Most addresses whose failures are remembered at once: the table never outgrows this. */
export const MAX_TRACKED_ADDRESSES = 10_000;

/** Options of {@link presenterOnly}. */
export type PresenterAuthOptions = {
  /** Milliseconds since the epoch; `Date.now` by default. */
  now?: () => number;
  /**
   * `TRUST_PROXY`: the address is the last `X-Forwarded-For` value, the one the nearest proxy
   * appended, so that clients behind it are counted apart; otherwise the connection's peer.
   */
  trustProxy?: boolean;
};

/** The failures of one address in the window that started at `since`. */
type Failures = { since: number; count: number };

/**
 * Middleware admitting only `Authorization: Bearer <token>` with the presenter's token, compared
 * in constant time; anything else is 401 `unauthorized`, and an address past its failures is 429
 * `too_many_attempts` (see the module). The address is the connection's peer (`remoteAddr`), or
 * with `trustProxy` the client the proxy names: without it, a proxy's clients share one count.
 */
export function presenterOnly(
  token: string,
  { now = Date.now, trustProxy = false }: PresenterAuthOptions = {},
) {
  const expected = new TextEncoder().encode(token);
  const failures = new Map<string, Failures>();
  const middleware: MiddlewareHandler = async (c: Context, next) => {
    const address = addressBucket((trustProxy ? forwardedFor(c) : null) ?? peerOf(c) ?? "unknown");
    const at = now();
    let seen = failures.get(address);
    if (seen !== undefined && at - seen.since >= PRESENTER_WINDOW_MS) {
      failures.delete(address);
      seen = undefined;
    }
    if (seen !== undefined && seen.count >= PRESENTER_FAILURES_PER_WINDOW) {
      const seconds = Math.max(1, Math.ceil((seen.since + PRESENTER_WINDOW_MS - at) / 1000));
      throw refusal(
        "too_many_attempts",
        `Too many wrong presenter tokens from this address: try again in ${seconds} s`,
        { headers: { "Retry-After": String(seconds) } },
      );
    }
    const header = c.req.header("authorization") ?? "";
    // The scheme's name is case-insensitive (RFC 9110 §11.1); the token is compared as sent.
    const given = new TextEncoder().encode(/^bearer /i.test(header) ? header.slice(7) : "");
    if (!sameBytes(given, expected)) {
      if (seen === undefined) {
        forgetOldest(failures, at);
        failures.set(address, { since: at, count: 1 });
      } else {
        seen.count++;
      }
      throw refusal(
        "unauthorized",
        "This call is the presenter's: send Authorization: Bearer <ADMIN_TOKEN>",
        { headers: { "WWW-Authenticate": 'Bearer realm="ringvote presenter"' } },
      );
    }
    await next();
  };
  return middleware;
}

/** The last `X-Forwarded-For` value (the nearest proxy's), or null when there is none. */
function forwardedFor(c: Context): string | null {
  const values = (c.req.header("x-forwarded-for") ?? "").split(",").map((v) => v.trim());
  return values.findLast((v) => v !== "") ?? null;
}

/**
 * What wrong tokens are counted under for `address`: an IPv4 address as it is (an IPv4-mapped
 * IPv6 one as its IPv4 address), an IPv6 address by its /64 network, which one client commonly
 * holds whole (RFC 6177), so that walking through its addresses buys no more guesses. Anything
 * that is not an address is counted as it is.
 */
export function addressBucket(address: string): string {
  const groups = ipv6Groups(address.replace(/^\[|\]$/g, "").replace(/%.*$/, "").toLowerCase());
  if (groups === null) return address;
  if (groups.slice(0, 6).every((g, i) => g === (i === 5 ? 0xffff : 0))) {
    return [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join(".");
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address in text (`::` and an IPv4 tail allowed), or null. */
function ipv6Groups(text: string): number[] | null {
  const halves = text.split("::");
  if (!text.includes(":") || halves.length > 2) return null;
  const parts = (half: string): number[] | null => {
    if (half === "") return [];
    const out: number[] = [];
    for (const part of half.split(":")) {
      const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(part);
      if (v4) {
        const [a, b, c, d] = v4.slice(1).map(Number);
        if ([a, b, c, d].some((n) => n > 255)) return null;
        out.push(a << 8 | b, c << 8 | d);
      } else if (/^[0-9a-f]{1,4}$/.test(part)) out.push(parseInt(part, 16));
      else return null;
    }
    return out;
  };
  const head = parts(halves[0]);
  const tail = halves.length === 2 ? parts(halves[1]) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  return [...head, ...Array(missing).fill(0), ...tail];
}

/** Makes room for one more address: drops windows that ended, then the oldest if still full. */
function forgetOldest(failures: Map<string, Failures>, at: number): void {
  if (failures.size < MAX_TRACKED_ADDRESSES) return;
  for (const [address, { since }] of failures) {
    if (at - since >= PRESENTER_WINDOW_MS) failures.delete(address);
  }
  // A Map iterates in insertion order: the first entries are the oldest windows.
  for (const address of failures.keys()) {
    if (failures.size < MAX_TRACKED_ADDRESSES) break;
    failures.delete(address);
  }
}

/** Byte equality whose time depends on the lengths only, not on where the bytes differ. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i] ?? 0) ^ b[i];
  return diff === 0;
}
