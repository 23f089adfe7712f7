// The page's relayed transport with its real sealing (lib/client/relay/sealing.ts over hpke-js),
// through the relay program (relay.ts, its own process) to the real server's gateway: a read answers
// the same JSON as a direct one, a refusal keeps its status and code, the key check holds the
// relay's configuration to the pin, a relay that is gone and a gateway that is too slow (the
// relay's 504) are typed failures, never a hang and never a direct call.
import assert from "node:assert/strict";
import { ApiCallError, createApiClient, type Transport } from "../../../lib/client/api_client.ts";
import { keyConfigHash, type RelayPin } from "../../../lib/client/relay/fragment.ts";
import {
  checkPinnedKeys,
  createRelayedTransport,
  RelayError,
} from "../../../lib/client/relay/relayed_transport.ts";
import { sealingEncapsulator } from "../../../lib/client/relay/sealing.ts";
import { startServer } from "../../helpers/server_process.ts";
import { startRelay } from "../../relay/relay_process.ts";

/** The relayed transport to `relay` for the server at `origin`, recording what it calls. */
function relayedTo(pin: RelayPin, origin: string, timeoutMs?: number) {
  const urls: string[] = [];
  const net: Transport = (url, init) => (urls.push(url), fetch(url, init));
  const { transport, keyCheck } = createRelayedTransport({
    pin,
    origin,
    fetch: net,
    timeoutMs,
    encapsulator: sealingEncapsulator({
      ohttp: pin.ohttp,
      origin,
      choicesOf: () => Promise.resolve(["Yes", "No"]),
    }),
  });
  return { transport, keyCheck, urls };
}

Deno.test({
  name: "through the relay process to the server's gateway: same answers, typed failures",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const server = await startServer({ env: { ADMIN_TOKEN: "through-relay-token-0123456789" } });
    const origin = new URL(server.url).origin;
    const relay = await startRelay(server.url);
    const pin = { relay: relay.url.replace(/\/$/, ""), ohttp: relay.sha256 };
    try {
      await t.step("the relay's configuration is the one the server serves, pinned", async () => {
        const served = new Uint8Array(
          await (await fetch(`${server.url}.well-known/ohttp-gateway`)).arrayBuffer(),
        );
        assert.equal(keyConfigHash(served), relay.sha256);
        assert.deepEqual(await checkPinnedKeys({ pin, fetch }), { kind: "ok" });
      });

      await t.step("a read through the relay answers the same JSON as a direct one", async () => {
        const { transport, urls } = relayedTo(pin, origin);
        const relayed = await createApiClient({ fetch: transport }).rounds();
        const direct = await createApiClient({ fetch, baseUrl: server.url }).rounds();
        assert.deepEqual(relayed, direct);
        const status = await createApiClient({ fetch: transport }).blockStatus();
        assert.equal(typeof status.height, "number");
        assert.ok(urls.every((url) => url.startsWith(pin.relay)), urls.join(" "));
      });

      await t.step("a refusal keeps its status and code inside the envelope", async () => {
        const { transport } = relayedTo(pin, origin);
        const api = createApiClient({ fetch: transport, ledger: { round: 99 } });
        const refused = await api.groups().catch((error) => error);
        assert.ok(refused instanceof ApiCallError, String(refused));
        assert.equal(refused.status, 404);
        assert.equal(refused.code, "unknown_round");
      });

      await t.step("another hash: the key check says so and nothing is sealed", async () => {
        const other = { ...pin, ohttp: keyConfigHash(new Uint8Array([1])) };
        const { transport, keyCheck, urls } = relayedTo(other, origin);
        assert.equal((await keyCheck()).kind, "mismatch");
        const failed = await Promise.resolve(transport("/api/rounds", { method: "GET" }))
          .catch((error) => error);
        assert.ok(failed instanceof RelayError && failed.kind === "key-mismatch");
        assert.ok(urls.every((url) => url.endsWith("/.well-known/ohttp-gateway")), urls.join());
      });

      await t.step("a gateway slower than the relay's deadline: the relay's 504", async () => {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const slow = Deno.serve(
          { port: 0, hostname: "127.0.0.1", onListen() {} },
          async (request) => {
            const url = new URL(request.url);
            if (url.pathname === "/api/ohttp") await held;
            return await fetch(new URL(url.pathname, server.url), {
              method: request.method,
              headers: request.headers,
              body: request.method === "GET" ? null : await request.arrayBuffer(),
            });
          },
        );
        const slowRelay = await startRelay(`http://127.0.0.1:${slow.addr.port}/`, [
          "--deadline",
          "1",
        ]);
        try {
          const slowPin = { relay: slowRelay.url.replace(/\/$/, ""), ohttp: slowRelay.sha256 };
          const { transport } = relayedTo(slowPin, origin);
          const failed = await Promise.resolve(transport("/api/rounds", { method: "GET" }))
            .catch((error) => error);
          assert.ok(failed instanceof RelayError, String(failed));
          assert.equal(failed.kind, "gateway-timeout");
          assert.equal(failed.status, 504);
        } finally {
          release();
          await slowRelay.stop();
          await slow.shutdown();
        }
      });

      await t.step("a relay that is gone: a typed failure, no direct call", async () => {
        await relay.stop();
        const { transport, urls } = relayedTo(pin, origin, 5_000);
        const failed = await Promise.resolve(transport("/api/rounds", { method: "GET" }))
          .catch((error) => error);
        assert.ok(failed instanceof RelayError, String(failed));
        assert.equal(failed.kind, "relay-unreachable");
        assert.ok(urls.length > 0 && urls.every((url) => url.startsWith(pin.relay)));
      });
    } finally {
      await relay.stop();
      await server.stop();
    }
  },
});
