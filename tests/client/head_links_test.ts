/**
 * The walk of prev_hash links the attack lab's lens checks make (protocol §4.7) against a server
 * that keeps its own signing key and lies, each lie told by a proxy holding the real key: a new
 * head is accepted only when its links lead back to every remembered head; anything else is an
 * alert, and the memory is kept. Pages check the log's proofs instead (log_view_test.ts).
 * @module
 */
import assert from "node:assert/strict";
import { type ApiClient, createApiClient, type Transport } from "../../lib/client/api_client.ts";
import type { ShownHead } from "../../lib/client/log/heads.ts";
import {
  checkExtension,
  MAX_LINK_BLOCKS,
  MAX_LINK_REQUESTS,
} from "../../lib/client/log/head_links.ts";
import { headAlerts } from "../../lib/client/log/head_alerts.ts";
import {
  type HeadObservation,
  mayRemember,
  observeChain,
  parseSeenHeads,
  SEEN_HEADS_KEY,
  serializeSeenHeads,
} from "../../lib/client/log/heads.ts";
import { checkForkEvidence, serverPublicKey, signHead } from "../../lib/protocol/head.ts";
import type { BlockRecord } from "../../lib/protocol/schemas.ts";
import { createApp } from "../../server/app.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { createStore } from "../../server/store/mod.ts";
import { call, makeVoters, signedVote } from "../helpers/ledger_fixtures.ts";
import { forkedChain, serverSeedOf, showChain, torsionedHeads } from "../helpers/lying_server.ts";
import { MapStorage } from "../helpers/map_storage.ts";
import { type Rewrite, tamperingTransport } from "../helpers/tampering_proxy.ts";

/**
 * The walk's check of the chain a client shows, as the attack lab's lens checks make it (pages
 * check the log's proofs instead: log_view_test.ts): the key and the status head, the links from
 * every shown head to the remembered ones, and the memory stored only when it may be.
 */
async function checkShownChain(
  api: ApiClient,
  { storage, shown = [] }: { storage: MapStorage; shown?: readonly ShownHead[] },
): Promise<HeadObservation> {
  const [{ key }, status] = await Promise.all([api.serverKey(), api.blockStatus()]);
  const seen = parseSeenHeads(storage.getItem(SEEN_HEADS_KEY));
  const observed = await observeChain(api, { key, seen, status, shown });
  if (mayRemember(observed)) storage.setItem(SEEN_HEADS_KEY, serializeSeenHeads(observed.seen));
  return observed;
}

/** A server over in-memory KV with `blocks` sealed blocks of one vote each, and its real seed. */
async function ledger(blocks: number) {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const app = createApp({ store });
  const voters = makeVoters(12);
  for (const v of voters) await store.registerKey(v.key);
  let sealed = 0;
  const seal = async () => {
    await call(
      app,
      "POST",
      "/api/vote",
      signedVote(voters[sealed], [voters[sealed], voters[11]], `V${sealed}`),
    );
    await sealNextBlock(store, Date.now() + sealed);
    sealed++;
  };
  for (let i = 0; i < blocks; i++) await seal();
  const chain = async (): Promise<BlockRecord[]> =>
    (await call(app, "GET", `/api/blocks?from=0&limit=100`)).body.blocks;
  return { kv, app, seal, chain, seed: await serverSeedOf(kv) };
}

type Ledger = Awaited<ReturnType<typeof ledger>>;

function client(l: Ledger, lie?: Rewrite) {
  const transport: Transport = lie ? tamperingTransport(l.app.request, lie) : l.app.request;
  return createApiClient({ fetch: transport });
}

/** A storage remembering what an honest view of `l` shows now. */
async function rememberHonest(l: Ledger): Promise<MapStorage> {
  const storage = new MapStorage();
  const first = await checkShownChain(client(l), { storage, shown: await l.chain() });
  assert.deepEqual(headAlerts(first), []);
  return storage;
}

const kinds = (observed: Parameters<typeof headAlerts>[0]) =>
  headAlerts(observed).map((a) => a.kind);

Deno.test("an honest chain that grows is accepted and remembered, with no alert", async () => {
  const l = await ledger(2);
  const storage = await rememberHonest(l);
  await l.seal();
  await l.seal();
  const observed = await checkShownChain(client(l), { storage });
  assert.deepEqual(kinds(observed), []);
  const heights = parseSeenHeads(storage.getItem(SEEN_HEADS_KEY)).heads.map((h) => h.height);
  assert.deepEqual(heights, [0, 1, 2, 3, 4], "the blocks read to link the new head are remembered");
  l.kv.close();
});

