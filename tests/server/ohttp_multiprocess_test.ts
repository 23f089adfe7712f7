// Two server processes on one database serve one gateway key configuration, and after the
// presenter replaces the key through one of them, the other serves the new one and refuses the old.
import assert from "node:assert/strict";
import { sealCall } from "../../lib/client/relay/ohttp_client.ts";
import { KEYS_PATH, parseKeyConfigs } from "../../lib/protocol/ohttp.ts";
import { PRESENTER_TOKEN } from "../helpers/app_fixture.ts";
import { startServer } from "../helpers/server_process.ts";

Deno.test("two processes on one database serve one gateway key, and one replacement", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ohttp-kv-" });
  const env = { KV_PATH: `${dir}/ledger.kv`, ADMIN_TOKEN: PRESENTER_TOKEN };
  const a = await startServer({ env });
  const b = await startServer({ env }).catch(async (e) => {
    await a.stop();
    throw e;
  });
  const keysOf = async (url: string) =>
    new Uint8Array(await (await fetch(new URL(KEYS_PATH, url))).arrayBuffer());
  try {
    const before = await keysOf(a.url);
    assert.deepEqual(await keysOf(b.url), before);
    const sealed = await sealCall(
      { config: parseKeyConfigs(before)[0], scheme: "http", authority: new URL(b.url).host },
      { method: "GET", path: "/api/rounds" },
    );
    const replaced = await fetch(new URL("/api/ohttp/key", a.url), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${PRESENTER_TOKEN}` },
    });
    assert.equal(replaced.status, 200);
    await replaced.body?.cancel();
    const after = await keysOf(b.url);
    assert.notDeepEqual(after, before);
    assert.deepEqual(await keysOf(a.url), after);
    const res = await fetch(new URL("/api/ohttp", b.url), {
      method: "POST",
      headers: { "content-type": "message/ohttp-req" },
      body: sealed.encapsulated.slice(),
    });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.code, "ohttp_key");
  } finally {
    await a.stop();
    await b.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
