// What the server and the relay's neighbours could see in the relay room test (protocol §7): a
// logging proxy in front of the server, recording every request that reaches it with the phone
// identity it carries (standing for a network address), and a timing attacker working from that
// log alone.

/** One request as the server's log would keep it. */
import type { Browser, BrowserContext } from "playwright-core";
import { startServer } from "../helpers/server_process.ts";
import { PHONE_CONTEXT } from "./browser.ts";
export type Logged = {
  at: number;
  method: string;
  path: string;
  /** The identity header, or null (the relay sends none). */
  phone: string | null;
  status: number;
  /** Request body length, and for `POST /api/ohttp` its SHA-256 (base64) and response length. */
  bytes: number;
  bodyHash?: string;
  responseBytes?: number;
};

/** The identity header each phone's context adds to what it sends the server. */
export const PHONE_HEADER = "x-phone-address";

/** Base64 SHA-256 of `bytes`. */
export async function hashOf(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return btoa(String.fromCharCode(...new Uint8Array(digest)));
}

/**
 * A proxy on a free loopback port forwarding everything to `target` (set once the server runs),
 * logging each request; bodies of `POST /api/ohttp` are hashed, never kept.
 */
export function startLoggingProxy() {
  const log: Logged[] = [];
  /** Each logged request's answer, settled once it is given (or could not be). */
  const answers = new WeakMap<Logged, Promise<unknown>>();
  let target = "";
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, forward);
  async function forward(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const body = request.method === "GET" || request.method === "HEAD"
      ? null
      : new Uint8Array(await request.arrayBuffer());
    const headers = new Headers(request.headers);
    headers.delete("host");
    headers.set("accept-encoding", "identity");
    const entry: Logged = {
      at: performance.now(),
      method: request.method,
      path: url.pathname,
      phone: request.headers.get(PHONE_HEADER),
      status: 0,
      bytes: body?.length ?? 0,
    };
    log.push(entry);
    let answered = () => {};
    answers.set(entry, new Promise<void>((resolve) => answered = resolve));
    try {
      return await passOn(request, url, body, headers, entry);
    } finally {
      answered();
    }
  }
  /** Forwards `request` (its `body` read already) to the target, noting its answer in `entry`. */
  async function passOn(
    request: Request,
    url: URL,
    body: Uint8Array | null,
    headers: Headers,
    entry: Logged,
  ): Promise<Response> {
    if (url.pathname === "/api/ohttp" && body !== null) entry.bodyHash = await hashOf(body);
    const answer = await fetch(new URL(url.pathname + url.search, target), {
      method: request.method,
      headers,
      body: body as Uint8Array<ArrayBuffer> | null,
      redirect: "manual",
    });
    const bytes = new Uint8Array(await answer.arrayBuffer());
    entry.status = answer.status;
    if (url.pathname === "/api/ohttp") entry.responseBytes = bytes.length;
    const out = new Headers(answer.headers);
    out.delete("content-encoding");
    out.delete("content-length");
    return new Response(answer.status === 204 || answer.status === 304 ? null : bytes, {
      status: answer.status,
      headers: out,
    });
  }
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    log,
    /**
     * The requests logged so far that `which` picks, once each has its answer (and so its status);
     * requests that come meanwhile are not among them.
     */
    async answered(which: (entry: Logged) => boolean): Promise<Logged[]> {
      const picked = log.filter(which);
      await Promise.all(picked.map((entry) => answers.get(entry)));
      return picked;
    },
    forwardTo(url: string) {
      target = url;
    },
    stop: () => server.shutdown(),
  };
}

/**
 * The real server (with `ADMIN_TOKEN` `token`, sealing every second) behind a logging proxy, its
 * `PUBLIC_URL` the proxy's: everything a phone or the relay sends the server is logged.
 */
export async function startServerBehindProxy(token: string) {
  const proxy = startLoggingProxy();
  const server = await startServer({
    env: { ADMIN_TOKEN: token, BLOCK_INTERVAL_MS: "1000", PUBLIC_URL: proxy.url },
  });
  proxy.forwardTo(server.url);
  return { proxy, server };
}

/**
 * A page load: the document, a static file of the page or its icon, and the server's key
 * configuration, read directly at each load of a page with a relay pin to hold the pin to it
 * (protocol §7.4): the only direct calls a phone may make after its registration.
 */
export function isPageLoad(entry: Logged): boolean {
  return entry.method === "GET" &&
    (entry.path === "/" || entry.path.startsWith("/static/") ||
      entry.path.startsWith("/favicon.") || entry.path === "/.well-known/ohttp-gateway");
}

/** Bytes RFC 9458 adds around a request's Binary HTTP: key id, KEM, KDF, AEAD, enc, AES-GCM tag. */
export const REQUEST_OVERHEAD = 1 + 2 + 2 + 2 + 32 + 16;
/** Bytes RFC 9458 adds around a response's Binary HTTP: the response nonce and the tag. */
export const RESPONSE_OVERHEAD = 16 + 16;

/**
 * The timing attacker: each relayed vote (at `at`) is paired with the phone whose next direct
 * request follows it soonest; with none after it, the phone whose last direct request came just
 * before it. Answers the guesses (null: no phone sent anything directly).
 */
export function pairByNextRequest(
  votes: readonly { at: number }[],
  direct: readonly Logged[],
): (string | null)[] {
  const named = direct.filter((entry) => entry.phone !== null);
  return votes.map(({ at }) => {
    const after = named.filter((entry) => entry.at > at);
    if (after.length > 0) return after.reduce((a, b) => (b.at < a.at ? b : a)).phone;
    const before = named.filter((entry) => entry.at <= at);
    return before.length > 0 ? before.reduce((a, b) => (b.at > a.at ? b : a)).phone : null;
  });
}

/** True when `correct` of `n` guesses is within chance (1 / `groupSize`) plus a margin. */
export function withinChance(correct: number, n: number, groupSize: number): boolean {
  // Binomial(n, 1/groupSize): mean n/g; allow the mean plus three standard deviations.
  const p = 1 / groupSize;
  return correct <= n * p + 3 * Math.sqrt(n * p * (1 - p));
}

/**
 * A phone's browser context at 390×844 whose requests to `server` (only) carry `name` in
 * {@link PHONE_HEADER}, standing for its network address; the relay's requests carry nothing.
 */
export async function phoneContext(
  browser: Browser,
  server: string,
  name: string,
): Promise<BrowserContext> {
  const context = await browser.newContext(PHONE_CONTEXT);
  const origin = new URL(server).origin;
  await context.route(
    (url) => url.origin === origin,
    (route) => route.continue({ headers: { ...route.request().headers(), [PHONE_HEADER]: name } }),
  );
  return context;
}
