// The Hono application: API sub-apps, the 64 KiB body limit, JSON 404s and the one error
// handler that maps typed errors to `{"error": {"code", "message"}}` (protocol §4), and the
// security headers on every answer. A 500 names no cause: the error is logged, never answered.
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { MAX_BODY_BYTES } from "../lib/protocol/schemas.ts";
import { createBlockApp } from "./api_block.ts";
import { createPkiApp } from "./api_pki.ts";
import { createVoteApp } from "./api_vote.ts";
import { type Config, DEFAULT_RING_SIZE } from "./config.ts";
import { notFound, refusal, toApiError } from "./errors.ts";
import { createHeadSigner, lensSeed } from "./head_signer.ts";
import { createLensApp } from "./lens.ts";
import { createPageApp } from "./pages.ts";
import { securityHeaders } from "./security.ts";
import type { Store } from "./store.ts";
import { createInProcessVerifier, type Verifier } from "./verifier.ts";

/**
 * What the application needs: the store; optionally the configuration the page uses (default
 * ring size otherwise), where the page bundles were built, and the verifier of votes and new keys
 * (this thread's by default; main.ts passes the worker pool where workers exist).
 */
export type AppOptions = {
  store: Store;
  config?: Pick<Config, "ringSize">;
  buildDir?: URL;
  verifier?: Verifier;
};

/** The whole HTTP application over `store`. */
export function createApp(options: AppOptions): Hono {
  const { store } = options;
  const verifier = options.verifier ?? createInProcessVerifier();
  const ringSize = options.config?.ringSize ?? DEFAULT_RING_SIZE;
  const app = new Hono();

  app.use("*", securityHeaders());
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw refusal(
          "body_too_large",
          `Request body is larger than ${MAX_BODY_BYTES} bytes`,
        );
      },
    }),
  );

  app.route("/api/pki", createPkiApp(store, verifier));
  app.route("/api/vote", createVoteApp(store, verifier));
  const seed = store.serverSeed();
  const signer = createHeadSigner(seed);
  // The attack lab's lying-server lens: read-only, only for requests that opt in by path, and
  // signing with a key of its own, so the server key never signs a lie (protocol §4.7).
  const lensSigner = createHeadSigner(lensSeed(seed));
  app.route("/api/lens", createLensApp((path) => Promise.resolve(app.request(path)), lensSigner));
  app.route("/api", createBlockApp(store, signer));

  app.notFound((c) => {
    throw notFound(c.req.method, c.req.path);
  });

  // The one place an error becomes an answer: JSON, or plain text for a browser asking for a page.
  app.onError((error, c) => {
    const answer = toApiError(error);
    if (answer.code === "internal_error") {
      console.error(`${c.req.method} ${c.req.path} failed:`, error);
    }
    return asksForPage(c.req.path, c.req.header("Accept"))
      ? answer.getTextResponse()
      : answer.getResponse();
  });

  app.route("/", createPageApp({ ringSize, buildDir: options.buildDir }));
  return app;
}

/** True for a request outside the API from a client that takes HTML: a browser loading a page. */
function asksForPage(path: string, accept: string | undefined): boolean {
  return !path.startsWith("/api/") && (accept ?? "").includes("text/html");
}
