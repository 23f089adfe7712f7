import assert from "node:assert/strict";
import { MapStorage } from "../helpers/map_storage.ts";
import fc from "fast-check";
import {
  type Answer,
  type ClientIO,
  generateKeys,
  loadKeyStatus,
  loadVoteStatus,
  readStoredVote,
  registerKey,
  submitVote,
} from "../../lib/app/panel_actions.ts";
import { keyStatusLine } from "../../lib/app/status.ts";
import { createApp } from "../../server/app.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { createStore } from "../../server/store.ts";
import {
  cryptoRandomIndex,
  namespaceOf,
  parseVoterList,
  REGISTRATION_NAME,
  sampleRing,
  serializeVoterList,
  storageKey,
  TooFewKeysError,
  uniqueNamespace,
  VOTER_ENTRIES,
} from "../../lib/app/voters.ts";

Deno.test("storage keys are the entry names prefixed by the voter's namespace", () => {
  const keys = VOTER_ENTRIES.map((entry) => storageKey("Ada Byron King", entry));
  assert.deepEqual(keys, [
    "Ada Byron King:publicKey",
    "Ada Byron King:privateKey",
    "Ada Byron King:keyId",
    "Ada Byron King:voteId",
    "Ada Byron King:blockId",
    "Ada Byron King:voteContent",
    "Ada Byron King:voteSignature",
  ]);
});

Deno.test("the voter list round-trips through one comma-separated string", () => {
  const list = ["Ada Byron King", "Alan Mathison Turing"];
  assert.equal(serializeVoterList(list), "Ada Byron King,Alan Mathison Turing");
  assert.deepEqual(parseVoterList(serializeVoterList(list)), list);
  assert.deepEqual(parseVoterList(null), []);
  assert.deepEqual(parseVoterList(""), []);
  assert.deepEqual(parseVoterList("a,,b, a ,b"), ["a", "b"]);
});

Deno.test("namespaceOf joins the three names and drops commas", () => {
  assert.equal(namespaceOf({ first: "Ada", middle: "Byron", last: "King" }), "Ada Byron King");
  assert.equal(namespaceOf({ first: "A,da", middle: " ", last: "King  Jr" }), "Ada King Jr");
});

Deno.test("uniqueNamespace generates again on a collision", () => {
  const names = [
    { first: "Ada", middle: "Byron", last: "King" },
    { first: "Ada", middle: "Byron", last: "King" },
    { first: "Alan", middle: "M", last: "Turing" },
  ];
  let calls = 0;
  const generated = uniqueNamespace(["Ada Byron King"], () => names[calls++]);
  assert.equal(generated, "Alan M Turing");
  assert.equal(calls, 3);
  assert.throws(
    () => uniqueNamespace(["Ada Byron King"], () => names[0], { maxTries: 5 }),
    /no unique voter name after 5 tries/,
  );
});

Deno.test("sampleRing draws distinct ids from 1..total with the own id, ascending", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 2, max: 12 }).chain((ringSize) =>
        fc.tuple(
          fc.constant(ringSize),
          fc.integer({ min: ringSize, max: 40 }),
          fc.infiniteStream(fc.nat()),
        )
      ),
      fc.nat(),
      ([ringSize, total, stream], ownSeed) => {
        const ownId = 1 + (ownSeed % total);
        const it = stream[Symbol.iterator]();
        const ids = sampleRing({ total, ringSize, ownId }, (n) => it.next().value! % n);
        assert.equal(ids.length, ringSize);
        assert.equal(new Set(ids).size, ringSize);
        assert.ok(ids.includes(ownId));
        assert.ok(ids.every((id) => Number.isInteger(id) && id >= 1 && id <= total));
        assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
      },
    ),
  );
});

Deno.test("sampleRing forces the own id in by replacing a drawn member", () => {
  // The source draws ids 1..8 in order, then picks position 2 (id 3) to replace.
  const draws = [0, 1, 2, 3, 4, 5, 6, 7, 2];
  let i = 0;
  const ids = sampleRing({ total: 20, ringSize: 8, ownId: 15 }, () => draws[i++]);
  assert.deepEqual(ids, [1, 2, 4, 5, 6, 7, 8, 15]);
});

