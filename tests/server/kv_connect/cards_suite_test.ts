// The join-card suite again, over KV Connect (tests/helpers/kv_connect_server.ts: denokv's own data
// path and limits, 10 checks a commit, 10 keys a getMany): card sets in chunks, a carded round's
// registrations — four keys and their cards a commit — and every attack of the suite, over the
// network protocol hosted Deno KV speaks.
import { startKvConnectServer } from "../../helpers/kv_connect_server.ts";

const server = await startKvConnectServer();
const openLocal = Deno.openKv.bind(Deno);
let opened = 0;
// Deno.openKv is an accessor (the unstable KV API): it is redefined, not assigned.
Object.defineProperty(Deno, "openKv", {
  value: (path?: string) =>
    path === ":memory:" ? server.openKv(`cards-${++opened}`) : openLocal(path),
});

Deno.test("the card suite runs on KV Connect databases", async () => {
  const before = server.counts().metadata;
  const kv = await Deno.openKv(":memory:");
  try {
    await kv.set(["probe"], 1);
    if (server.counts().metadata === before) throw new Error("Deno.openKv was not redirected");
  } finally {
    kv.close();
  }
});

await import("../api/cards_test.ts");
await import("../store/card_commit_test.ts");

Deno.test({
  name: "the KV Connect server stops last",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await server.close();
  },
});
