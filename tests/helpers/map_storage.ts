// Web Storage semantics over a Map: the browser's localStorage for tests of the panel's actions.
import type { VoterStorage } from "../../lib/client/voter/panel_actions.ts";

/** An in-memory Storage; `items` shows exactly what a panel stored. */
export class MapStorage implements VoterStorage {
  readonly items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, String(value));
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
}