Deno.test("sampleRing refuses a ring larger than the registered keys", () => {
  assert.throws(
    () => sampleRing({ total: 5, ringSize: 8, ownId: 1 }),
    (error: unknown) =>
      error instanceof TooFewKeysError && error.registered === 5 && error.needed === 8,
  );
  assert.throws(() => sampleRing({ total: 9, ringSize: 8, ownId: 10 }), RangeError);
  assert.throws(() => sampleRing({ total: 9, ringSize: 1, ownId: 1 }), RangeError);
});

Deno.test("cryptoRandomIndex stays in range and reaches every value", () => {
  const seen = new Set<number>();
  for (let i = 0; i < 400; i++) {
    const v = cryptoRandomIndex(5);
    assert.ok(Number.isInteger(v) && v >= 0 && v < 5);
    seen.add(v);
  }
  assert.equal(seen.size, 5);
  assert.throws(() => cryptoRandomIndex(0), RangeError);
});

// The panel's actions (lib/app/panel_actions.ts) driven against the real application over in-memory
// KV: the same calls the page makes, with an in-memory Storage in place of the browser's.

type Sent = { method: string; path: string; body?: unknown };

async function setup() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const app = createApp({ store });
  const storage = new MapStorage();
  const sent: Sent[] = [];
  const logs: string[] = [];
  const io: ClientIO = {
    storage,
    async request(method, path, body) {
      sent.push({ method, path, body });
      const res = await app.request(path, {
        method,
        headers: body === undefined ? undefined : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON
      }
      return { ok: res.ok, status: res.status, body: parsed } satisfies Answer;
    },
    log: (message) => logs.push(message),
  };
  const seal = () => sealNextBlock(store, Date.now());
  return { kv, storage, io, sent, logs, seal };
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
  const { kv, io, storage, sent } = await setup();
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
    await t.step("a failed registration clears the stored key id", async () => {
      // The same key again: 409 duplicate_key.
      generateKeys(io, "Copy Of One", { seed: seed(1) });
      storage.setItem(storageKey("Copy Of One", "keyId"), "5");
      assert.deepEqual(await registerKey(io, "Copy Of One"), keyStatusLine("unregistered"));
      assert.equal(storage.getItem(storageKey("Copy Of One", "keyId")), null);
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

    await t.step("fewer registered keys than the ring size: refused with both counts", async () => {
      const outcome = await submitVote(io, voter, { content: "Yes", ringSize: 8 });
      assert.deepEqual(outcome, {
        ok: false,
        reason: "Not enough registered keys to vote: 4 registered, 8 needed",
      });
      assert.equal(readStoredVote(storage, voter).voteId, null);
    });

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
      assert.deepEqual(await loadVoteStatus(io, voter), {
        status: "voted",
        text: voted,
        colour: "green",
      });
      assert.equal((await loadVoteStatus(io, names[0])).status, "voted");
      assert.deepEqual(logs, []);
    });

    await t.step("a second vote by the same key is refused with the server's reason", async () => {
      const outcome = await submitVote(io, voter, { content: "Again", ringSize: 3 });
      assert.equal(outcome.ok, false);
      assert.match((outcome as { reason: string }).reason, /^Vote refused: \S/);
      assert.equal(readStoredVote(storage, voter).voteContent, "Yes");
    });

    await t.step("changed stored content or signature: invalid, mismatch logged", async () => {
      storage.setItem(storageKey(voter, "voteContent"), "No");
      logs.length = 0;
      const line = await loadVoteStatus(io, voter);
      assert.equal(line.status, "invalid");
      assert.equal(line.text, `${voted}, but Invalid - maybe you need to contact the admin`);
      assert.deepEqual(logs, ["Vote content mismatch"]);
      storage.setItem(storageKey(voter, "voteContent"), "Yes");
      const other = readStoredVote(storage, names[0]).voteSignature!;
      storage.setItem(storageKey(voter, "voteSignature"), other);
      logs.length = 0;
      assert.equal((await loadVoteStatus(io, voter)).status, "invalid");
      assert.deepEqual(logs, ["Vote signature mismatch"]);
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
