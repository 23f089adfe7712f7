// The log calls of every ledger (protocol §4.10) through createApp over in-memory Deno KV: the
// checkpoint is a signed note that opens under the ledger's key and origin, its root is the RFC 9162
// root over the block hashes, every consistency and inclusion proof verifies, each refusal has its
// status and code, LOG_ORIGIN names the election's log (round 1's too), and the lab and a round
// have origins of their own. Status, then content type, then body.
import assert from "node:assert/strict";
import { derivedOrigin, logLeafHash } from "../../../lib/protocol/block_log.ts";
import { base64ToBytes, hexToBytes } from "../../../lib/protocol/bytes.ts";
import { type Checkpoint, openCheckpoint } from "../../../lib/protocol/checkpoint.ts";
import { merkleRoot, rootOfSize } from "../../../lib/protocol/merkle.ts";
import { verifyConsistency, verifyInclusion } from "../../../lib/protocol/merkle_verify.ts";
import { ED25519_TYPE, parseNote, verifierKey } from "../../../lib/protocol/note.ts";
import type { BlockRecord } from "../../../lib/protocol/schemas.ts";
import { type AppOptions, createApp } from "../../../server/app.ts";
import { ledgerKeys } from "../../../server/store/layout.ts";
import { createLabLedger } from "../../../server/store/lab.ts";
import { createStore, type Store } from "../../../server/store/mod.ts";
import { createRounds } from "../../../server/store/rounds.ts";
import { buildLedger } from "../../helpers/ledger_builder.ts";
import { testVerifier } from "../../helpers/test_verifier.ts";

const ADMIN_TOKEN = "presenter-token-0123456789";
const TEXT = "text/plain; charset=utf-8";

type App = ReturnType<typeof createApp>;

/** The app with the lab and rounds over a fresh in-memory KV. */
async function setup(config: AppOptions["config"] = {}) {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv, { now: () => 1_700_000_000_000 });
  const lab = await createLabLedger(kv, { maxKeys: 50, maxVotes: 50 });
  const rounds = await createRounds(kv, {
    election: store,
    electionIntervalMs: 250,
    adminToken: ADMIN_TOKEN,
    currentTtlMs: 0,
  });
  const app = createApp({ store, lab, rounds, verifier: testVerifier, config });
  return { kv, store, lab, rounds, app };
}

/** Seals `blocks` more blocks of two votes each into `store`. */
async function seal(store: Store, blocks: number, startAt = 1_700_000_060_000) {
  await buildLedger(store, { votes: blocks * 2, perBlock: 2, ringSize: 2, startAt });
}

async function get(app: App, path: string) {
  const res = await app.request(path);
  return { status: res.status, type: res.headers.get("content-type"), res, text: await res.text() };
}

async function json(app: App, path: string) {
  return JSON.parse((await get(app, path)).text);
}

/** Every block record of the ledger at `base`, as served. */
async function blocksOf(app: App, base: string): Promise<BlockRecord[]> {
  const blocks: BlockRecord[] = [];
  for (;;) {
    const page = await json(app, `${base}/blocks?from=${blocks.length}&limit=100`);
    blocks.push(...page.blocks);
    if (blocks.length > page.height) return blocks;
  }
}

/** The ledger's checkpoint, opened under its server key and `origin`; fails if it does not open. */
async function checkpointOf(app: App, base: string, origin: string): Promise<Checkpoint> {
  const answer = await get(app, `${base}/log/checkpoint`);
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.type, TEXT);
  const { key } = await json(app, `${base}/server-key`);
  const opened = openCheckpoint(answer.text, verifierKey(origin, ED25519_TYPE, hexToBytes(key)));
  assert.ok(opened, `the checkpoint of ${base} opens under its key and origin ${origin}`);
  return opened;
}

function hashes(text: string): Uint8Array[] {
  assert.equal(text === "" || text.endsWith("\n"), true, "every line ends in a newline");
  return text === "" ? [] : text.slice(0, -1).split("\n").map((line) => base64ToBytes(line));
}

