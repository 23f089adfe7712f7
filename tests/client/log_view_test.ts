/**
 * A page's check of the server's log (protocol §4.5, §4.10; page §10.13) against the real API over
 * in-memory Deno KV, and against a server that keeps the real key and lies: a new checkpoint is
 * accepted only with a consistency proof from the remembered one, every block shown is proven
 * included, two checkpoints no proof joins are fork evidence anyone can check, and under a witness
 * policy a checkpoint counts as witnessed only with fresh cosignatures by the quorum.
 * @module
 */
import assert from "node:assert/strict";
import { createApiClient, type Transport } from "../../lib/client/api_client.ts";
import { type ChainCheck, checkShownChain } from "../../lib/client/log/chain_check.ts";
import { SEEN_HEADS_KEY } from "../../lib/client/log/heads.ts";
import { parseLogMemory, SEEN_LOG_KEY } from "../../lib/client/log/log_memory.ts";
import { unwitnessedBoundMs } from "../../lib/client/log/log_witness.ts";
import { policyFromFragment, type WitnessPolicy } from "../../lib/client/log/witness_policy.ts";
import { logLeafHash } from "../../lib/protocol/block_log.ts";
import { bytesToBase64 } from "../../lib/protocol/bytes.ts";
import { blockHash } from "../../lib/protocol/chain.ts";
import { parseCheckpoint, signCheckpoint } from "../../lib/protocol/checkpoint.ts";
import { checkLogForkEvidence } from "../../lib/protocol/log_evidence.ts";
import { createAppendOnlyTree, emptyRoot } from "../../lib/protocol/merkle.ts";
import {
  COSIGNATURE_V1_TYPE,
  formatNote,
  formatVerifierKey,
  parseNote,
  signCosignature,
  signerKey,
} from "../../lib/protocol/note.ts";
import { bytesToHex } from "../../lib/protocol/bytes.ts";
import type { BlockRecord } from "../../lib/protocol/schemas.ts";
import { createApp } from "../../server/app.ts";
import { createStore, type Store } from "../../server/store/mod.ts";
import { resign, serverSeedOf } from "../helpers/lying_server.ts";
import { MapStorage } from "../helpers/map_storage.ts";
import { policyWitness } from "../helpers/policy_witness.ts";
import { appendEmptyBlocks } from "../helpers/ledger_builder.ts";

const T0 = 1_700_000_000_000;

/** The real API over a fresh in-memory KV, its store and the ledger key's seed. */
async function server() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv, { now: () => T0 });
  const app = createApp({ store });
  return { kv, store, app, seed: await serverSeedOf(kv) };
}

const growTo = appendEmptyBlocks;

/** A transport that records every request and the bytes of every answer. */
function metered(inner: Transport) {
  const paths: string[] = [];
  let bytes = 0;
  const fetch: Transport = async (url, init) => {
    paths.push(new URL(url, "http://x").pathname);
    const res = await inner(url, init);
    const body = await res.arrayBuffer();
    bytes += body.byteLength;
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetch, paths, bytes: () => bytes, reset: () => (paths.length = 0, bytes = 0) };
}

/** Answers the paths `lies` names itself, the others from `inner`. */
function lying(inner: Transport, lies: (path: string) => Response | null): Transport {
  return (url, init) => lies(new URL(url, "http://x").pathname) ?? inner(url, init);
}

const text = (body: string, status = 200) =>
  new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });

/** Every block of the chain, as served. */
async function chainOf(store: Store): Promise<BlockRecord[]> {
  const out: BlockRecord[] = [];
  for (let from = 0;;) {
    const { blocks, height } = await store.blocks(from, 100);
    out.push(...blocks);
    from += blocks.length;
    if (from > height || blocks.length === 0) return out;
  }
}

