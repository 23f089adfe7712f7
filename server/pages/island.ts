/**
 * The islands' runtime on the server: the marker an island renders into, with its props in a
 * `<script type="application/json">` element (no inline code, so a Content-Security-Policy without
 * 'unsafe-inline' holds), found in the browser by islands/runtime.ts `hydrateIslands`.
 * @module
 */
import { type ComponentType, createContext, Fragment, h, type VNode } from "preact";
import { useContext } from "preact/hooks";
import { ISLAND_ATTRIBUTE, PROPS_ATTRIBUTE } from "../../islands/runtime.ts";

/** What one server render collects: the islands it used and the next props element id. */
export type IslandRender = { used: Set<string>; next: number };

/** Set by the server render around the page; islands register themselves in it. */
export const IslandContext = /* @__PURE__ */ createContext<IslandRender | null>(null);

/** JSON of `props`, safe inside a script element (no `<`, `>`, `&`, U+2028 or U+2029 left raw). */
export function serializeProps(props: unknown): string {
  return JSON.stringify(props ?? {}).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * Renders `component` with `props` inside an island host element, followed by the props element,
 * and records `name` so the page loads that island's bundle.
 */
export function Island<P extends Record<string, unknown>>(
  { name, component, props }: { name: string; component: ComponentType<P>; props: P },
): VNode {
  const render = useContext(IslandContext);
  if (render === null) throw new Error(`Island "${name}" rendered outside renderPage`);
  render.used.add(name);
  const id = `island-props-${render.next++}`;
  return h(
    Fragment,
    null,
    h("div", { [ISLAND_ATTRIBUTE]: name, [PROPS_ATTRIBUTE]: id }, h(component, props)),
    h("script", {
      type: "application/json",
      id,
      dangerouslySetInnerHTML: { __html: serializeProps(props) },
    }),
  );
}
