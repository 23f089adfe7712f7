/**
 * The pages' watch of the log (islands/hooks/watch_heads.ts) against a server that stalls: a check with
 * no answer raises `unchecked` by its deadline, at once, and the next tick checks afresh instead of
 * waiting behind it; the stalled check's late answer stores, raises and clears nothing.
 * @module
 */
import assert from "node:assert/strict";
import type { ApiClient } from "../../../lib/client/api_client.ts";
import type { HeadAlert } from "../../../lib/client/log/head_alerts.ts";
import { parseLogMemory, SEEN_LOG_KEY } from "../../../lib/client/log/log_memory.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { watchHeads } from "../../../islands/hooks/watch_heads.ts";
import { inMemoryApp } from "../../helpers/in_memory_app.ts";
import { call, makeVoters, signedVote } from "../../helpers/ledger_fixtures.ts";
import { MapStorage } from "../../helpers/map_storage.ts";

const EVERY_MS = 50;
const DEADLINE_MS = 300;

/** A promise that never settles: a request the server never answers. */
const never = <T>() => new Promise<T>(() => {});

/** A promise settled by hand: a request answered when the test says. */
function held<T>() {
  let release!: (value: T | Promise<T>) => void;
  const promise = new Promise<T>((resolve) => release = resolve);
  return { promise, release };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits up to `ms` for `ok`, polling; fails with `what` when it never holds. */
async function until(ok: () => boolean, what: string, ms = 3_000): Promise<number> {
  const started = performance.now();
  while (!ok()) {
    if (performance.now() - started > ms) throw new Error(`after ${ms} ms: ${what}`);
    await sleep(10);
  }
  return performance.now() - started;
}

/** The real app over in-memory KV with `blocks` sealed blocks, and a way to seal one more. */
async function ledger(blocks: number) {
  const { kv, store, app, api } = await inMemoryApp();
  const voters = makeVoters(12);
  for (const v of voters) await store.registerKey(v.key);
  let sealed = 0;
  const seal = async () => {
    const vote = signedVote(voters[sealed], [voters[sealed], voters[11]], `V${sealed}`);
    await call(app, "POST", "/api/vote", vote);
    await sealNextBlock(store, Date.now() + sealed);
    sealed++;
  };
  for (let i = 0; i < blocks; i++) await seal();
  return { kv, app, api, seal };
}

/** Runs a watch over `api` and records what it reports; `stop` ends it. */
function watch(api: ApiClient, storage: MapStorage) {
  const reported: HeadAlert[][] = [];
  const errors: string[] = [];
  const stop = watchHeads(api, {
    storage,
    everyMs: EVERY_MS,
    deadlineMs: DEADLINE_MS,
    onFork: () => {},
    onAlerts: (alerts) => reported.push(alerts),
    onError: (message) => errors.push(message),
  });
  const kinds = () => (reported.at(-1) ?? []).map((a) => a.kind);
  const ever = (kind: HeadAlert["kind"]) => reported.some((r) => r.some((a) => a.kind === kind));
  return { stop, reported, errors, kinds, ever };
}

/** A page's storage that also keeps every value written, in order. */
class RecordingStorage extends MapStorage {
  readonly writes: string[] = [];
  override setItem(key: string, value: string): void {
    if (key === SEEN_LOG_KEY) this.writes.push(value);
    super.setItem(key, value);
  }
}

/** The height of the last block of the checkpoint `storage` accepted (protocol §4.5). */
const top = (storage: MapStorage) => parseLogMemory(storage.getItem(SEEN_LOG_KEY)).size - 1;

Deno.test("a server key that never comes raises unchecked by the deadline, and the next tick checks afresh", async () => {
  const { kv, api: honest } = await ledger(0);
  let keyCalls = 0;
  const api: ApiClient = {
    ...honest,
    serverKey: () => {
      keyCalls++;
      return never();
    },
  };
  const w = watch(api, new MapStorage());
  const started = performance.now();
  try {
    // The check asks for the key once it has read the sealing bound: a loaded machine may take a
    // while to get there. From then, ticks come every EVERY_MS until the deadline.
    await until(() => keyCalls >= 1, "the first check never asked for the server key");
    await sleep(Math.min(DEADLINE_MS / 2, started + DEADLINE_MS - EVERY_MS - performance.now()));
    assert.equal(keyCalls, 1, "the ticks during the check wait for it");
    assert.equal(w.reported.length, 0, "nothing is raised before the deadline");
    await until(() => w.ever("unchecked"), "unchecked never raised");
    const waited = performance.now() - started;
    assert.ok(waited < DEADLINE_MS + 300, `raised at once at the deadline (${waited} ms)`);
    assert.match(w.reported.at(-1)![0].text, /the check did not finish in 0\.3 s/);
    await until(() => keyCalls >= 3, "no later tick started a check");
    assert.deepEqual(w.kinds(), ["unchecked"], "unchecked stays while the server stalls");
  } finally {
    w.stop();
    kv.close();
  }
});

Deno.test("a consistency proof that never comes raises unchecked by the deadline; an answer again clears it", async () => {
  const l = await ledger(2);
  const storage = new MapStorage();
  let stalled = true;
  let blockCalls = 0;
  const api: ApiClient = {
    ...l.api,
    consistencyProof: (oldSize, newSize) => {
      blockCalls++;
      return stalled ? never() : l.api.consistencyProof(oldSize, newSize);
    },
  };
  // Accept the log at height 2, then seal a block: the next checkpoint needs a proof.
  const first = watch(l.api, storage);
  await until(() => top(storage) === 2, "the honest head was never remembered");
  first.stop();
  await l.seal();
  const w = watch(api, storage);
  try {
    await until(() => w.kinds().includes("unchecked"), "unchecked never raised");
    const calls = blockCalls;
    await until(() => blockCalls > calls, "no later tick asked for the proof again");
    assert.ok(w.kinds().includes("unchecked"), "unchecked stays while the server stalls");
    assert.equal(top(storage), 2, "nothing is accepted while the proof is unchecked");
    stalled = false;
    await until(() => !w.kinds().includes("unchecked"), "unchecked never cleared", 2_000);
    await until(() => top(storage) === 3, "the new head was never remembered");
    assert.deepEqual(w.kinds(), []);
  } finally {
    w.stop();
    l.kv.close();
  }
});

Deno.test("a stalled check's late answer neither overwrites newer memory nor clears unchecked", async (t) => {
  const l = await ledger(2);
  const storage = new RecordingStorage();
  const first = watch(l.api, storage);
  await until(() => top(storage) === 2, "the honest head was never remembered");
  first.stop();
  await l.seal();

  await t.step("newer memory stays when the stalled check ends", async () => {
    // The first proof read stalls; the ones after it are answered.
    const stuck = held<Awaited<ReturnType<ApiClient["consistencyProof"]>>>();
    let proofCalls = 0;
    const api: ApiClient = {
      ...l.api,
      consistencyProof: (oldSize, newSize) =>
        ++proofCalls === 1 ? stuck.promise : l.api.consistencyProof(oldSize, newSize),
    };
    const w = watch(api, storage);
    try {
      // The fresh check after the deadline succeeds at once and clears it again.
      await until(() => w.ever("unchecked"), "unchecked never raised");
      await until(() => top(storage) === 3, "a fresh check never remembered the new head");
      await l.seal();
      await until(() => top(storage) === 4, "a fresh check never remembered the newer head");
      await until(() => !w.kinds().includes("unchecked"), "a fresh check never cleared unchecked");
      const writes = storage.writes.length;
      stuck.release(l.api.consistencyProof(3, 4));
      await sleep(100);
      // Each later tick would heal an overwrite: every write since the release is looked at.
      const sizes = storage.writes.slice(writes).map((value) => parseLogMemory(value).size);
      assert.ok(sizes.every((size) => size === 5), "the stalled check stored nothing older");
      assert.deepEqual(w.kinds(), []);
    } finally {
      w.stop();
    }
  });

  await t.step("a late success does not clear the unchecked of the checks after it", async () => {
    // The first checkpoint read stalls; every later one fails: only the stalled one would succeed.
    const stuck = held<Awaited<ReturnType<ApiClient["checkpoint"]>>>();
    let keyCalls = 0;
    const api: ApiClient = {
      ...l.api,
      checkpoint: () =>
        ++keyCalls === 1 ? stuck.promise : Promise.reject(new Error("connection reset")),
    };
    const w = watch(api, storage);
    try {
      await until(() => w.ever("unchecked"), "unchecked never raised");
      await until(() => keyCalls >= 3, "no later tick started a check");
      const reports = w.reported.length;
      stuck.release(l.api.checkpoint());
      await sleep(100);
      // Each later tick would raise it again: every report since the release is looked at.
      const since = w.reported.slice(reports);
      assert.ok(since.every((r) => r.some((a) => a.kind === "unchecked")), "nothing cleared it");
      assert.ok(w.kinds().includes("unchecked"));
      assert.match(w.errors.at(-1)!, /connection reset/);
    } finally {
      w.stop();
    }
  });
  l.kv.close();
});