/** The log of `chain` (signed by `seed` under `origin`): its checkpoint and proofs, as served. */
function logOf(chain: readonly BlockRecord[], seed: Uint8Array, origin: string) {
  const tree = createAppendOnlyTree();
  for (const block of chain) tree.append(logLeafHash(block.hash));
  const lines = (hashes: Uint8Array[]) => hashes.map((h) => bytesToBase64(h) + "\n").join("");
  return (path: string): Response | null => {
    if (path.endsWith("/log/checkpoint")) {
      return text(signCheckpoint({ origin, size: tree.size, root: tree.root(tree.size) }, seed));
    }
    const consistency = path.match(/\/log\/consistency\/(\d+)\/(\d+)$/);
    if (consistency) return text(lines(tree.consistencyProof(+consistency[1], +consistency[2])));
    const inclusion = path.match(/\/log\/inclusion\/(\d+)\/(\d+)$/);
    if (inclusion) return text(lines(tree.inclusionProof(+inclusion[1], +inclusion[2])));
    return null;
  };
}

const kinds = (check: ChainCheck) => check.alerts.map((a) => a.kind);

Deno.test("a first visit costs two requests; a growing log then costs the checkpoint and one proof", async () => {
  const s = await server();
  await growTo(s.store, 3);
  const meter = metered(s.app.request);
  const api = createApiClient({ fetch: meter.fetch });
  const storage = new MapStorage();
  const first = await checkShownChain(api, { storage });
  assert.deepEqual(kinds(first), []);
  assert.deepEqual(meter.paths.toSorted(), ["/api/log/checkpoint", "/api/server-key"]);
  assert.equal(parseLogMemory(storage.getItem(SEEN_LOG_KEY)).size, 3);
  await growTo(s.store, 7);
  meter.reset();
  const second = await checkShownChain(api, { storage });
  assert.deepEqual(kinds(second), []);
  assert.deepEqual(meter.paths, ["/api/log/checkpoint", "/api/log/consistency/3/7"]);
  assert.equal(parseLogMemory(storage.getItem(SEEN_LOG_KEY)).size, 7);
  s.kv.close();
});

Deno.test("from a remembered size of 10 to 10,000: at most 2 requests and 2 KB", async () => {
  const s = await server();
  await growTo(s.store, 10);
  const meter = metered(s.app.request);
  const api = createApiClient({ fetch: meter.fetch });
  const storage = new MapStorage();
  await checkShownChain(api, { storage });
  await growTo(s.store, 10_000);
  meter.reset();
  const check = await checkShownChain(api, { storage });
  assert.deepEqual(kinds(check), []);
  assert.equal(check.log?.checkpoint?.size, 10_000);
  assert.ok(meter.paths.length <= 2, `requests: ${meter.paths.join(", ")}`);
  assert.ok(meter.bytes() <= 2048, `${meter.bytes()} bytes on the wire`);
  console.log(`10 → 10,000: ${meter.paths.length} requests, ${meter.bytes()} bytes`);
  s.kv.close();
});

Deno.test("blocks shown are proven included, once; a block not in the log is an alert", async () => {
  const s = await server();
  await growTo(s.store, 6);
  const meter = metered(s.app.request);
  const api = createApiClient({ fetch: meter.fetch });
  const storage = new MapStorage();
  const chain = await chainOf(s.store);
  const shown = chain.slice(2, 4).map((b) => resign(s.seed, b));
  const first = await checkShownChain(api, { storage, shown });
  assert.deepEqual(kinds(first), []);
  assert.deepEqual(first.log?.memory.proven, [`2:${chain[2].hash}`, `3:${chain[3].hash}`]);
  assert.ok(meter.paths.includes("/api/log/inclusion/2/6"));
  meter.reset();
  await checkShownChain(api, { storage, shown });
  assert.deepEqual(meter.paths, ["/api/log/checkpoint"], "a proven block is not asked for again");

  const other = resign(s.seed, { ...chain[4], hash: "ab".repeat(32) });
  const lie = await checkShownChain(api, { storage, shown: [other] });
  assert.deepEqual(kinds(lie), ["not-extended"]);
  assert.match(lie.alerts[0].text, /Block 4 as shown .* is not in the history the server signed/);
  const beyond = resign(s.seed, { ...chain[5], height: Number.MAX_SAFE_INTEGER });
  meter.reset();
  const far = await checkShownChain(api, { storage, shown: [beyond] });
  assert.deepEqual(far.log?.beyond.map((b) => b.height), [Number.MAX_SAFE_INTEGER]);
  assert.deepEqual(
    meter.paths,
    ["/api/log/checkpoint"],
    "a block above the checkpoint costs nothing",
  );
  s.kv.close();
});

