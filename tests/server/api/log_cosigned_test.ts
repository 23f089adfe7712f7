// GET {base}/log/cosigned (protocol §4.10): the newest checkpoint that carries at least `min` kept
// cosignatures, signed by the log like the current one, or 404 while none does; `min` checked.
import assert from "node:assert/strict";
import { createApiClient } from "../../../lib/client/api_client.ts";
import { parseCheckpoint } from "../../../lib/protocol/checkpoint.ts";
import {
  COSIGNATURE_V1_TYPE,
  formatNote,
  formatVerifierKey,
  parseNote,
  signCosignature,
  signerKey,
  verifyCosignature,
} from "../../../lib/protocol/note.ts";
import { createApp } from "../../../server/app.ts";
import { createStore } from "../../../server/store/mod.ts";
import { appendEmptyBlocks } from "../../helpers/ledger_builder.ts";

const grow = appendEmptyBlocks;

Deno.test("GET /api/log/cosigned answers the newest checkpoint its witnesses caught up with", async () => {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv, { now: () => 1_700_000_000_000 });
  const app = createApp({ store });
  const api = createApiClient({ fetch: app.request });
  const witnesses = [1, 2].map((i) => ({
    name: `w${i}.example/w`,
    seed: new Uint8Array(32).fill(i),
  }));
  const cosign = async (i: number) => {
    const text = parseNote(await api.checkpoint()).text;
    const line = signCosignature(text, witnesses[i], Math.floor(Date.now() / 1000) - 60);
    const cosignature = formatNote({ text, signatures: [line] }).slice(text.length + 1, -1);
    const vkey = formatVerifierKey(signerKey(witnesses[i], COSIGNATURE_V1_TYPE));
    await api.submitCosignature({ vkey, size: parseCheckpoint(text).size, cosignature });
  };
  const sizeOf = (note: string) => parseCheckpoint(parseNote(note).text).size;
  try {
    await grow(store, 3);
    const none = await app.request("/api/log/cosigned");
    assert.equal(none.status, 404);
    assert.equal((await none.json()).error.code, "not_found");
    await cosign(0);
    await cosign(1);
    assert.equal(sizeOf(await api.cosignedCheckpoint(2)), 3, "both witnesses at 3");
    await grow(store, 5);
    await cosign(0);
    await grow(store, 7);
    const newest = await api.cosignedCheckpoint(1);
    assert.equal(sizeOf(newest), 5, "witness 1 caught up with 5");
    const key = signerKey(witnesses[0], COSIGNATURE_V1_TYPE);
    assert.ok(verifyCosignature(parseNote(newest), key));
    // The latest cosignature of each witness is kept: witness 1 moved on, so no size has two.
    const two = await app.request("/api/log/cosigned?min=2");
    assert.equal(two.status, 404);
    for (const bad of ["0", "x", "-1", "100"]) {
      const res = await app.request(`/api/log/cosigned?min=${bad}`);
      assert.equal(res.status, 400, bad);
      assert.equal((await res.json()).error.code, "invalid_request");
    }
    assert.equal(sizeOf(await api.checkpoint()), 7, "the current checkpoint is unchanged");
  } finally {
    kv.close();
  }
});