Deno.test("a fork above the remembered head, with the remembered block withheld, is an alert", async (t) => {
  const l = await ledger(2);
  const storage = await rememberHonest(l);
  const before = storage.getItem(SEEN_HEADS_KEY);
  await l.seal();
  // The liar rewrites history from the remembered height 2 on and shows the forked head 3.
  const forked = forkedChain(await l.chain(), { from: 2, seed: l.seed });
  for (
    const [how, expected] of [
      ["omit", "withheld"],
      ["empty", "withheld"],
      ["other", "withheld"],
    ] as const
  ) {
    await t.step(`the block is ${how === "other" ? "served at another height" : how}`, async () => {
      const lie = showChain(() => forked, { withhold: [2], withholdAs: how });
      const observed = await checkShownChain(client(l, lie), { storage });
      assert.ok(kinds(observed).includes(expected), kinds(observed).join(", "));
      assert.equal(observed.fork, null);
      assert.equal(storage.getItem(SEEN_HEADS_KEY), before, "the forked head is not remembered");
    });
  }
  await t.step("the blocks read fail: withheld, never a pass", async () => {
    const failing: Transport = (url, init) =>
      url.includes("/api/blocks")
        ? Promise.reject(new TypeError("connection reset"))
        : l.app.request(url, init);
    const lie = tamperingTransport(failing, showChain(() => forked));
    const observed = await checkShownChain(createApiClient({ fetch: lie }), { storage });
    assert.deepEqual(kinds(observed), ["withheld"]);
    assert.equal(storage.getItem(SEEN_HEADS_KEY), before);
  });
  await t.step("the forked block served: fork evidence under the real key", async () => {
    const observed = await checkShownChain(client(l, showChain(() => forked)), { storage });
    assert.ok(observed.fork);
    assert.equal(observed.fork.key, serverPublicKey(l.seed));
    assert.deepEqual(checkForkEvidence(observed.fork), { ok: true, height: 2 });
    assert.ok(kinds(observed).includes("not-extended"));
    assert.equal(storage.getItem(SEEN_HEADS_KEY), before);
  });
  l.kv.close();
});

Deno.test("links that do not lead back to the remembered hash are an alert", async () => {
  const l = await ledger(2);
  const storage = await rememberHonest(l);
  await l.seal();
  const honest = await l.chain();
  // Block 3 re-linked to a made-up block 2, everything signed with the real key; block 2 itself
  // is served honestly, so only the link from 3 down to 2 gives the lie away.
  const forked = forkedChain(honest, { from: 2, seed: l.seed });
  const lie = showChain(() => [...honest.slice(0, 3), forked[3]]);
  const observed = await checkShownChain(client(l, lie), { storage });
  assert.deepEqual(kinds(observed), ["not-extended"]);
  assert.equal(observed.fork, null);
  l.kv.close();
});

Deno.test("an old block shown again is linked up to the remembered head above it", async () => {
  const l = await ledger(3);
  const storage = new MapStorage();
  // Remember only the head, as a page that was shown nothing else.
  assert.deepEqual(kinds(await checkShownChain(client(l), { storage })), []);
  const forked = forkedChain(await l.chain(), { from: 1, seed: l.seed });
  // A vote proof's block 1 from the forked history, validly signed, the rest honest.
  const observed = await checkShownChain(client(l), { storage, shown: [forked[1]] });
  assert.ok(kinds(observed).includes("not-extended"), kinds(observed).join(", "));
  assert.equal(storage.getItem(SEEN_HEADS_KEY) !== null, true);
  assert.ok(!parseSeenHeads(storage.getItem(SEEN_HEADS_KEY)).heads.some((h) => h.height === 1));
  l.kv.close();
});

Deno.test("a block whose hash is not its fields' hash is an alert, though signed", async () => {
  const l = await ledger(2);
  const storage = await rememberHonest(l);
  await l.seal();
  const honest = await l.chain();
  const lie = showChain(() =>
    honest.map((b) => b.height === 3 ? { ...b, timestamp: b.timestamp + 1 } : b)
  );
  const observed = await checkShownChain(client(l, lie), { storage });
  assert.ok(kinds(observed).includes("inconsistent"), kinds(observed).join(", "));
  l.kv.close();
});

Deno.test("head signatures with a torsioned R are not signatures: an alert, nothing remembered", async () => {
  const l = await ledger(2);
  const storage = await rememberHonest(l);
  const before = storage.getItem(SEEN_HEADS_KEY);
  await l.seal();
  const observed = await checkShownChain(client(l, torsionedHeads(l.seed)), { storage });
  assert.ok(kinds(observed).includes("unsigned"), kinds(observed).join(", "));
  assert.equal(storage.getItem(SEEN_HEADS_KEY), before);
  l.kv.close();
});

/**
 * A liar with no end of blocks, as the review found one: the status head is `far`, and every
 * blocks list is a full page of made-up blocks, up to `limit` pages (then no answer at all, so a
 * walk without a bound waits instead of running the test out of memory). Counts every request.
 */
