/**
 * The panel's actions (lib/client/voter/panel_actions.ts) driven against the real application over
 * in-memory KV through the one API client: the same calls the page makes, with an in-memory Storage
 * in place of the browser's.
 * @module
 */
import assert from "node:assert/strict";
import { createApiClient } from "../../../lib/client/api_client.ts";
import {
  checkOwnTag,
  type ClientIO,
  generateKeys,
  keysStillNeeded,
  loadKeyStatus,
  loadVoteStatus,
  readStoredVote,
  registeredKeyCount,
  registerKey,
  submitVote,
} from "../../../lib/client/voter/panel_actions.ts";
import { ringOfSignature, tagOfSignature } from "../../../lib/protocol/signature_fields.ts";
import { keyStatusLine, tagCheckLine } from "../../../lib/client/voter/status.ts";
import { REGISTRATION_NAME, storageKey } from "../../../lib/client/voter/voters.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { kvKeys } from "../../../server/store/layout.ts";
import { inMemoryApp } from "../../helpers/in_memory_app.ts";
import { MapStorage } from "../../helpers/map_storage.ts";

type Sent = { method: string; path: string; body?: unknown };

async function setup() {
  const { kv, store, app } = await inMemoryApp();
  const storage = new MapStorage();
  const sent: Sent[] = [];
  const logs: string[] = [];
  const recording = (url: string, init: RequestInit) => {
    const body = typeof init.body === "string" ? JSON.parse(init.body) : undefined;
    sent.push({ method: init.method ?? "GET", path: url, body });
    return app.request(url, init);
  };
  const io: ClientIO = {
    storage,
    api: createApiClient({ fetch: recording }),
    log: (message) => logs.push(message),
  };
  const seal = () => sealNextBlock(store, Date.now());
  return { kv, store, storage, io, sent, logs, seal };
}

function seed(n: number): Uint8Array {
  return new Uint8Array(32).fill(n);
}

/** `count` voters v1..vN with keys generated from fixed seeds and registered. */
async function registered(io: ClientIO, count: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 1; i <= count; i++) {
    const name = `Voter Number ${i}`;
    generateKeys(io, name, { seed: seed(i) });
    assert.deepEqual(await registerKey(io, name), keyStatusLine("registered", i));
    names.push(name);
  }
  return names;
}

Deno.test("key actions through the real API", async (t) => {
  const { kv, io, storage, sent, logs } = await setup();
  try {
    await t.step("registering with no stored public key: unregistered, nothing sent", async () => {
      assert.deepEqual(await registerKey(io, "Nobody Yet Here"), keyStatusLine("unregistered"));
      assert.equal(sent.length, 0);
      assert.equal((await loadKeyStatus(io, "Nobody Yet Here")).status, "ungenerated");
    });
    await t.step("registration sends the key and the placeholder name, stores the id", async () => {
      const [name] = await registered(io, 1);
      assert.deepEqual(sent.at(-1)?.body, {
        key: storage.getItem(storageKey(name, "publicKey")),
        name: REGISTRATION_NAME,
      });
      assert.equal(storage.getItem(storageKey(name, "keyId")), "1");
      assert.deepEqual(await loadKeyStatus(io, name), keyStatusLine("registered", "1"));
    });
    await t.step("a failed registration clears the stored key id and logs the answer", async () => {
      // The same key again: 409 duplicate_key.
      generateKeys(io, "Copy Of One", { seed: seed(1) });
      storage.setItem(storageKey("Copy Of One", "keyId"), "5");
      logs.length = 0;
      assert.deepEqual(await registerKey(io, "Copy Of One"), keyStatusLine("unregistered"));
      assert.equal(storage.getItem(storageKey("Copy Of One", "keyId")), null);
      assert.equal(logs.length, 1);
      assert.match(logs[0], /^POST \/api\/pki\/key answered 409: /);
    });
    await t.step("a key id the server gives another key: invalid", async () => {
      generateKeys(io, "Wrong Id Holder", { seed: seed(9) });
      storage.setItem(storageKey("Wrong Id Holder", "keyId"), "1");
      assert.deepEqual(await loadKeyStatus(io, "Wrong Id Holder"), keyStatusLine("invalid", "1"));
      storage.setItem(storageKey("Wrong Id Holder", "keyId"), "99");
      assert.deepEqual(
        await loadKeyStatus(io, "Wrong Id Holder"),
        keyStatusLine("invalid", "99"),
      );
    });
  } finally {
    kv.close();
  }
});