Deno.test("GET /api/log/checkpoint: the RFC 9162 root over every block hash, signed", async () => {
  const { kv, app, store } = await setup();
  try {
    await seal(store, 5);
    const { key } = await json(app, "/api/server-key");
    const answer = await get(app, "/api/log/checkpoint");
    assert.equal(answer.status, 200);
    assert.equal(answer.type, TEXT);
    assert.equal(answer.res.headers.get("cache-control"), "no-store");
    const origin = derivedOrigin(key);
    assert.equal(origin, `ringvote.local/log/${key.slice(0, 16)}`);
    const note = parseNote(answer.text);
    assert.equal(note.signatures.length, 1, "one signature line: the ledger's key");
    assert.equal(note.signatures[0].name, origin);
    const checkpoint = await checkpointOf(app, "/api", origin);
    const blocks = await blocksOf(app, "/api");
    assert.equal(blocks.length, 6, "genesis and five sealed blocks");
    assert.equal(checkpoint.size, (await json(app, "/api/block/status")).height + 1);
    assert.deepEqual(checkpoint.root, merkleRoot(blocks.map((b) => logLeafHash(b.hash))));
    assert.deepEqual(checkpoint.extensions, []);
    const again = await get(app, "/api/log/checkpoint");
    assert.equal(again.text, answer.text, "one size, one note");
  } finally {
    kv.close();
  }
});

Deno.test("a fresh ledger's log holds genesis alone: size 1, root the leaf of its hash", async () => {
  const { kv, app } = await setup();
  try {
    const { key } = await json(app, "/api/server-key");
    const checkpoint = await checkpointOf(app, "/api", derivedOrigin(key));
    const [genesis] = await blocksOf(app, "/api");
    assert.equal(checkpoint.size, 1);
    assert.deepEqual(checkpoint.root, logLeafHash(genesis.hash));
  } finally {
    kv.close();
  }
});

Deno.test("the log grows with the chain: every consistency and inclusion proof verifies", async () => {
  const { kv, app, store } = await setup();
  try {
    const { key } = await json(app, "/api/server-key");
    const origin = derivedOrigin(key);
    await seal(store, 3);
    const before = await checkpointOf(app, "/api", origin);
    assert.equal(before.size, 4);
    await seal(store, 5, 1_700_001_000_000);
    const after = await checkpointOf(app, "/api", origin);
    assert.equal(after.size, 9);
    const leaves = (await blocksOf(app, "/api")).map((b) => logLeafHash(b.hash));
    assert.deepEqual(before.root, rootOfSize(leaves, 4), "the earlier checkpoint's root holds");

    const proof = await get(app, `/api/log/consistency/4/9`);
    assert.equal(proof.status, 200);
    assert.equal(proof.type, TEXT);
    const between = {
      oldSize: 4,
      newSize: 9,
      oldRoot: before.root,
      newRoot: after.root,
      proof: hashes(proof.text),
    };
    assert.equal(verifyConsistency(between), true, "the earlier checkpoint extends to the later");

    for (let n = 1; n <= after.size; n++) {
      for (let m = 0; m <= n; m++) {
        const answer = await get(app, `/api/log/consistency/${m}/${n}`);
        assert.equal(answer.status, 200);
        assert.equal(answer.type, TEXT);
        const input = {
          oldSize: m,
          newSize: n,
          oldRoot: rootOfSize(leaves, m),
          newRoot: rootOfSize(leaves, n),
          proof: hashes(answer.text),
        };
        assert.equal(verifyConsistency(input), true, `consistency ${m} -> ${n}`);
        if (m === 0 || m === n) assert.equal(answer.text, "", "empty when old = 0 or old = new");
      }
      for (let height = 0; height < n; height++) {
        const answer = await get(app, `/api/log/inclusion/${height}/${n}`);
        assert.equal(answer.status, 200);
        assert.equal(answer.type, TEXT);
        const input = {
          index: height,
          size: n,
          leafHash: leaves[height],
          proof: hashes(answer.text),
          root: rootOfSize(leaves, n),
        };
        assert.equal(verifyInclusion(input), true, `block ${height} in the tree of ${n}`);
      }
    }
  } finally {
    kv.close();
  }
});

