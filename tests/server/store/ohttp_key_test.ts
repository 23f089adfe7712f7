// The gateway's key in KV: made once however many processes start together, replaced under
// another key id with the old one overwritten, and seen by every store over the database.
import assert from "node:assert/strict";
import { createGatewayKeys, GATEWAY_KEY } from "../../../server/store/ohttp_key.ts";
import { withKv } from "../../helpers/kv.ts";

Deno.test(
  "five stores starting together make one key",
  withKv(async (kv) => {
    const stores = await Promise.all(Array.from({ length: 5 }, () => createGatewayKeys(kv)));
    const configs = await Promise.all(stores.map(async (s) => (await s.current()).key.config));
    for (const config of configs) assert.deepEqual(config, configs[0]);
    const entries = [];
    for await (const entry of kv.list({ prefix: ["ohttp"] })) entries.push(entry.key);
    assert.deepEqual(entries, [[...GATEWAY_KEY]]);
  }),
);

Deno.test(
  "replacements each take another key id and leave one key, the last",
  withKv(async (kv) => {
    const [a, b] = [await createGatewayKeys(kv), await createGatewayKeys(kv)];
    const first = (await a.current()).key;
    const [x, y] = await Promise.all([a.replace(), b.replace()]);
    assert.notDeepEqual(x.key.privateKey, y.key.privateKey);
    const now = (await a.current()).key;
    assert.ok([x.key.config.keyId, y.key.config.keyId].includes(now.config.keyId));
    assert.deepEqual((await b.current()).key, now);
    assert.notDeepEqual(now.privateKey, first.privateKey);
    const stored = await kv.get<{ privateKey: Uint8Array }>([...GATEWAY_KEY]);
    assert.deepEqual(stored.value?.privateKey, now.privateKey);
    // One replacement after another never keeps the key id.
    for (let i = 0; i < 20; i++) {
      const before = (await a.current()).key.config.keyId;
      assert.notEqual((await a.replace()).key.config.keyId, before);
    }
  }),
);
