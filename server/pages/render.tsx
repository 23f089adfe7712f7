/**
 * Server-side rendering of a page: the route's component to HTML inside the document shell, with
 * the stylesheets and the module scripts of exactly the islands the page used.
 * @module
 */
import type { ComponentChild } from "preact";
import { renderToString } from "preact-render-to-string";
import { WORKERS_ELEMENT_ID } from "../../islands/runtime.ts";
import { IslandContext, type IslandRender, serializeProps } from "./island.ts";

/** The build's asset manifest (static/build/manifest.json), written by scripts/build.ts. */
export type AssetManifest = {
  /** Digest of the sources the build read; `--if-needed` rebuilds when it changes. */
  fingerprint: string;
  /** Island name → URL of its hydration module. */
  islands: Record<string, string>;
  /** Island name → URLs of the chunks its module imports statically (preloaded). */
  preload: Record<string, string[]>;
  /** Stylesheet URLs. */
  styles: string[];
  /** Worker name (a file of islands/workers/) → URL of its module worker. */
  workers: Record<string, string>;
};

/** The pages' icon, an SVG served by the page app (img-src 'self' in the security policy). */
export const ICON_URL = "/favicon.svg";

/** A complete HTML document for `page`, titled `title`, with the assets of `manifest`. */
export function renderPage(
  page: ComponentChild,
  { title, manifest }: { title: string; manifest: AssetManifest },
): string {
  const render: IslandRender = { used: new Set(), next: 0 };
  const body = renderToString(
    <IslandContext.Provider value={render}>{page}</IslandContext.Provider>,
  );
  const islands = [...render.used].sort();
  const missing = islands.filter((name) => !manifest.islands[name]);
  if (missing.length > 0) {
    throw new Error(`island bundles missing from the build manifest: ${missing.join(", ")}`);
  }
  const preload = [...new Set(islands.flatMap((name) => manifest.preload[name] ?? []))];
  const head = renderToString(
    <>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{title}</title>
      <link rel="icon" type="image/svg+xml" href={ICON_URL} />
      {manifest.styles.map((href) => <link key={href} rel="stylesheet" href={href} />)}
      {preload.map((href) => <link key={href} rel="modulepreload" href={href} />)}
      {islands.map((name) => <script key={name} type="module" src={manifest.islands[name]} />)}
    </>,
  );
  // Islands start their workers by name; the hashed URLs travel as data, like island props.
  const workers = islands.length > 0 && Object.keys(manifest.workers ?? {}).length > 0
    ? `<script type="application/json" id="${WORKERS_ELEMENT_ID}">${
      serializeProps(manifest.workers)
    }</script>`
    : "";
  return `<!DOCTYPE html><html lang="en"><head>${head}</head><body>${body}${workers}</body></html>`;
}