function endlessChain(l: Ledger, far: { height: number; hash: string }, limit = 20) {
  const paths: string[] = [];
  const madeUp = (height: number) => ({
    height,
    hash: "6b".repeat(32),
    prev_hash: "6b".repeat(32),
    merkle_root: "00".repeat(32),
    timestamp: 1_700_000_000_000,
    size: 1,
    head_signature: signHead(l.seed, { height, hash: "6b".repeat(32) }),
  });
  const lie = tamperingTransport(l.app.request, (path, body) => {
    if (path === "/api/block/status") {
      Object.assign(body, { ...far, head_signature: signHead(l.seed, far) });
    }
  });
  const fetch: Transport = (url, init) => {
    const { pathname, searchParams } = new URL(url, "http://localhost");
    paths.push(pathname);
    if (pathname !== "/api/blocks") return lie(url, init);
    if (paths.filter((p) => p === pathname).length > limit) return new Promise(() => {});
    const from = Number(searchParams.get("from"));
    const count = Number(searchParams.get("limit"));
    const blocks = Array.from({ length: count }, (_, i) => madeUp(from + i));
    return Response.json({ blocks, height: far.height });
  };
  return { fetch, paths };
}

/** `promise`, or a failure once `ms` have passed without it settling (so a hang fails the test). */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("a head far beyond the remembered ones is unchecked at once: no walk, no memory", async (t) => {
  const l = await ledger(2);
  const storage = await rememberHonest(l);
  const before = storage.getItem(SEEN_HEADS_KEY);
  for (const height of [Number.MAX_SAFE_INTEGER, 2 + MAX_LINK_BLOCKS + 1]) {
    await t.step(`a head signed with the real key at height ${height}`, async () => {
      // The status head moved far up, validly signed: a lie no walk of prev_hash links can refute.
      const { fetch, paths } = endlessChain(l, { height, hash: "5a".repeat(32) });
      const heapBefore = Deno.memoryUsage().heapUsed;
      const observed = await within(
        2_000,
        checkShownChain(createApiClient({ fetch }), { storage }),
      );
      const grown = Deno.memoryUsage().heapUsed - heapBefore;
      assert.ok(grown < 16 * 1024 * 1024, `the heap stays small (grew ${grown} bytes)`);
      assert.deepEqual(paths.toSorted(), ["/api/block/status", "/api/server-key"], "no walk");
      assert.deepEqual(kinds(observed), ["unchecked"]);
      const [alert] = headAlerts(observed);
      assert.match(
        alert.text,
        new RegExp(`blocks 2 to ${height} .* more than the ${MAX_LINK_BLOCKS}`),
      );
      assert.equal(storage.getItem(SEEN_HEADS_KEY), before, "the far head is not remembered");
    });
  }
  await t.step(
    "the server back at its true head: no alert, and the chain is remembered",
    async () => {
      await l.seal();
      assert.deepEqual(kinds(await checkShownChain(client(l), { storage })), []);
      const heights = parseSeenHeads(storage.getItem(SEEN_HEADS_KEY)).heads.map((h) => h.height);
      assert.deepEqual(heights, [0, 1, 2, 3]);
    },
  );
  l.kv.close();
});

Deno.test("a blocks read with no answer by its deadline is unchecked, not withheld", async () => {
  const l = await ledger(2);
  const storage = await rememberHonest(l);
  const before = storage.getItem(SEEN_HEADS_KEY);
  await l.seal();
  const stalling: Transport = (url, init) =>
    url.includes("/api/blocks") ? new Promise<Response>(() => {}) : l.app.request(url, init);
  const api = createApiClient({ fetch: stalling, timeoutMs: 100 });
  const observed = await checkShownChain(api, { storage });
  assert.deepEqual(kinds(observed), ["unchecked"]);
  assert.match(
    headAlerts(observed)[0].text,
    /GET \/api\/blocks\?from=2&limit=2 failed: no answer within 100 ms/,
  );
  assert.equal(storage.getItem(SEEN_HEADS_KEY), before);
  l.kv.close();
});

Deno.test("the blocks a check needs in many short runs are read in at most MAX_LINK_REQUESTS requests", async () => {
  // Anchored at 0 and shown every odd block below a head at 2n: the even blocks are missing one
  // by one, n + 1 runs, more than one check's requests.
  const n = MAX_LINK_REQUESTS + 11;
  const record = (height: number): BlockRecord & { head_signature: string } => ({
    height,
    hash: height.toString(16).padStart(64, "0"),
    prev_hash: (height - 1).toString(16).padStart(64, "0"),
    merkle_root: "00".repeat(32),
    timestamp: 1_700_000_000_000 + height,
    size: 1,
    head_signature: "00".repeat(64),
  });
  const calls: [number, number][] = [];
  const api = {
    blocks: (offset: number, limit: number) => {
      calls.push([offset, limit]);
      const items = Array.from({ length: limit }, (_, i) => record(offset + i));
      return Promise.resolve({ items, total: 2 * n + 1 });
    },
  } as unknown as ApiClient;
  const shown = [...Array.from({ length: n }, (_, i) => record(2 * i + 1)), record(2 * n)];
  const { problems } = await checkExtension(api, { anchors: [record(0)], shown });
  assert.equal(calls.length, MAX_LINK_REQUESTS);
  const unchecked = problems.filter((p) => p.kind === "unchecked");
  assert.deepEqual(unchecked.map((p) => [p.from, p.to]), [[2 * MAX_LINK_REQUESTS, 2 * n]]);
});
