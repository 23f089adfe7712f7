/**
 * The lying server's log (tests/helpers/lying_server.ts `showLog`), through the HTTP proxy and the
 * in-process transport: a forked chain's checkpoint signed with the real key under the real origin
 * and without the witness's cosignature the honest one carries, proofs that verify against the
 * fork's own roots, refusals answered as the real server answers them (protocol §4.10), and a
 * fork that grows as the real server seals — which no honest checkpoint it forked from is
 * consistent with.
 * @module
 */
import assert from "node:assert/strict";
import { derivedOrigin, logLeafHash } from "../../lib/protocol/block_log.ts";
import { base64ToBytes, equalBytes, hexToBytes } from "../../lib/protocol/bytes.ts";
import { openCheckpoint, parseCheckpoint } from "../../lib/protocol/checkpoint.ts";
import { serverPublicKey } from "../../lib/protocol/head.ts";
import { rootOfSize } from "../../lib/protocol/merkle.ts";
import { verifyConsistency, verifyInclusion } from "../../lib/protocol/merkle_verify.ts";
import {
  COSIGNATURE_V1_TYPE,
  ED25519_TYPE,
  formatNote,
  formatVerifierKey,
  parseNote,
  signCosignature,
  signerKey,
  verifierKey,
  verifyCosignature,
} from "../../lib/protocol/note.ts";
import type { BlockRecord } from "../../lib/protocol/schemas.ts";
import { createApp } from "../../server/app.ts";
import { LOG_CONTENT_TYPE } from "../../server/api/log.ts";
import { createRounds } from "../../server/store/rounds.ts";
import { createStore } from "../../server/store/mod.ts";
import { buildLedger } from "../helpers/ledger_builder.ts";
import {
  forkedChain,
  honestChain,
  serverSeedOf,
  showChain,
  showLog,
} from "../helpers/lying_server.ts";
import { type Lie, startTamperingProxy, tamperingTransport } from "../helpers/tampering_proxy.ts";

/** The height the fork starts at: blocks 0, 1, 2 are shared, so sizes up to 3 agree. */
const FORK_FROM = 3;
const WITNESS = { name: "witness.example/w1", seed: new Uint8Array(32).fill(9) };
const witnessKey = signerKey(WITNESS, COSIGNATURE_V1_TYPE);

/** One answer as a client reads it. */
/** An answer as read: the liar's are never cacheable, so Cache-Control is kept apart. */
type Read = { status: number; type: string | null; text: string };

/** A way to reach the ledger: honestly, or through a lie (the proxy or the transport). */
type Reader = (path: string) => Promise<Read>;

async function readOf(res: Response): Promise<Read> {
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    text: await res.text(),
  };
}

/**
 * The real app over in-memory KV, served on a free loopback port, with its rounds (so round 1's
 * base `/api/rounds/1` serves the election's log too); `seal(n)` seals n blocks of two votes each.
 */
