/**
 * A page's whole check of the chain it is shown (lib/client/log/chain_check.ts) against a server
 * that forks its chain while its log answers honestly: the real app over in-memory KV, its block
 * answers rewritten in process with its own key. The blocks shown above the checkpoint lead, link
 * by link, to a block signed for a remembered height with another hash: fork evidence, which the
 * log alone could never give. A head of height 2^53 − 1 is no walk at all.
 * @module
 */
import assert from "node:assert/strict";
import { createApiClient } from "../../lib/client/api_client.ts";
import { checkShownChain } from "../../lib/client/log/chain_check.ts";
import { parseSeenHeads, SEEN_HEADS_KEY } from "../../lib/client/log/heads.ts";
import { checkForkEvidence, serverPublicKey, signHead } from "../../lib/protocol/head.ts";
import type { BlockRecord } from "../../lib/protocol/schemas.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { inMemoryApp } from "../helpers/in_memory_app.ts";
import { makeVoters, signedVote } from "../helpers/ledger_fixtures.ts";
import { forkedChain, rehash, resign } from "../helpers/lying_server.ts";
import { MapStorage } from "../helpers/map_storage.ts";
import { tamperingTransport } from "../helpers/tampering_proxy.ts";

Deno.test("blocks above the checkpoint lead to fork evidence over an honest log", async (t) => {
  const { kv, store, app, api } = await inMemoryApp();
  try {
    const voters = makeVoters(3);
    for (const v of voters) await store.registerKey(v.key);
    for (let i = 0; i < 2; i++) {
      await api.submitVote(signedVote(voters[i], voters.slice(0, 2), `V${i}`));
      await sealNextBlock(store, 1_700_000_000_000 + i * 60_000);
    }
    const seed = store.serverSeed();
    const key = serverPublicKey(seed);
    const honest = (await api.blocks(0, 3)).items;
    const h = honest.length - 1;
    const storage = new MapStorage();
    const first = await checkShownChain(api, { storage, shown: honest });
    assert.deepEqual(first.alerts, []);
    assert.ok(parseSeenHeads(storage.getItem(SEEN_HEADS_KEY)).heads.some((x) => x.height === h));

    // Block h closed a second later, re-hashed and re-signed, and two blocks above it.
    const forked = forkedChain(honest, { from: h, seed });
    for (let i = 0; i < 2; i++) {
      const prev = forked.at(-1)!;
      forked.push(resign(
        seed,
        rehash({
          ...prev,
          height: prev.height + 1,
          prev_hash: prev.hash,
          timestamp: prev.timestamp,
        }),
      ));
    }
    const at = new Map(forked.map((b) => [b.height, b]));
    const lying = createApiClient({
      fetch: tamperingTransport(app.request, (path, body) => {
        if (path !== "/api/blocks") return;
        const blocks: BlockRecord[] = body.blocks.map((b: BlockRecord) => at.get(b.height) ?? b);
        if (blocks.at(-1)?.height === h) blocks.push(...forked.slice(h + 1));
        body.blocks = blocks;
      }),
    });
    const remembered = storage.getItem(SEEN_HEADS_KEY);

    await t.step("the head shown above the checkpoint: fork evidence at h", async () => {
      const check = await checkShownChain(lying, { storage, shown: [forked.at(-1)!] });
      assert.ok(check.fork !== null && "heads" in check.fork, JSON.stringify(check.fork));
      assert.deepEqual(check.fork.heads.map((x) => [x.height, x.hash]), [
        [h, honest[h].hash],
        [h, forked[h].hash],
      ]);
      assert.equal(checkForkEvidence(check.fork).ok, true);
      assert.equal(check.fork.key, key);
      assert.equal(storage.getItem(SEEN_HEADS_KEY), remembered, "nothing new is remembered");
    });

    await t.step("a head of height 2^53 − 1: no block read, no fork claimed", async () => {
      let requests = 0;
      const counting = createApiClient({
        fetch: (url, init) => {
          if (String(url).includes("/api/blocks")) requests++;
          return app.request(url, init);
        },
      });
      const height = Number.MAX_SAFE_INTEGER;
      const hash = "ab".repeat(32);
      const head = { height, hash, head_signature: signHead(seed, { height, hash }) };
      const check = await checkShownChain(counting, { storage, shown: [head] });
      assert.equal(check.fork, null);
      assert.equal(requests, 0);
    });
  } finally {
    kv.close();
  }
});