Deno.test("a vote through the real API: pending, sealed, verified, tampered", async (t) => {
  const { kv, io, storage, sent, logs, seal } = await setup();
  try {
    const names = await registered(io, 4);
    const voter = names[2];

    await t.step(
      "fewer registered keys than the ring size: refused, typed, both counts",
      async () => {
        sent.length = 0;
        const outcome = await submitVote(io, voter, { content: "Yes", ringSize: 8 });
        assert.deepEqual(outcome, {
          ok: false,
          code: "too_few_keys",
          registered: 4,
          needed: 8,
          reason: "Not enough registered keys to vote: 4 registered, 8 needed",
        });
        assert.deepEqual(readStoredVote(storage, voter), {
          voteId: null,
          blockId: null,
          voteContent: null,
          voteSignature: null,
        });
        assert.ok(!sent.some((s) => s.path === "/api/vote"), "nothing posted");
        assert.equal(await keysStillNeeded(io, 8), 4);
        assert.equal(await keysStillNeeded(io, 3), 0);
      },
    );

    await t.step("the ring: every member fetched alike, in id order, no secret sent", async () => {
      sent.length = 0;
      const outcome = await submitVote(io, voter, { content: "Yes", ringSize: 3 });
      assert.ok(outcome.ok);
      const keyFetches = sent.filter((s) => s.path.startsWith("/api/pki/key/id/"));
      const ids = keyFetches.map((s) => Number(s.path.split("/").at(-1)));
      assert.equal(ids.length, 3);
      assert.ok(ids.includes(3), "own id fetched like the others");
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
      const post = sent.find((s) => s.path === "/api/vote")!;
      const body = post.body as Record<string, string | string[]>;
      assert.deepEqual(Object.keys(body).sort(), ["payload", "publicKeys", "signature", "tag"]);
      assert.equal(body.payload, "Yes");
      const privateKey = storage.getItem(storageKey(voter, "privateKey"))!;
      assert.ok(!sent.some((s) => JSON.stringify(s).includes(privateKey)));
      const stored = readStoredVote(storage, voter);
      assert.equal(stored.voteId, outcome.voteId);
      assert.equal(stored.blockId, String(outcome.blockId));
      assert.equal(stored.voteContent, "Yes");
      assert.equal(stored.voteSignature, body.signature);
    });

    const { voteId, blockId } = readStoredVote(storage, voter);
    const voted = `Vote Voted with Block ID: ${blockId} and Vote ID: ${voteId}`;

    await t.step("before its block is sealed: pending", async () => {
      const line = await loadVoteStatus(io, voter);
      assert.equal(line.status, "pending");
      assert.equal(line.text, `${voted}, please wait for a minute and refresh the page`);
    });

    await t.step("after sealing: voted", async () => {
      await submitVote(io, names[0], { content: "No", ringSize: 3 });
      assert.equal((await seal()).length, 1);
      logs.length = 0;
      const { block, ...line } = await loadVoteStatus(io, voter);
      assert.deepEqual(line, { status: "voted", text: voted, colour: "green" });
      // The block the vote is in, for the page's log view to prove included (page §10.13).
      assert.equal(block?.height, 1);
      assert.match(block?.hash ?? "", /^[0-9a-f]{64}$/);
      assert.equal((await loadVoteStatus(io, names[0])).status, "voted");
      assert.deepEqual(logs, []);
    });

    await t.step(
      "a second vote by the same key is refused in words, the tag in detail",
      async () => {
        const before = readStoredVote(storage, voter);
        const outcome = await submitVote(io, voter, { content: "Again", ringSize: 3 });
        assert.equal(outcome.ok, false);
        assert.ok(!outcome.ok && outcome.code === "duplicate_tag");
        assert.equal(outcome.reason, "Vote refused: this voter has already voted");
        const tag = tagOfSignature(before.voteSignature)!;
        assert.equal(outcome.detail, `Tag "${tag.slice(0, 80)}" has already voted`);
        assert.ok(!outcome.reason.includes(tag.slice(0, 16)), "no hex on the line itself");
        assert.deepEqual(readStoredVote(storage, voter), before);
      },
    );

    await t.step("changed stored content or signature: invalid, mismatch logged", async () => {
      storage.setItem(storageKey(voter, "voteContent"), "No");
      logs.length = 0;
      const line = await loadVoteStatus(io, voter);
      assert.equal(line.status, "invalid");
      assert.equal(line.text, `${voted}, but Invalid - maybe you need to contact the admin`);
      assert.deepEqual(logs, ["Vote content mismatch"]);
      storage.setItem(storageKey(voter, "voteContent"), "Yes");
      const own = readStoredVote(storage, voter).voteSignature;
      const other = readStoredVote(storage, names[0]).voteSignature!;
      storage.setItem(storageKey(voter, "voteSignature"), other);
      logs.length = 0;
      assert.equal((await loadVoteStatus(io, voter)).status, "invalid");
      // The other signature's ring is its own sample of the keys, so it may differ as well.
      const ringsDiffer = JSON.stringify(ringOfSignature(other)) !==
        JSON.stringify(ringOfSignature(own));
      assert.deepEqual(logs, [
        "Vote signature mismatch",
        ...(ringsDiffer ? ["Vote ring mismatch"] : []),
      ]);
    });

    await t.step("an unknown vote id in a sealed block: unvoted, the failure logged", async () => {
      storage.setItem(storageKey(voter, "voteId"), "A".repeat(22));
      logs.length = 0;
      assert.equal((await loadVoteStatus(io, voter)).status, "unvoted");
      assert.equal(logs.length, 1);
      assert.match(logs[0], /answered 404/);
    });

    await t.step("new keys clear the key id and every vote entry", () => {
      assert.deepEqual(generateKeys(io, voter), keyStatusLine("unregistered"));
      for (const entry of ["keyId", "voteId", "blockId", "voteContent", "voteSignature"] as const) {
        assert.equal(storage.getItem(storageKey(voter, entry)), null, entry);
      }
    });
  } finally {
    kv.close();
  }
});

