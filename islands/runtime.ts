/**
 * Browser-safe. The islands' runtime in the browser: the attributes an island's host carries, the
 * hydration that finds its hosts, and the module workers started by name.
 * @module
 */
import { type ComponentType, h, hydrate } from "preact";

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