Deno.test("a server that keeps its key and forks is caught with evidence anyone can check", async (t) => {
  const s = await server();
  await growTo(s.store, 5);
  const storage = new MapStorage();
  const honest = createApiClient({ fetch: s.app.request });
  await checkShownChain(honest, { storage });
  const remembered = storage.getItem(SEEN_LOG_KEY);
  const origin = parseCheckpoint(parseNote(parseLogMemory(remembered).note!).text).origin;
  const chain = await chainOf(s.store);
  const forkAt = (from: number, size: number) => {
    const fork: BlockRecord[] = chain.slice(0, from);
    for (let h = from; h < size; h++) {
      const header = {
        height: h,
        timestamp: T0 + h * 1000 + 7,
        merkle_root: bytesToHex(emptyRoot()),
        prev_hash: fork[h - 1].hash,
        size: 0,
      };
      fork.push({ ...header, hash: blockHash(header) });
    }
    return fork;
  };
  for (
    const [name, size, form] of [
      ["the same size with another root", 5, "same-size"],
      ["a larger size whose consistency proof fails", 9, "failed-proof"],
    ] as const
  ) {
    await t.step(name, async () => {
      const api = createApiClient({
        fetch: lying(s.app.request, logOf(forkAt(3, size), s.seed, origin)),
      });
      const check = await checkShownChain(api, { storage });
      assert.ok(check.fork && "checkpoints" in check.fork, "checkpoint fork evidence");
      const verdict = checkLogForkEvidence(JSON.parse(JSON.stringify(check.fork)));
      assert.equal(verdict.ok && verdict.form, form);
      assert.equal(storage.getItem(SEEN_LOG_KEY), remembered, "the memory is kept");
    });
  }
  s.kv.close();
});