Deno.test("log refusals: 400 invalid_request and 404 unknown_tree, as JSON", async () => {
  const { kv, app, store } = await setup();
  try {
    await seal(store, 2);
    // The log's size is 3: genesis and two blocks.
    const cases: [string, number, string][] = [
      ["/api/log/consistency/3/2", 400, "invalid_request"],
      ["/api/log/consistency/1/4", 404, "unknown_tree"],
      ["/api/log/consistency/4/4", 404, "unknown_tree"],
      ["/api/log/consistency/9/4", 400, "invalid_request"],
      ["/api/log/consistency/x/2", 400, "invalid_request"],
      ["/api/log/consistency/1/-2", 400, "invalid_request"],
      ["/api/log/consistency/01/2", 400, "invalid_request"],
      ["/api/log/inclusion/3/3", 400, "invalid_request"],
      ["/api/log/inclusion/0/0", 400, "invalid_request"],
      ["/api/log/inclusion/0/4", 404, "unknown_tree"],
      ["/api/log/inclusion/5/4", 400, "invalid_request"],
      ["/api/log/inclusion/1.0/2", 400, "invalid_request"],
      ["/api/log/inclusion/1/99999999999999999", 400, "invalid_request"],
      ["/api/log/consistency/1", 404, "not_found"],
      ["/api/log/checkpoint/3", 404, "not_found"],
    ];
    for (const [path, status, code] of cases) {
      const answer = await get(app, path);
      assert.equal(answer.status, status, path);
      assert.match(answer.type ?? "", /^application\/json/, path);
      assert.equal(JSON.parse(answer.text).error.code, code, path);
    }
    const edge = await get(app, "/api/log/consistency/3/3");
    assert.equal(edge.status, 200);
    assert.equal(edge.text, "");
    const zero = await get(app, "/api/log/consistency/0/0");
    assert.equal(zero.status, 200);
    assert.equal(zero.text, "");
    const post = await app.request("/api/log/checkpoint", {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    assert.equal(post.status, 404);
  } finally {
    kv.close();
  }
});

Deno.test("LOG_ORIGIN names the election's log, round 1's too; the lab and rounds derive theirs", async () => {
  const { kv, app, store, lab } = await setup({ logOrigin: "vote.example.org/log" });
  try {
    await seal(store, 1);
    await seal(await lab.current(), 2);
    const started = await app.request("/api/rounds", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ question: "Which colour?", choices: [] }),
    });
    assert.equal(started.status, 201);

    const election = await checkpointOf(app, "/api", "vote.example.org/log");
    const roundOne = await checkpointOf(app, "/api/rounds/1", "vote.example.org/log");
    assert.deepEqual(roundOne, election, "round 1 is the election");
    assert.equal(election.size, 2);

    const labKey = (await json(app, "/api/lab/server-key")).key;
    const labLog = await checkpointOf(app, "/api/lab", derivedOrigin(labKey));
    assert.equal(labLog.size, 3);
    const roundKey = (await json(app, "/api/rounds/2/server-key")).key;
    const roundLog = await checkpointOf(app, "/api/rounds/2", derivedOrigin(roundKey));
    assert.equal(roundLog.size, 1);
    const origins = new Set([election.origin, labLog.origin, roundLog.origin]);
    assert.equal(origins.size, 3, "every ledger has an origin of its own");

    // A reset starts a practice ledger with a new key, and so a new log under a new origin.
    const reset = await app.request("/api/lab/reset", {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    assert.equal(reset.status, 200);
    const freshKey = (await json(app, "/api/lab/server-key")).key;
    const fresh = await checkpointOf(app, "/api/lab", derivedOrigin(freshKey));
    assert.notEqual(fresh.origin, labLog.origin);
    assert.equal(fresh.size, 1);
  } finally {
    kv.close();
  }
});

Deno.test("a held block changed under the log: 500, and no checkpoint is signed", async () => {
  const { kv, app, store } = await setup();
  const errors: unknown[][] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => errors.push(args);
  try {
    await seal(store, 2);
    assert.equal((await get(app, "/api/log/checkpoint")).status, 200);
    const keys = ledgerKeys();
    const held = (await kv.get<BlockRecord>(keys.block(2))).value!;
    await kv.set(keys.block(2), { ...held, hash: "ab".repeat(32) });
    for (const path of ["/api/log/checkpoint", "/api/log/consistency/1/3"]) {
      const answer = await get(app, path);
      assert.equal(answer.status, 500, path);
      assert.equal(JSON.parse(answer.text).error.code, "internal_error");
      assert.doesNotMatch(answer.text, /ringvote\.local/, "no note in the answer");
    }
    assert.match(String(errors.at(-1)?.[1]), /does not extend the log held in memory/);
  } finally {
    console.error = original;
    kv.close();
  }
});
