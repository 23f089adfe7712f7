// A stalling server for browser tests: an HTTP proxy in front of the real one that passes every
// request through, except those to the paths it is told to stall, which it holds unanswered until
// it is told to answer again.

/** Starts a proxy to `target` on a free loopback port, stalling nothing yet. */
export function startStallingProxy(target: string) {
  let stalled = new Set<string>();
  let resume = Promise.withResolvers<void>();
  let held = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    if (stalled.has(url.pathname)) {
      held++;
      // One the browser gave up on meanwhile is answered to no one, which Deno.serve allows.
      await resume.promise;
    }
    const headers = new Headers();
    for (const name of ["accept", "content-type", "authorization"]) {
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
    return new Response(upstream.body, { status: upstream.status, headers: out });
  });
  /** Answers every held request, and every later one. */
  const answer = () => {
    stalled = new Set();
    resume.resolve();
    resume = Promise.withResolvers();
  };
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    /** Holds every request to one of `paths` (pathnames, e.g. `/api/blocks`) from now on. */
    stall(...paths: string[]) {
      stalled = new Set(paths);
    },
    answer,
    /** How many requests were held so far. */
    held: () => held,
    async close() {
      answer();
      await server.shutdown();
    },
  };
}