Deno.test("a checkpoint that is unsigned, smaller, withheld or far away fails closed", async (t) => {
  const s = await server();
  await growTo(s.store, 4);
  const storage = new MapStorage();
  const honest = createApiClient({ fetch: s.app.request });
  const oldNote = await honest.checkpoint();
  await growTo(s.store, 6);
  await checkShownChain(honest, { storage });
  const remembered = storage.getItem(SEEN_LOG_KEY);
  const note = await honest.checkpoint();
  await growTo(s.store, 8);
  const cases: [string, (path: string) => Response | null, string][] = [
    [
      "a signature byte changed",
      (p) => p.endsWith("/checkpoint") ? text(note.replace(/(— \S+ )(.)/, flip)) : null,
      "unsigned",
    ],
    ["an older checkpoint", (p) => p.endsWith("/checkpoint") ? text(oldNote) : null, "rollback"],
    [
      "the consistency proof refused",
      (p) => p.includes("/consistency/") ? text("", 404) : null,
      "withheld",
    ],
    [
      "a malformed checkpoint",
      (p) => p.endsWith("/checkpoint") ? text("ringvote\n-1\n") : null,
      "inconsistent",
    ],
  ];
  for (const [name, lie, kind] of cases) {
    await t.step(name, async () => {
      const api = createApiClient({ fetch: lying(s.app.request, lie) });
      const check = await checkShownChain(api, { storage });
      assert.deepEqual(kinds(check), [kind]);
      assert.equal(check.fork, null);
      assert.equal(storage.getItem(SEEN_LOG_KEY), remembered, "nothing is remembered");
    });
  }
  await t.step("a proof with no answer by its deadline is unchecked", async () => {
    const stalling = lying(s.app.request, (p) => p.includes("/consistency/") ? null : null);
    const api = createApiClient({
      fetch: (url, init) =>
        url.includes("/consistency/") ? new Promise<Response>(() => {}) : stalling(url, init),
      timeoutMs: 100,
    });
    const check = await checkShownChain(api, { storage });
    assert.deepEqual(kinds(check), ["unchecked"]);
    assert.match(check.alerts[0].text, /no answer within 100 ms/);
  });
  await t.step(
    "a checkpoint at size 2^53 - 1 signed by the real key costs two requests",
    async () => {
      const far = signCheckpoint(
        {
          origin: parseNote(note).text.split("\n")[0],
          size: Number.MAX_SAFE_INTEGER,
          root: emptyRoot(),
        },
        s.seed,
      );
      const meter = metered(
        lying(
          s.app.request,
          (p) =>
            p.endsWith("/checkpoint")
              ? text(far)
              : p.includes("/consistency/")
              ? text(`${bytesToBase64(new Uint8Array(32))}\n`)
              : null,
        ),
      );
      const heapBefore = Deno.memoryUsage().heapUsed;
      const check = await checkShownChain(createApiClient({ fetch: meter.fetch }), { storage });
      assert.ok(
        Deno.memoryUsage().heapUsed - heapBefore < 16 * 1024 * 1024,
        "the heap stays small",
      );
      assert.equal(meter.paths.length, 2, meter.paths.join(", "));
      assert.ok(check.fork !== null, "a proof the far checkpoint cannot back is fork evidence");
      assert.equal(storage.getItem(SEEN_LOG_KEY), remembered);
    },
  );
  await t.step("the honest server again: accepted", async () => {
    assert.deepEqual(kinds(await checkShownChain(honest, { storage })), []);
    assert.equal(parseLogMemory(storage.getItem(SEEN_LOG_KEY)).size, 8);
    assert.ok(storage.getItem(SEEN_HEADS_KEY) !== null);
  });
  s.kv.close();
});

function flip(_: string, prefix: string, c: string) {
  return prefix + (c === "A" ? "B" : "A");
}

Deno.test("under a policy, a checkpoint is witnessed only with the quorum's fresh cosignatures", async (t) => {
  const s = await server();
  await growTo(s.store, 3);
  const api = createApiClient({ fetch: s.app.request });
  const witnesses = [1, 2].map((i) => ({
    name: `witness.example/${i}`,
    seed: new Uint8Array(32).fill(i),
  }));
  const vkeys = witnesses.map((w) => formatVerifierKey(signerKey(w, COSIGNATURE_V1_TYPE)));
  const policyOf = (fragment: string): WitnessPolicy => {
    const read = policyFromFragment(fragment);
    assert.equal(read.kind, "policy");
    return (read as { policy: WitnessPolicy }).policy;
  };
  const both = policyOf(
    `#witness=${encodeURIComponent(vkeys[0])}&witness=${encodeURIComponent(vkeys[1])}&quorum=1`,
  );
  const all = policyOf(
    `#witness=${encodeURIComponent(vkeys[0])}&witness=${encodeURIComponent(vkeys[1])}`,
  );
  const cosign = async (i: number, at: number) => {
    const note = await api.checkpoint();
    const textOf = parseNote(note).text;
    const line = signCosignature(textOf, witnesses[i], Math.floor(at / 1000));
    const cosignature = formatNote({ text: textOf, signatures: [line] }).slice(
      textOf.length + 1,
      -1,
    );
    await api.submitCosignature({ vkey: vkeys[i], size: 3, cosignature });
  };
  const boundMs = unwitnessedBoundMs(5_000);
  const now = Date.now();
  await t.step("no cosignature yet: waiting, then unwitnessed past the bound", async () => {
    const storage = new MapStorage();
    const first = await checkShownChain(api, { storage, policy: both, boundMs, now });
    assert.equal(first.log?.witness?.status, "waiting");
    const later = await checkShownChain(api, {
      storage,
      policy: both,
      boundMs,
      now: now + boundMs + 1,
    });
    assert.equal(later.log?.witness?.status, "unwitnessed");
    assert.deepEqual(kinds(later), ["unwitnessed"]);
  });
  await t.step("one cosignature meets a quorum of 1, not a quorum of 2", async () => {
    await cosign(0, now);
    const storage = new MapStorage();
    const one = await checkShownChain(api, { storage, policy: both, boundMs, now });
    assert.deepEqual(one.log?.witness, {
      status: "witnessed",
      size: 3,
      cosigners: ["witness.example/1"],
      quorum: 1,
    });
    const two = await checkShownChain(api, {
      storage: new MapStorage(),
      policy: all,
      boundMs,
      now,
    });
    assert.equal(two.log?.witness?.status, "waiting");
  });
  await t.step("a stale cosignature does not count", async () => {
    const check = await checkShownChain(api, {
      storage: new MapStorage(),
      policy: both,
      boundMs,
      now: now + 11 * 60_000,
    });
    assert.equal(check.log?.witness?.status, "waiting");
  });
  await t.step(
    "the witnessed size stays while a new checkpoint waits for its cosignature",
    async () => {
      const storage = new MapStorage();
      await checkShownChain(api, { storage, policy: both, boundMs, now });
      await growTo(s.store, 5);
      const check = await checkShownChain(api, { storage, policy: both, boundMs, now: now + 1000 });
      assert.deepEqual([check.log?.witness?.status, check.log?.witness?.size], ["waiting", 3]);
    },
  );
  s.kv.close();
});