Deno.test("a voting panel checks its own tag on the bulletin board", async (t) => {
  const { kv, store, storage, io, logs } = await setup();
  try {
    const names = ["Ada Byron King", "Alan Mathison Turing", "Grace Brewster Hopper"];
    for (const [i, name] of names.entries()) {
      generateKeys(io, name, { seed: new Uint8Array(32).fill(i + 1) });
      assert.equal((await registerKey(io, name)).status, "registered");
    }
    for (const name of names.slice(0, 2)) {
      const outcome = await submitVote(io, name, { content: `from ${name}`, ringSize: 3 });
      assert.ok(outcome.ok);
    }
    await sealNextBlock(store, Date.now());
    const [ada, alan, grace] = names;
    const voteIdOf = (name: string) => storage.getItem(storageKey(name, "voteId"))!;
    const tagOf = (name: string) =>
      tagOfSignature(storage.getItem(storageKey(name, "voteSignature")))!;

    await t.step("its own vote under its tag: voted once", async () => {
      assert.deepEqual(
        await checkOwnTag(io, ada),
        tagCheckLine(voteIdOf(ada), { voteId: voteIdOf(ada) }),
      );
      assert.equal((await checkOwnTag(io, ada))?.colour, "green");
    });

    await t.step("no stored vote: nothing to check", async () => {
      assert.equal(await checkOwnTag(io, grace), null);
    });

    await t.step("a second vote recorded under its tag (written into KV): red", async () => {
      const entry = await kv.get<{ voteId: string; height: number }>(kvKeys.tag(tagOf(ada)));
      assert.equal(entry.value?.voteId, voteIdOf(ada));
      // The ledger now says Ada's key cast Alan's vote: a vote this panel did not cast.
      await kv.set(kvKeys.tag(tagOf(ada)), { ...entry.value!, voteId: voteIdOf(alan) });
      const line = await checkOwnTag(io, ada);
      assert.deepEqual(line, {
        status: "reused",
        text: `Your key was used for another vote: ${voteIdOf(alan)}`,
        colour: "red",
      });
      await kv.set(kvKeys.tag(tagOf(ada)), entry.value);
    });

    await t.step("a stored vote id the board does not hold under the tag: red", async () => {
      const real = voteIdOf(alan);
      storage.setItem(storageKey(alan, "voteId"), "Z".repeat(22));
      assert.deepEqual(await checkOwnTag(io, alan), tagCheckLine("Z".repeat(22), { voteId: real }));
      storage.setItem(storageKey(alan, "voteId"), real);
      assert.equal((await checkOwnTag(io, alan))?.status, "once");
    });

    await t.step("a tag the board does not know: red, missing", async () => {
      await kv.delete(kvKeys.tag(tagOf(alan)));
      assert.equal((await checkOwnTag(io, alan))?.status, "missing");
    });

    await t.step("an unreadable board: no line, the failure logged", async () => {
      const failing: ClientIO = {
        ...io,
        api: createApiClient({ fetch: () => Promise.reject(new TypeError("network down")) }),
      };
      assert.equal(await checkOwnTag(failing, ada), null);
      assert.match(logs.at(-1)!, /network down/);
    });
  } finally {
    kv.close();
  }
});

