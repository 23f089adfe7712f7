// Signed heads through the API (protocol §4 "Signed heads"): GET /api/server-key, and a
// head_signature on every block record served — status, blocks list, vote proofs, genesis
// included — checked here with noble alone over bytes built by hand. The key is made once and
// kept: a restart and two stores starting together on one database all use the same key.
import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import { blockHash } from "../../lib/protocol/chain.ts";
import { createApp } from "../../server/app.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { createStore } from "../../server/store/mod.ts";
import { call, makeVoters, signedVote } from "../helpers/ledger_fixtures.ts";

/** Checks `head_signature` of a record with noble over `"ringvote/v1/head" ‖ u64be ‖ hash`. */
function signedByKey(
  key: string,
  record: { height: number; hash: string; head_signature: string },
) {
  const label = new TextEncoder().encode("ringvote/v1/head");
  const message = new Uint8Array(label.length + 40);
  message.set(label);
  new DataView(message.buffer).setBigUint64(label.length, BigInt(record.height));
  message.set(hexToBytes(record.hash, 32), label.length + 8);
  return ed25519.verify(
    hexToBytes(record.head_signature, 64),
    message,
    hexToBytes(key, 32),
    { zip215: false },
  );
}

Deno.test("every block record served carries a head signature by the server key", async (t) => {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const app = createApp({ store });
  const voters = makeVoters(3);
  for (const v of voters) await store.registerKey(v.key);
  const accepted = await call(app, "POST", "/api/vote", signedVote(voters[0], voters, "Yes"));
  await sealNextBlock(store, Date.now());

  const keyAnswer = await call(app, "GET", "/api/server-key");
  await t.step("GET /api/server-key answers {key}, 32 bytes of hex", () => {
    assert.equal(keyAnswer.status, 200);
    assert.match(keyAnswer.type ?? "", /^application\/json/);
    assert.deepEqual(Object.keys(keyAnswer.body), ["key"]);
    assert.match(keyAnswer.body.key, /^[0-9a-f]{64}$/);
  });
  const key: string = keyAnswer.body.key;

  await t.step("blocks list: genesis and block 1, hashes unchanged", async () => {
    const { body } = await call(app, "GET", "/api/blocks");
    assert.equal(body.blocks.length, 2);
    for (const block of body.blocks) {
      assert.ok(signedByKey(key, block), `block ${block.height}`);
      assert.equal(blockHash(block), block.hash);
      assert.deepEqual(
        Object.keys(block).slice(0, -1),
        Object.keys((await store.block(block.height))!),
      );
    }
  });
  await t.step("status: the head's signature", async () => {
    const { body } = await call(app, "GET", "/api/block/status");
    assert.equal(body.height, 1);
    assert.ok(signedByKey(key, body));
  });
  await t.step("vote proof: its block's signature", async () => {
    const { body } = await call(app, "GET", `/api/block/id/1/vote/${accepted.body.voteId}`);
    assert.ok(signedByKey(key, body.block));
  });
  await t.step("a signature does not verify for another height, hash or key", async () => {
    const { body } = await call(app, "GET", "/api/block/status");
    assert.equal(signedByKey(key, { ...body, height: 0 }), false);
    assert.equal(signedByKey(key, { ...body, hash: "00".repeat(32) }), false);
    const other = bytesToHex(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
    assert.equal(signedByKey(other, body), false);
  });
  kv.close();
});

Deno.test("the server key is made once: a restart and concurrent starts keep one key", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const handles: Deno.Kv[] = [];
  try {
    const open = async () => {
      const kv = await Deno.openKv(path);
      handles.push(kv);
      return kv;
    };
    const stores = await Promise.all(
      Array.from({ length: 4 }, async () => await createStore(await open())),
    );
    const keys = await Promise.all(stores.map(async (store) => {
      const res = await call(createApp({ store }), "GET", "/api/server-key");
      return res.body.key as string;
    }));
    assert.equal(new Set(keys).size, 1, keys.join(" "));
    const restarted = await createStore(await open());
    const again = await call(createApp({ store: restarted }), "GET", "/api/server-key");
    assert.equal(again.body.key, keys[0]);
  } finally {
    for (const kv of handles) kv.close();
    await Deno.remove(path);
  }
});
