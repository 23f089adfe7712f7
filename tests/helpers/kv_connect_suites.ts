// Runs test suites again over KV Connect: every `Deno.openKv(":memory:")` they make opens a fresh
// database of a real KV Connect server (tests/helpers/kv_connect_server.ts, denokv's own data
// path and limits) instead. Suites that open a KV file keep it: they test several processes on
// one file. A suite file calls `onKvConnect` first, imports the suites, then `stopLast`.
import { startKvConnectServer } from "./kv_connect_server.ts";

type KvConnectServer = Awaited<ReturnType<typeof startKvConnectServer>>;

/**
 * Starts the server, redirects `Deno.openKv(":memory:")` to databases named `prefix-1`,
 * `prefix-2`, …, and registers `probe`, a test that fails when the redirection did not take.
 */
export async function onKvConnect(prefix: string, probe: string): Promise<KvConnectServer> {
  const server = await startKvConnectServer();
  const openLocal = Deno.openKv.bind(Deno);
  let opened = 0;
  // Deno.openKv is an accessor (the unstable KV API): it is redefined, not assigned.
  Object.defineProperty(Deno, "openKv", {
    value: (path?: string) =>
      path === ":memory:" ? server.openKv(`${prefix}-${++opened}`) : openLocal(path),
  });
  Deno.test(probe, async () => {
    const before = server.counts().metadata;
    const kv = await Deno.openKv(":memory:");
    try {
      await kv.set(["probe"], 1);
      if (server.counts().metadata === before) throw new Error("Deno.openKv was not redirected");
    } finally {
      kv.close();
    }
  });
  return server;
}

/** Registers the last test of the file: the server stops once every suite ran. */
export function stopLast(server: KvConnectServer): void {
  Deno.test({
    name: "the KV Connect server stops last",
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      await server.close();
    },
  });
}
