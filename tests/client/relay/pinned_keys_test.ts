// The key check a phone runs before its registration (protocol §7): the relay's configuration is
// held to the pin first, so a server that cannot be read hides no mismatch of the relay, and a
// server that cannot be read is named as the server, not as a relay.
import assert from "node:assert/strict";
import { keyConfigHash } from "../../../lib/client/relay/fragment.ts";
import { checkPinnedKeys } from "../../../lib/client/relay/relayed_transport.ts";

const CONFIG = new Uint8Array([0, 41, 1, 0, 32, 9, 9, 9]);
const THEIRS = new Uint8Array([0, 41, 1, 0, 32, 6, 6, 6]);

/** A real HTTP server publishing `config` at /.well-known/ohttp-gateway. */
function publishing(config: Uint8Array<ArrayBuffer>) {
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => new Response(config, { headers: { "content-type": "application/ohttp-keys" } }),
  );
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

/** The address of a server that has stopped: nothing answers there. */
async function stoppedAddress(): Promise<string> {
  const gone = publishing(CONFIG);
  await gone.close();
  return gone.url;
}

Deno.test("a relay serving another key is a mismatch even when the server cannot be read", async () => {
  const relay = publishing(THEIRS);
  const origin = await stoppedAddress();
  try {
    const pin = { relay: relay.url, ohttp: keyConfigHash(CONFIG) };
    assert.deepEqual(await checkPinnedKeys({ pin, fetch, origin }), {
      kind: "mismatch",
      expected: keyConfigHash(CONFIG),
      served: keyConfigHash(THEIRS),
      by: "relay",
    });
  } finally {
    await relay.close();
  }
});

Deno.test("a server that cannot be read leaves the check undecided, and is named as the server", async () => {
  const relay = publishing(CONFIG);
  const origin = await stoppedAddress();
  try {
    const pin = { relay: relay.url, ohttp: keyConfigHash(CONFIG) };
    const check = await checkPinnedKeys({ pin, fetch, origin });
    assert.equal(check.kind, "unavailable");
    assert.match(
      check.kind === "unavailable" ? check.reason : "",
      new RegExp(`^The server ${origin} could not be reached`),
    );
  } finally {
    await relay.close();
  }
});
