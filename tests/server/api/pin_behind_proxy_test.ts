// The presenter's pin of the room's witness behind a proxy (TRUST_PROXY, protocol §4.9, §4.10): its
// wrong tokens are counted by the client address the proxy appends, like every presenter call, so
// a stranger's guesses through the same proxy never lock the presenter's pin out.
import assert from "node:assert/strict";
import { COSIGNATURE_V1_TYPE, formatVerifierKey, signerKey } from "../../../lib/protocol/note.ts";
import { PRESENTER_FAILURES_PER_WINDOW } from "../../../server/presenter_auth.ts";
import { fullApp, PRESENTER_TOKEN as ADMIN_TOKEN } from "../../helpers/app_fixture.ts";

Deno.test("behind TRUST_PROXY a stranger's wrong pins do not lock out the presenter's", async () => {
  using kv = await Deno.openKv(":memory:");
  const { app } = await fullApp(kv, { electionIntervalMs: 250, config: { trustProxy: true } });
  const vkey = formatVerifierKey(
    signerKey(
      { name: "witness.example/room", seed: new Uint8Array(32).fill(3) },
      COSIGNATURE_V1_TYPE,
    ),
  );
  // Every request comes from the proxy's one address; the client's is the one it appended.
  const pinVia = (token: string, client: string) =>
    app.request("/api/log/witnesses/pin", {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "x-forwarded-for": client,
      },
      body: JSON.stringify({ vkey }),
    }, { remoteAddr: { transport: "tcp", hostname: "10.0.0.2", port: 50000 } });
  for (let i = 0; i <= PRESENTER_FAILURES_PER_WINDOW; i++) {
    const res = await pinVia(`wrong-${i}`, "203.0.113.5");
    assert.equal(res.status, i < PRESENTER_FAILURES_PER_WINDOW ? 401 : 429, `guess ${i}`);
    await res.body?.cancel();
  }
  const presenter = await pinVia(ADMIN_TOKEN, "198.51.100.20");
  assert.equal(presenter.status, 200, await presenter.text());
});
