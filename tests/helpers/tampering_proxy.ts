// A lying server for browser tests: an HTTP proxy in front of the real one that passes every
// request through and lets a test rewrite the JSON answers, or answer some requests itself (text
// answers such as the log's of protocol §4.10 included), one lie at a time; and the same lie told
// in-process, as an API client's transport.
import type { Transport } from "../../lib/client/api_client.ts";

/** Changes a parsed JSON answer in place; `path` is the request's pathname. */
// deno-lint-ignore no-explicit-any
export type Rewrite = (path: string, body: any) => void;

/** A request as an {@link Answer} sees it. */
export type AskedRequest = {
  /** The request's pathname. */
  path: string;
  /** The request's method, upper case. */
  method: string;
  /**
   * The real server's answer to this very request, asked for on the first call only (later calls
   * answer the same Response, whose body can be read once).
   */
  honest: () => Promise<Response>;
};

/**
 * Answers a request in the real server's place: the Response to send as it is, or null to let the
 * real server answer (its JSON then rewritten as usual). An answer that reads the body of
 * `honest()` must answer itself.
 */
export type Answer = (request: AskedRequest) => Response | null | Promise<Response | null>;

/** What a lying server tells: its own answers where `answer` gives one, JSON rewritten elsewhere. */
export type Lie = { answer?: Answer; rewrite?: Rewrite };

/** A rewrite alone, or a whole lie: both as a {@link Lie}. */
function lieOf(told: Rewrite | Lie | null): Lie {
  if (told === null) return {};
  return typeof told === "function" ? { rewrite: told } : told;
}

/**
 * The answer to one request under `lie`: its own, or the real one from `ask` (called at most once)
 * with its JSON rewritten; either way never to be kept ({@link uncached}).
 */
async function answerUnder(
  lie: Lie,
  request: { path: string; method: string; ask: () => Promise<Response> },
): Promise<Response> {
  return uncached(await toldAnswer(lie, request));
}

/**
 * `answer` asking that nothing of it be kept: `Cache-Control: no-store`, no `ETag`. A liar decides
 * its own headers, and this one changes its answers while a page watches, which the page must see:
 * the real server's sealed answers are cacheable for good (protocol §4.4), so a browser would go on
 * showing the first answer it kept.
 */
function uncached(answer: Response): Response {
  const headers = new Headers(answer.headers);
  headers.set("cache-control", "no-store");
  headers.delete("etag");
  return new Response(answer.body, { status: answer.status, headers });
}

/** The answer to one request under `lie`, with the headers it was given. */
async function toldAnswer(
  lie: Lie,
  { path, method, ask }: { path: string; method: string; ask: () => Promise<Response> },
): Promise<Response> {
  // Widened: TypeScript does not see `honest` assign it inside `lie.answer`.
  let asked = null as Promise<Response> | null;
  const honest = () => asked ??= ask();
  const own = await lie.answer?.({ path, method: method.toUpperCase(), honest });
  if (own) {
    // A real answer asked for and left unread is released, not leaked.
    if (asked !== null) {
      const unread = await asked;
      if (!unread.bodyUsed) await unread.body?.cancel();
    }
    return own;
  }
  const upstream = await honest();
  const headers = new Headers(upstream.headers);
  // fetch has already decoded the body; the rewritten one has another length.
  headers.delete("content-encoding");
  headers.delete("content-length");
  if (
    !lie.rewrite || !(upstream.headers.get("content-type") ?? "").startsWith("application/json")
  ) {
    return new Response(upstream.body, { status: upstream.status, headers });
  }
  const body = await upstream.json();
  lie.rewrite(path, body);
  return new Response(JSON.stringify(body), { status: upstream.status, headers });
}

/**
 * Starts a proxy to `target` on a free loopback port, telling `lie` (if any): a rewrite of the JSON
 * answers, or a {@link Lie} that may also answer requests itself.
 */
export function startTamperingProxy(target: string, lie: Rewrite | Lie | null = null) {
  let told = lieOf(lie);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const url = new URL(req.url);
    const headers = new Headers();
    for (const name of ["accept", "content-type"]) {
      const value = req.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    const ask = () =>
      fetch(new URL(url.pathname + url.search, target), {
        method: req.method,
        headers,
        body: req.body,
      });
    return answerUnder(told, { path: url.pathname, method: req.method, ask });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    /** Replaces the current lie; null tells the truth. */
    tell(next: Rewrite | Lie | null) {
      told = lieOf(next);
    },
    close: () => server.shutdown(),
  };
}

/**
 * The in-process lying server: `transport` (a Hono app's `request`, or fetch) telling `lie` — its
 * JSON answers rewritten, or a {@link Lie} that may also answer requests itself — for an API
 * client in tests.
 */
export function tamperingTransport(transport: Transport, lie: Rewrite | Lie): Transport {
  const told = lieOf(lie);
  return (url, init) =>
    answerUnder(told, {
      path: new URL(url, "http://localhost").pathname,
      method: init.method ?? "GET",
      ask: async () => await transport(url, init),
    });
}
