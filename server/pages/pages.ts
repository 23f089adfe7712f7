/**
 * The page side of the server: GET / (routes/index.tsx), GET /board (routes/board.tsx), GET /lab
 * (routes/lab.tsx) and GET /print/cards (routes/print.tsx) rendered with their islands marked for hydration, and the built, content-hashed
 * island bundles under /static/build/, cached for a year.
 * @module
 */
import { type Context, Hono } from "hono";
import { compress } from "hono/compress";
import { type ComponentChild, h } from "preact";
import BoardPage, { handler as boardHandler } from "../../routes/board.tsx";
import IndexPage, { handler as indexHandler } from "../../routes/index.tsx";
import LabPage, { handler as labHandler } from "../../routes/lab.tsx";
import PrintPage, { handler as printHandler } from "../../routes/print.tsx";
import { notBuilt, notFound } from "../errors.ts";
import { type AddressOptions, pageAddresses, peerOf } from "./address.ts";
import { type AssetManifest, ICON_URL, renderPage } from "./render.tsx";

/** Where the build writes (scripts/build.ts) and the page reads the island bundles. */
export const BUILD_DIR = new URL("../../static/build/", import.meta.url);
/** URL prefix of the built files. */
export const BUILD_URL = "/static/build/";
const ICON_FILE = new URL("../../static/favicon.svg", import.meta.url);

/**
 * Options of {@link createPageApp}: the configured ring size, where the build wrote, and what the
 * page's address is made from (protocol §6 `PUBLIC_URL`, `TRUST_PROXY`; the machine's interfaces).
 */
export type PageAppOptions = {
  ringSize: number;
  buildDir?: URL;
  publicUrl?: string | null;
  trustProxy?: boolean;
  interfaces?: () => Deno.NetworkInterfaceInfo[];
  /** `OHTTP_RELAY`: the relay the voting page suggests to the presenter (protocol §7). */
  ohttpRelay?: string | null;
};

const BUILT_FILE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(js|css)$/;
const CONTENT_TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

/** The build manifest in `buildDir`, or null when the islands have not been built. */
export function readManifest(buildDir: URL = BUILD_DIR): AssetManifest | null {
  try {
    return JSON.parse(Deno.readTextFileSync(new URL("manifest.json", buildDir)));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** The Hono app serving the voting page, the bulletin board and their static bundles. */
export function createPageApp(options: PageAppOptions): Hono {
  const ringSize = options.ringSize;
  const buildDir = options.buildDir ?? BUILD_DIR;
  const addressOptions: AddressOptions = {
    publicUrl: options.publicUrl ?? null,
    trustProxy: options.trustProxy ?? false,
    interfaces: options.interfaces,
  };
  let manifest: AssetManifest | null = null;
  const app = new Hono();
  app.use("/", compress());
  app.use("/board", compress());
  app.use("/lab", compress());
  app.use(`${BUILD_URL}*`, compress());

  /** The document for `page`, or 503 while the islands are not built. */
  function servePage(c: Context, page: ComponentChild, title: string) {
    manifest ??= readManifest(buildDir);
    if (manifest === null) throw notBuilt();
    const html = renderPage(page, { title, manifest });
    c.header("Cache-Control", "no-cache");
    return c.html(html);
  }

  app.get("/", (c) => {
    const addresses = pageAddresses(c.req.raw, addressOptions, peerOf(c));
    const data = indexHandler(c.req.raw, {
      ringSize,
      addresses,
      relay: options.ohttpRelay ?? null,
    });
    return servePage(c, h(IndexPage, { data }), "Ringvote");
  });

  app.get("/board", (c) => {
    const addresses = pageAddresses(c.req.raw, addressOptions, peerOf(c));
    const data = boardHandler(c.req.raw, { addresses });
    return servePage(c, h(BoardPage, { data }), "Ringvote: public bulletin board");
  });

  app.get("/print/cards", (c) => {
    const addresses = pageAddresses(c.req.raw, addressOptions, peerOf(c));
    const data = printHandler(c.req.raw, { addresses });
    return servePage(c, h(PrintPage, { data }), "Ringvote: join cards to print");
  });

  app.get("/lab", (c) => {
    const data = labHandler(c.req.raw, { ringSize });
    return servePage(c, h(LabPage, { data }), "Ringvote: attack lab");
  });

  // Browsers ask for /favicon.ico by themselves when a document names no icon: both answer it.
  let icon: Uint8Array<ArrayBuffer> | null = null;
  for (const path of [ICON_URL, "/favicon.ico"]) {
    app.get(path, async (c) => {
      icon ??= await Deno.readFile(ICON_FILE);
      return c.body(icon, 200, {
        "Content-Type": "image/svg+xml",
        "Cache-Control": "public, max-age=86400",
      });
    });
  }

  app.get(`${BUILD_URL}:file`, async (c) => {
    const file = c.req.param("file");
    const match = BUILT_FILE.exec(file);
    if (!match) throw notFound(c.req.method, c.req.path);
    let body: Uint8Array;
    try {
      body = await Deno.readFile(new URL(file, buildDir));
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) throw notFound(c.req.method, c.req.path);
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
