/**
 * Where the demo round finds a voter's panel (page §11): each panel enters the handlers its own
 * buttons run once its status lines are decided, and leaves when it is removed.
 * @module
 */
import type { DemoPanel } from "../../lib/client/voter/demo_round.ts";

/** How long the round waits for a new voter's panel to appear. */
const PANEL_WAIT_MS = 15_000;

/** The panels shown, by namespace, and the round's wait for one. */
export type PanelRegistry = {
  /** Enters (or, with null, removes) the panel of `namespace`. */
  set(namespace: string, panel: DemoPanel | null): void;
  /** The panel of `namespace`, once it is entered; rejects after a while without it. */
  get(namespace: string): Promise<DemoPanel>;
};

/** An empty registry. */
export function createPanelRegistry(): PanelRegistry {
  const shown = new Map<string, DemoPanel>();
  const waiting = new Map<string, (panel: DemoPanel) => void>();
  return {
    set(namespace, panel) {
      if (panel === null) {
        shown.delete(namespace);
        return;
      }
      shown.set(namespace, panel);
      waiting.get(namespace)?.(panel);
      waiting.delete(namespace);
    },
    get(namespace) {
      const panel = shown.get(namespace);
      if (panel) return Promise.resolve(panel);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(namespace);
          reject(new Error(`The panel of ${namespace} did not appear`));
        }, PANEL_WAIT_MS);
        waiting.set(namespace, (found) => {
          clearTimeout(timer);
          resolve(found);
        });
      });
    },
  };
}