Deno.test("every block of the tree shown costs no proof; a partial view is proven 24 at a time", async () => {
  const s = await server();
  await growTo(s.store, 40);
  const chain = (await chainOf(s.store)).map((b) => resign(s.seed, b));
  const meter = metered(s.app.request);
  const api = createApiClient({ fetch: meter.fetch });
  const whole = await checkShownChain(api, { storage: new MapStorage(), shown: chain });
  assert.deepEqual(kinds(whole), []);
  assert.equal(whole.log?.memory.proven.length, 40, "all proven from the root recomputed here");
  assert.deepEqual(meter.paths.toSorted(), ["/api/log/checkpoint", "/api/server-key"]);

  meter.reset();
  const storage = new MapStorage();
  const part = await checkShownChain(api, { storage, shown: chain.slice(5, 35) });
  const inclusions = meter.paths.filter((p) => p.startsWith("/api/log/inclusion/"));
  assert.equal(inclusions.length, 24);
  assert.equal(part.log?.later.length, 6, "the rest wait for the next check, uncounted");
  assert.deepEqual(part.log?.beyond, []);
  const waiting = new Set(part.log!.later.map((b) => b.height));
  const next = await checkShownChain(api, {
    storage,
    shown: chain.filter((b) => waiting.has(b.height)),
  });
  assert.deepEqual(kinds(next), []);
  assert.equal(next.log?.memory.proven.length, 30);

  const wrong = chain.map((b, i) => i === 7 ? { ...b, hash: "cd".repeat(32) } : b);
  const lie = await checkShownChain(api, {
    storage: new MapStorage(),
    shown: wrong.map((b) => resign(s.seed, b)),
  });
  assert.ok(kinds(lie).includes("not-extended"), "a wrong block among all is still caught");
  s.kv.close();
});

