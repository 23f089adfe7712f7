// The page side of the server: GET / rendered from routes/index.tsx with its island marked for
// hydration, and the built, content-hashed island bundles under /static/build/, cached for a year.
import { Hono } from "hono";
import { compress } from "hono/compress";
import { h } from "preact";
import IndexPage, { handler as indexHandler } from "../routes/index.tsx";
import { type AssetManifest, renderPage } from "./render.tsx";

/** Where the build writes (scripts/build.ts) and the page reads the island bundles. */
export const BUILD_DIR = new URL("../static/build/", import.meta.url);
/** URL prefix of the built files. */
export const BUILD_URL = "/static/build/";

/** Options of {@link createPageApp}; the defaults come from the environment and the build. */
export type PageAppOptions = { ringSize?: number; buildDir?: URL };

const BUILT_FILE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(js|css)$/;
const CONTENT_TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

/** The ring size from `RING_SIZE` (DESIGN §6), default 8; throws for a value outside 2..64. */
export function ringSizeFromEnv(value = Deno.env.get("RING_SIZE")): number {
  if (value === undefined || value === "") return 8;
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n < 2 || n > 64) {
    throw new Error(`RING_SIZE must be an integer from 2 to 64, got "${value}"`);
  }
  return n;
}

/** The build manifest in `buildDir`, or null when the islands have not been built. */
export function readManifest(buildDir: URL = BUILD_DIR): AssetManifest | null {
  try {
    return JSON.parse(Deno.readTextFileSync(new URL("manifest.json", buildDir)));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** The Hono app serving the voting page and its static bundles. */
export function createPageApp(options: PageAppOptions = {}): Hono {
  const ringSize = options.ringSize ?? ringSizeFromEnv();
  const buildDir = options.buildDir ?? BUILD_DIR;
  let manifest: AssetManifest | null = null;
  const app = new Hono();
  app.use("/", compress());
  app.use(`${BUILD_URL}*`, compress());

  app.get("/", (c) => {
    manifest ??= readManifest(buildDir);
    if (manifest === null) {
      return c.text("The page's scripts are not built: run `deno task build`", 503);
    }
    const data = indexHandler(c.req.raw, { ringSize });
    const html = renderPage(h(IndexPage, { data }), { title: "Ringvote", manifest });
    c.header("Cache-Control", "no-cache");
    return c.html(html);
  });

  app.get(`${BUILD_URL}:file`, async (c) => {
    const file = c.req.param("file");
    const match = BUILT_FILE.exec(file);
    if (!match) return notFound(c.req.path);
    let body: Uint8Array;
    try {
      body = await Deno.readFile(new URL(file, buildDir));
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return notFound(c.req.path);
      throw error;
    }
    // Every built file name carries a hash of its content, so it never changes.
    return c.body(body as Uint8Array<ArrayBuffer>, 200, {
      "Content-Type": CONTENT_TYPES[match[1]],
      "Cache-Control": "public, max-age=31536000, immutable",
    });
  });

  return app;
}

function notFound(path: string): Response {
  return Response.json(
    { error: { code: "not_found", message: `No file at "${path}"` } },
    { status: 404 },
  );
}
