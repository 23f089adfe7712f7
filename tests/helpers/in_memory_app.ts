// The real application over a fresh in-memory Deno KV, with the API client that drives it through
// `app.request`: what the client, bulletin board and panel tests start from.
import { createApiClient } from "../../lib/client/api_client.ts";
import { createApp } from "../../server/app.ts";
import { createStore } from "../../server/store/mod.ts";

/** A fresh app and its client; close `kv` when done. */
export async function inMemoryApp() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const app = createApp({ store });
  const api = createApiClient({ fetch: app.request });
  return { kv, store, app, api };
}