async function ledger() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const rounds = await createRounds(kv, {
    election: store,
    electionIntervalMs: 60_000,
    adminToken: "lying-log-test-token",
  });
  const app = createApp({ store, rounds });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}/`;
  const seed = await serverSeedOf(kv);
  const origin = derivedOrigin(serverPublicKey(seed));
  let startAt = 1_700_000_000_000;
  return {
    app,
    url,
    seed,
    origin,
    logKey: verifierKey(origin, ED25519_TYPE, hexToBytes(serverPublicKey(seed))),
    honest: (path: string) => Promise.resolve(app.request(path)).then(readOf),
    async seal(blocks: number) {
      await buildLedger(store, { votes: 2 * blocks, perBlock: 2, ringSize: 2, startAt });
      startAt += blocks * 60_000 + 60_000;
    },
    async close() {
      await server.shutdown();
      kv.close();
    },
  };
}

type Ledger = Awaited<ReturnType<typeof ledger>>;

/** The checkpoint `read` answers for `path`, opened under the log's key (asserted to open). */
async function checkpointAt(l: Ledger, read: Reader, path = "/api/log/checkpoint") {
  const answer = await read(path);
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.type, LOG_CONTENT_TYPE);
  const opened = openCheckpoint(answer.text, l.logKey);
  assert.ok(opened, `the checkpoint opens under ${formatVerifierKey(l.logKey)}:\n${answer.text}`);
  return { ...opened, note: parseNote(answer.text) };
}

/** The hashes of a proof answer, asserted 200 and text. */
async function proofAt(read: Reader, path: string): Promise<Uint8Array[]> {
  const answer = await read(path);
  assert.equal(answer.status, 200, `${path}: ${answer.text}`);
  assert.equal(answer.type, LOG_CONTENT_TYPE);
  return answer.text === "" ? [] : answer.text.trimEnd().split("\n").map((l) => base64ToBytes(l));
}

/** Has the witness cosign the honest checkpoint now served, and submits its line to the server. */
async function cosignHonest(l: Ledger): Promise<void> {
  const note = parseNote((await l.honest("/api/log/checkpoint")).text);
  const { size } = parseCheckpoint(note.text);
  const line = signCosignature(note.text, WITNESS, Math.floor(Date.now() / 1000));
  const cosignature = formatNote({ text: note.text, signatures: [line] }).trimEnd().split("\n")
    .at(-1)!;
  const res = await l.app.request("/api/log/cosignature", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ vkey: formatVerifierKey(witnessKey), size, cosignature }),
  });
  assert.equal(res.status, 200, await res.text());
}

const leavesOf = (chain: readonly BlockRecord[]) => chain.map((b) => logLeafHash(b.hash));

/** The two ways a lie reaches a client, each over the same ledger. */
const WAYS: {
  name: string;
  start: (l: Ledger, lie: Lie) => { read: Reader; close(): Promise<void> };
}[] = [
  {
    name: "through the HTTP proxy",
    start(l, lie) {
      const proxy = startTamperingProxy(l.url, lie);
      return {
        read: async (path) => await readOf(await fetch(new URL(path.slice(1), proxy.url))),
        close: () => proxy.close(),
      };
    },
  },
  {
    name: "through the in-process transport",
    start(l, lie) {
      const transport = tamperingTransport(l.app.request, lie);
      return {
        read: async (path) => await readOf(await transport(path, { method: "GET" })),
        close: () => Promise.resolve(),
      };
    },
  },
];

for (const way of WAYS) {
  Deno.test(`showLog ${way.name}: the fork's own log, signed with the real key`, async (t) => {
    const l = await ledger();
    // Honest checkpoints a client kept along the way: of size 3 (before the fork) and 5 (after).
    await l.seal(2);
    const shared = await checkpointAt(l, l.honest);
    await l.seal(2);
    const earlier = await checkpointAt(l, l.honest);
    await l.seal(2);
    await cosignHonest(l);
    let forked = forkedChain(await honestChain(l.url), { from: FORK_FROM, seed: l.seed });
    const lie = { answer: showLog(l.seed, () => forked), rewrite: showChain(() => forked) };
    const liar = way.start(l, lie);
    try {
      assert.equal(shared.size, 3);
      assert.equal(earlier.size, 5);
      assert.equal(forked.length, 7);

      await t.step(
        "the forked checkpoint opens under the real key, with no cosignature",
        async () => {
          const honest = await checkpointAt(l, l.honest);
          assert.equal(honest.note.signatures.length, 2, "the honest one carries the witness's");
          assert.ok(verifyCosignature(honest.note, witnessKey));
          const shown = await checkpointAt(l, liar.read);
          assert.equal(shown.origin, l.origin, "under the real origin");
          assert.equal(shown.size, 7);
          assert.deepEqual(shown.root, rootOfSize(leavesOf(forked), 7));
          assert.ok(!equalBytes(shown.root, honest.root), "another root at the same size");
          assert.equal(shown.note.signatures.length, 1, "the log's line alone");
          assert.equal(verifyCosignature(shown.note, witnessKey), false);
        },
      );

      await t.step("it agrees with the chain showChain shows beside it", async () => {
        const shownBlocks: BlockRecord[] = JSON.parse(
          (await liar.read("/api/blocks?from=0&limit=100")).text,
        ).blocks;
        assert.deepEqual(shownBlocks, forked);
        const shown = await checkpointAt(l, liar.read);
        assert.deepEqual(shown.root, rootOfSize(leavesOf(shownBlocks), shown.size));
      });

      await t.step(
        "every consistency and inclusion proof verifies against its own roots",
        async () => {
          const leaves = leavesOf(forked);
          for (let newSize = 0; newSize <= 7; newSize++) {
            for (let oldSize = 0; oldSize <= newSize; oldSize++) {
              const proof = await proofAt(liar.read, `/api/log/consistency/${oldSize}/${newSize}`);
              const input = {
                oldSize,
                newSize,
                oldRoot: rootOfSize(leaves, oldSize),
                newRoot: rootOfSize(leaves, newSize),
                proof,
              };
              assert.ok(verifyConsistency(input), `consistency ${oldSize} → ${newSize}`);
            }
            for (let height = 0; height < newSize; height++) {
              const proof = await proofAt(liar.read, `/api/log/inclusion/${height}/${newSize}`);
              const input = {
                index: height,
                size: newSize,
                leafHash: leaves[height],
                root: rootOfSize(leaves, newSize),
                proof,
              };
              assert.ok(verifyInclusion(input), `inclusion of ${height} in ${newSize}`);
            }
          }
        },
      );

      await t.step("no honest checkpoint past the fork point is consistent with it", async () => {
        const shown = await checkpointAt(l, liar.read);
        const fromEarlier = await proofAt(liar.read, `/api/log/consistency/5/${shown.size}`);
        assert.equal(
          verifyConsistency({
            oldSize: earlier.size,
            newSize: shown.size,
            oldRoot: earlier.root,
            newRoot: shown.root,
            proof: fromEarlier,
          }),
          false,
        );
        // Before the fork point the two histories are one: the same proof call verifies.
        const fromShared = await proofAt(liar.read, `/api/log/consistency/3/${shown.size}`);
        assert.ok(verifyConsistency({
          oldSize: shared.size,
          newSize: shown.size,
          oldRoot: shared.root,
          newRoot: shown.root,
          proof: fromShared,
        }));
      });

      await t.step(
        "refusals and unmatched paths are answered as the real server answers",
        async () => {
          const paths = [
            "/api/log/consistency/x/3",
            "/api/log/consistency/3/x",
            "/api/log/consistency/01/3",
            "/api/log/consistency/-1/3",
            "/api/log/consistency/5/3",
            "/api/log/consistency/1/8",
            "/api/log/consistency/9/8",
            "/api/log/inclusion/3/3",
            "/api/log/inclusion/4/3",
            "/api/log/inclusion/x/3",
            "/api/log/inclusion/0/x",
            "/api/log/inclusion/0/8",
            "/api/log/inclusion/0/99999999999999999",
            "/api/log/consistency/1",
            "/api/log/consistency//3",
            "/api/log/inclusion/0/3/1",
            "/api/log/checkpoint/",
            "/api/log/tiles",
          ];
          for (const path of paths) {
            const honest = await l.honest(path);
            const shown = await liar.read(path);
            assert.ok(honest.status >= 400, `${path} is refused by the real server`);
            assert.deepEqual(
              { ...shown, text: JSON.parse(shown.text) },
              { ...honest, text: JSON.parse(honest.text) },
              path,
            );
          }
        },
      );

      await t.step("as the real server seals, the fork grows with it, recomputed", async () => {
        const before = await checkpointAt(l, liar.read);
        await l.seal(3);
        // Until the fork is recomputed, the lie keeps its size: past it is no tree.
        assert.equal((await l.honest("/api/log/consistency/7/10")).status, 200);
        const stale = await liar.read("/api/log/consistency/7/10");
        assert.equal(stale.status, 404);
        assert.deepEqual(JSON.parse(stale.text).error, {
          code: "unknown_tree",
          message: "No tree of size 10: the log's size is 7",
        });
        forked = forkedChain(await honestChain(l.url), { from: FORK_FROM, seed: l.seed });
        const after = await checkpointAt(l, liar.read);
        assert.equal(after.size, 10);
        assert.deepEqual(after.root, rootOfSize(leavesOf(forked), 10));
        assert.equal(after.note.signatures.length, 1);
        const proof = await proofAt(liar.read, `/api/log/consistency/${before.size}/10`);
        assert.ok(
          verifyConsistency({
            oldSize: before.size,
            newSize: 10,
            oldRoot: before.root,
            newRoot: after.root,
            proof,
          }),
          "the fork is append-only in its own right",
        );
        const fromEarlier = await proofAt(liar.read, "/api/log/consistency/5/10");
        assert.equal(
          verifyConsistency({
            oldSize: 5,
            newSize: 10,
            oldRoot: earlier.root,
            newRoot: after.root,
            proof: fromEarlier,
          }),
          false,
        );
        const honest = await checkpointAt(l, l.honest);
        assert.equal(honest.size, 10);
        assert.ok(!equalBytes(honest.root, after.root));
      });

      await t.step("a chain whose heights are not 0, 1, 2 … is a bug in the test", async () => {
        const broken = showLog(l.seed, () => forked.slice(1), { origin: l.origin });
        const honest = () => Promise.reject(new Error("the origin is given: nothing is asked"));
        await assert.rejects(
          async () => await broken({ path: "/api/log/checkpoint", method: "GET", honest }),
          /a shown chain holds heights 0, 1, 2 …; block 0 is at 1/,
        );
      });
    } finally {
      await liar.close();
      await l.close();
    }
  });
}