Deno.test("a log that grows ahead of its witness: the witnesses' newest cosigned checkpoint counts", async (t) => {
  const s = await server();
  await growTo(s.store, 3);
  const api = createApiClient({ fetch: s.app.request });
  const { options, cosign } = policyWitness(api);
  const t0 = Date.now();
  const storage = new MapStorage();
  await cosign(t0);
  await t.step("cosigned: witnessed", async () => {
    const check = await checkShownChain(api, { storage, ...options, now: t0 });
    assert.deepEqual([check.log?.witness?.status, check.log?.witness?.size], ["witnessed", 3]);
  });
  await t.step("the log grew: waiting, the witnessed size read from /log/cosigned", async () => {
    await growTo(s.store, 5);
    const check = await checkShownChain(api, { storage, ...options, now: t0 + 1_000 });
    assert.deepEqual([check.log?.witness?.status, check.log?.witness?.size], ["waiting", 3]);
  });
  await t.step(
    "the witness caught up with 5 while the log reached 6: still only waiting",
    async () => {
      await cosign(t0 + 15_000);
      await growTo(s.store, 6);
      const check = await checkShownChain(api, { storage, ...options, now: t0 + 25_000 });
      assert.deepEqual([check.log?.witness?.status, check.log?.witness?.size], ["waiting", 5]);
      assert.deepEqual(kinds(check), [], "size 5 waited 24 s, past the bound, but is witnessed");
    },
  );
  await t.step("size 6 uncosigned past the bound: unwitnessed", async () => {
    const check = await checkShownChain(api, { storage, ...options, now: t0 + 46_000 });
    assert.deepEqual(kinds(check), ["unwitnessed"]);
  });
  await t.step(
    "a cosigned checkpoint that contradicts the page's view is fork evidence",
    async () => {
      const origin = parseNote(await api.checkpoint()).text.split("\n")[0];
      const other = signCheckpoint({ origin, size: 6, root: new Uint8Array(32).fill(7) }, s.seed);
      const liar = createApiClient({
        fetch: lying(s.app.request, (p) => p.endsWith("/log/cosigned") ? text(other) : null),
      });
      const check = await checkShownChain(liar, { storage, ...options, now: t0 + 47_000 });
      assert.ok(check.fork && "checkpoints" in check.fork, "checkpoint fork evidence");
    },
  );
  s.kv.close();
});

Deno.test("a proof read that fails for now is unchecked, not withheld; a new policy counts afresh", async (t) => {
  const s = await server();
  await growTo(s.store, 3);
  const api = createApiClient({ fetch: s.app.request });
  const storage = new MapStorage();
  await checkShownChain(api, { storage });
  await growTo(s.store, 4);
  await t.step("503 or no answer on the consistency proof: unchecked", async () => {
    for (const answer of [() => text("busy", 503), () => Promise.reject(new TypeError("reset"))]) {
      const flaky = createApiClient({
        fetch: (url, init) => url.includes("/consistency/") ? answer() : s.app.request(url, init),
      });
      assert.deepEqual(kinds(await checkShownChain(flaky, { storage })), ["unchecked"]);
    }
  });
  await t.step("a cosignature under one policy is not counted under another", async () => {
    const [a, b] = [1, 2].map((i) => ({
      name: `w${i}.example/p`,
      seed: new Uint8Array(32).fill(i),
    }));
    const [va, vb] = [a, b].map((w) => formatVerifierKey(signerKey(w, COSIGNATURE_V1_TYPE)));
    const textOf = parseNote(await api.checkpoint()).text;
    const line = signCosignature(textOf, a, Math.floor(Date.now() / 1000));
    const cosignature = formatNote({ text: textOf, signatures: [line] }).slice(
      textOf.length + 1,
      -1,
    );
    await api.submitCosignature({ vkey: va, size: 4, cosignature });
    const policyOf = (vkey: string) =>
      (policyFromFragment(`#witness=${encodeURIComponent(vkey)}`) as { policy: WitnessPolicy })
        .policy;
    const underA = await checkShownChain(api, { storage, policy: policyOf(va), boundMs: 20_000 });
    assert.equal(underA.log?.witness?.status, "witnessed");
    const underB = await checkShownChain(api, { storage, policy: policyOf(vb), boundMs: 20_000 });
    assert.deepEqual([underB.log?.witness?.status, underB.log?.witness?.size], ["waiting", 0]);
  });
  s.kv.close();
});
