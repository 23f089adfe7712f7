// A lying server for browser tests: an HTTP proxy in front of the real one that passes every
// request through and lets a test rewrite the JSON answers, one lie at a time; and the same lie
// told in-process, as an API client's transport.
import type { Transport } from "../../lib/client/api_client.ts";

/** Changes a parsed JSON answer in place; `path` is the request's pathname. */
// deno-lint-ignore no-explicit-any
export type Rewrite = (path: string, body: any) => void;

/** Starts a proxy to `target` on a free loopback port, answering through `rewrite` (if any). */
export function startTamperingProxy(target: string, rewrite: Rewrite | null = null) {
  let lie = rewrite;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const headers = new Headers();
    for (const name of ["accept", "content-type"]) {
      const value = req.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    const upstream = await fetch(new URL(url.pathname + url.search, target), {
      method: req.method,
      headers,
      body: req.body,
    });
    const out = new Headers(upstream.headers);
    // fetch has already decoded the body.
    out.delete("content-encoding");
    out.delete("content-length");
    if (!(upstream.headers.get("content-type") ?? "").startsWith("application/json")) {
      return new Response(upstream.body, { status: upstream.status, headers: out });
    }
    const body = await upstream.json();
    lie?.(url.pathname, body);
    return new Response(JSON.stringify(body), { status: upstream.status, headers: out });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    /** Replaces the current lie; null tells the truth. */
    tell(next: Rewrite | null) {
      lie = next;
    },
    close: () => server.shutdown(),
  };
}

/**
 * The in-process lying server: `transport` (a Hono app's `request`, or fetch) with its JSON
 * answers rewritten by `rewrite`, for an API client in tests.
 */
export function tamperingTransport(transport: Transport, rewrite: Rewrite): Transport {
  return async (url, init) => {
    const res = await transport(url, init);
    if (!(res.headers.get("content-type") ?? "").startsWith("application/json")) return res;
    const body = await res.json();
    rewrite(new URL(url, "http://localhost").pathname, body);
    const headers = new Headers(res.headers);
    headers.delete("content-length");
    return Response.json(body, { status: res.status, headers });
  };
}
