// Browser-safe. Island plumbing shared by the server render and the browser: the marker an island
// renders into, with its props in a `<script type="application/json">` element (no inline code,
// so a Content-Security-Policy without 'unsafe-inline' holds), and the hydration that finds it.
import { type ComponentType, createContext, Fragment, h, hydrate, type VNode } from "preact";
import { useContext } from "preact/hooks";

/** What one server render collects: the islands it used and the next props element id. */
export type IslandRender = { used: Set<string>; next: number };

/** Set by the server render around the page; islands register themselves in it. */
export const IslandContext = /* @__PURE__ */ createContext<IslandRender | null>(null);

/** Attribute naming the island a DOM element hosts. */
export const ISLAND_ATTRIBUTE = "data-island";
/** Attribute holding the id of the island's props element. */
export const PROPS_ATTRIBUTE = "data-island-props";

/** Id of the element holding the worker name → module URL map of the build. */
export const WORKERS_ELEMENT_ID = "island-workers";

/**
 * Browser side: starts the module worker built from `islands/workers/{name}.ts`; throws when the
 * page carries no such worker (a build without it, or a page without islands).
 */
export function startWorker(name: string): Worker {
  const text = document.getElementById(WORKERS_ELEMENT_ID)?.textContent;
  const url = (JSON.parse(text || "{}") as Record<string, string>)[name];
  if (!url) throw new Error(`No worker named "${name}" in this page's build`);
  return new Worker(url, { type: "module", name });
}

/** JSON of `props`, safe inside a script element (no `<`, `>`, `&`, U+2028 or U+2029 left raw). */
export function serializeProps(props: unknown): string {
  return JSON.stringify(props ?? {}).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * Server side: renders `component` with `props` inside an island host element, followed by the
 * props element, and records `name` so the page loads that island's bundle.
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

/**
 * Browser side: hydrates every host of island `name` under `root` with its server-rendered props;
 * answers how many it hydrated.
 */
export function hydrateIslands<P>(
  name: string,
  component: ComponentType<P>,
  { root = document }: { root?: ParentNode } = {},
): number {
  const hosts = root.querySelectorAll<HTMLElement>(`[${ISLAND_ATTRIBUTE}="${name}"]`);
  for (const host of hosts) {
    const propsId = host.getAttribute(PROPS_ATTRIBUTE);
    const text = propsId ? document.getElementById(propsId)?.textContent : null;
    const props = JSON.parse(text || "{}") as P;
    hydrate(
      h(component as ComponentType<Record<string, unknown>>, props as Record<string, unknown>),
      host,
    );
  }
  return hosts.length;
}