Deno.test("showLog under one ledger's base leaves the others' logs honest", async () => {
  const l = await ledger();
  await l.seal(4);
  const forked = forkedChain(await honestChain(l.url), { from: 2, seed: l.seed });
  const proxy = startTamperingProxy(l.url, {
    answer: showLog(l.seed, () => forked, { base: "/api/rounds/1/", origin: l.origin }),
  });
  const read: Reader = async (path) => await readOf(await fetch(new URL(path.slice(1), proxy.url)));
  try {
    const honest = await checkpointAt(l, l.honest);
    const round = await checkpointAt(l, read, "/api/rounds/1/log/checkpoint");
    assert.equal(round.size, honest.size);
    assert.deepEqual(round.root, rootOfSize(leavesOf(forked), 5));
    assert.ok(!equalBytes(round.root, honest.root));
    const election = await read("/api/log/checkpoint");
    assert.equal(election.text, formatNote(honest.note), "the election's base is passed on");
    assert.deepEqual(
      await read("/api/log/consistency/2/5"),
      await l.honest("/api/log/consistency/2/5"),
    );
    assert.notDeepEqual(
      await read("/api/rounds/1/log/consistency/3/5"),
      await l.honest("/api/rounds/1/log/consistency/3/5"),
    );
  } finally {
    await proxy.close();
    await l.close();
  }
});
