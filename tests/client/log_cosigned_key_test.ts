/**
 * A page asks `GET /api/log/cosigned` for its witnesses by their whole vkeys (protocol §4.10): a
 * stranger whose 4-byte key ID matches a policy witness's (about 2^32 key generations) cannot
 * stand in for it there and hide how far the witness caught up. The stranger's kept cosignature
 * is written straight into the store, as one a colliding key would have had verified.
 * @module
 */
import assert from "node:assert/strict";
import { createApiClient } from "../../lib/client/api_client.ts";
import { checkShownChain } from "../../lib/client/log/chain_check.ts";
import { parseCheckpoint } from "../../lib/protocol/checkpoint.ts";
import {
  COSIGNATURE_V1_TYPE,
  formatVerifierKey,
  parseNote,
  parseVerifierKey,
  signerKey,
} from "../../lib/protocol/note.ts";
import { createApp } from "../../server/app.ts";
import type { CosignatureSetRecord } from "../../server/store/cosignatures.ts";
import { ledgerKeys } from "../../server/store/layout.ts";
import { createStore } from "../../server/store/mod.ts";
import { appendEmptyBlocks } from "../helpers/ledger_builder.ts";
import { MapStorage } from "../helpers/map_storage.ts";
import { policyWitness } from "../helpers/policy_witness.ts";

Deno.test("a stranger sharing a witness's key ID does not hide the witness's cosigned size", async () => {
  using kv = await Deno.openKv(":memory:");
  const t0 = Date.now();
  const store = await createStore(kv, { now: () => t0 });
  const app = createApp({ store });
  const api = createApiClient({ fetch: app.request });
  const { vkey, options, cosign } = policyWitness(api);
  const storage = new MapStorage();
  await appendEmptyBlocks(store, 3);
  await cosign(t0);
  await checkShownChain(api, { storage, ...options, now: t0 });
  await appendEmptyBlocks(store, 5);
  await cosign(t0 + 1_000);
  await appendEmptyBlocks(store, 6);
  // The stranger "cosigned" size 6 under another name and the witness's key ID.
  const six = parseCheckpoint(parseNote(await api.checkpoint()).text);
  const stranger = { name: "stranger.example/x", seed: new Uint8Array(32).fill(9) };
  const key = ledgerKeys([]).cosignatures();
  const kept = (await kv.get<CosignatureSetRecord>(key)).value!;
  kept.cosignatures.push({
    vkey: formatVerifierKey(signerKey(stranger, COSIGNATURE_V1_TYPE)),
    size: six.size,
    root: six.root,
    timestamp: Math.floor(t0 / 1000),
    line: {
      name: stranger.name,
      keyId: parseVerifierKey(vkey).keyId,
      signature: new Uint8Array(64).fill(5),
    },
  });
  await kv.set(key, kept);
  const check = await checkShownChain(api, { storage, ...options, now: t0 + 2_000 });
  assert.deepEqual([check.log?.witness?.status, check.log?.witness?.size], ["waiting", 5]);
});