Deno.test("a vote the server keeps under another ring is invalid, the ring mismatch logged", async () => {
  const { kv, io, storage, logs, seal } = await setup();
  try {
    const [voter] = await registered(io, 3);
    assert.ok((await submitVote(io, voter, { content: "Yes", ringSize: 3 })).ok);
    const { voteId, blockId } = readStoredVote(storage, voter);
    // The server rewrites the stored record before sealing: the block, its root and the proof all
    // agree with the rewritten ring, which is not the ring the voter signed over.
    const key = kvKeys.vote(Number(blockId), voteId!);
    const kept = (await kv.get<{ publicKeys: string[] }>(key)).value!;
    await kv.set(key, { ...kept, publicKeys: [...kept.publicKeys].reverse() });
    assert.equal((await seal()).length, 1);
    logs.length = 0;
    const line = await loadVoteStatus(io, voter);
    assert.equal(line.status, "invalid");
    assert.equal(line.colour, "red");
    assert.deepEqual(logs, ["Vote ring mismatch"]);
  } finally {
    kv.close();
  }
});

Deno.test("the key count the demo round checks: the directory's total, null when unreadable", async () => {
  const { kv, io, sent, logs } = await setup();
  try {
    assert.equal(await registeredKeyCount(io), 0);
    await registered(io, 3);
    sent.length = 0;
    assert.equal(await registeredKeyCount(io), 3);
    assert.deepEqual(sent, [{
      method: "GET",
      path: "/api/pki/key/offset/0/limit/1",
      body: undefined,
    }]);
    const failing: ClientIO = {
      ...io,
      api: createApiClient({ fetch: () => Promise.reject(new TypeError("network down")) }),
    };
    assert.equal(await registeredKeyCount(failing), null);
    assert.match(logs.at(-1)!, /network down/);
  } finally {
    kv.close();
  }
});

Deno.test("keysStillNeeded: the keys a ring still lacks, never below 0, null when unreadable", async (t) => {
  const { kv, io, logs } = await setup();
  try {
    await t.step("an empty directory lacks the whole ring", async () => {
      assert.equal(await keysStillNeeded(io, 8), 8);
    });
    await t.step("each registration brings it one closer, down to 0", async () => {
      await registered(io, 5);
      assert.equal(await keysStillNeeded(io, 8), 3);
      assert.equal(await keysStillNeeded(io, 5), 0);
      assert.equal(await keysStillNeeded(io, 2), 0);
    });
    await t.step("an unreadable directory: null, the failure logged", async () => {
      const failing: ClientIO = {
        ...io,
        api: createApiClient({ fetch: () => Promise.reject(new TypeError("network down")) }),
      };
      assert.equal(await keysStillNeeded(failing, 8), null);
      assert.match(logs.at(-1)!, /^GET \/api\/pki\/key\/offset\/0\/limit\/1 failed: network down$/);
    });
    await t.step("a ring size that is not a count: RangeError", async () => {
      for (const size of [-1, 2.5, Number.NaN]) {
        await assert.rejects(() => keysStillNeeded(io, size), RangeError, String(size));
      }
    });
  } finally {
    kv.close();
  }
});
