// The reads a hall of phones shares (protocol §4.9): a group read by index at one length for
// every group of 8 to 64, the state read served from one cache with bounded KV round trips, and a
// sealed block's ballots per group at one length; none takes a per-phone parameter.
import assert from "node:assert/strict";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { call, makeVoters, type TestVoter } from "../../helpers/ledger_fixtures.ts";
import { BLOCK_GROUPS_BYTES, GROUP_READ_BYTES } from "../../../lib/protocol/hall.ts";
import { BlockGroups, RoundGroupRead, RoundState } from "../../../lib/protocol/hall_schemas.ts";
import { sealNextBlock } from "../../../server/sealer.ts";

const presenter = {
  authorization: `Bearer ${PRESENTER_TOKEN}`,
  "content-type": "application/json",
};

/** `kv` with `onTrip` called before each data-path call: reads, lists and commits, one trip each. */
function watchedKv(kv: Deno.Kv, onTrip: () => void): Deno.Kv {
  return new Proxy(kv, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (typeof value !== "function") return value;
      if (name === "get" || name === "getMany" || name === "list") {
        return (...args: unknown[]) => {
          onTrip();
          return value.apply(target, args);
        };
      }
      if (name === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => {
            onTrip();
            return commit();
          };
          return op;
        };
      }
      return value.bind(target);
    },
  });
}

/** `kv` with its data-path calls counted. */
function countedKv(kv: Deno.Kv): { kv: Deno.Kv; trips: () => number } {
  let trips = 0;
  return { kv: watchedKv(kv, () => trips++), trips: () => trips };
}

/** A round of `voters` opened after `atOpen` of them registered, the rest registered after. */
async function hall(
  app: { request: (p: string, i?: RequestInit) => Response | Promise<Response> },
  {
    voters,
    atOpen,
    lateJoiners,
  }: { voters: TestVoter[]; atOpen: number | null; lateJoiners: boolean },
) {
  const started = await app.request("/api/rounds", {
    method: "POST",
    headers: presenter,
    body: JSON.stringify({ question: "Q?", choices: ["A", "B"], lateJoiners }),
  });
  assert.equal(started.status, 201);
  const { id } = await started.json();
  const open = async () => {
    const opened = await app.request(`/api/rounds/${id}/voting`, {
      method: "POST",
      headers: presenter,
    });
    assert.equal(opened.status, 200);
  };
  for (const [i, v] of voters.entries()) {
    if (i === atOpen) await open();
    const registered = await call(app, "POST", `/api/rounds/${id}/pki/key`, { key: v.key });
    assert.equal(registered.status, 201);
  }
  if (atOpen === voters.length) await open();
  return id as number;
}

Deno.test("every group read has one length, groups of 8 to 64, keys in id order", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { app } = await fullApp(kv, { currentTtlMs: 0 });
    const lengths = new Set<number>();
    // 64 at the opening and a late group of 8; then 100 at the opening: two groups of 50.
    for (const { count, atOpen } of [{ count: 72, atOpen: 64 }, { count: 100, atOpen: 100 }]) {
      const voters = makeVoters(count);
      const id = await hall(app, { voters, atOpen, lateJoiners: true });
      const groups = (await call(app, "GET", `/api/rounds/${id}/groups`)).body.groups as number[][];
      assert.ok(groups.length >= 2);
      for (const [g, ids] of groups.entries()) {
        const res = await app.request(`/api/rounds/${id}/groups/${g}`);
        assert.equal(res.status, 200);
        const text = await res.text();
        lengths.add(new TextEncoder().encode(text).length);
        const read = RoundGroupRead.parse(JSON.parse(text));
        assert.equal(read.group, g);
        assert.deepEqual(read.ids, ids);
        assert.deepEqual(read.keys, ids.map((i) => voters[i - 1].key));
      }
    }
    assert.deepEqual([...lengths], [GROUP_READ_BYTES]);
  } finally {
    kv.close();
  }
});

Deno.test("a group read is refused before the opening, past the groups, by key, and with a query", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { app } = await fullApp(kv, { currentTtlMs: 0 });
    const voters = makeVoters(8);
    const id = await hall(app, { voters, atOpen: null, lateJoiners: false });
    const early = await call(app, "GET", `/api/rounds/${id}/groups/0`);
    assert.equal(early.status, 409);
    assert.equal(early.body.error.code, "voting_not_open");
    await app.request(`/api/rounds/${id}/voting`, { method: "POST", headers: presenter });
    for (const g of ["1", "01", "-1", "x", voters[0].key]) {
      const res = await call(app, "GET", `/api/rounds/${id}/groups/${g}`);
      assert.equal(res.status, 404, g);
      assert.equal(res.body.error.code, "unknown_group");
    }
    const asked = await call(app, "GET", `/api/rounds/${id}/groups/0?key=1`);
    assert.equal(asked.status, 400);
    assert.equal((await call(app, "GET", `/api/rounds/${id}/state?id=3`)).status, 400);
    assert.equal((await call(app, "GET", "/api/rounds/1/groups/0")).status, 404);
    assert.equal((await call(app, "GET", "/api/rounds/1/state")).status, 404);
  } finally {
    kv.close();
  }
});

Deno.test("the state read is one answer for every phone, its KV round trips bounded", async () => {
  const raw = await Deno.openKv(":memory:");
  try {
    const { kv, trips } = countedKv(raw);
    // The default second-long memory.
    const { app } = await fullApp(kv);
    const voters = makeVoters(16);
    const id = await hall(app, { voters, atOpen: 16, lateJoiners: false });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const before = trips();
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => app.request(`/api/rounds/${id}/state`)),
    );
    const used = trips() - before;
    const bodies = await Promise.all(answers.map((res) => res.text()));
    assert.ok(answers.every((res) => res.status === 200));
    // One refresh serves all 200: the whole state, in at most this many round trips.
    assert.ok(used <= 16, `200 state reads took ${used} KV round trips`);
    const state = RoundState.parse(JSON.parse(bodies[0]));
    assert.equal(new Set(bodies.map((b) => JSON.parse(b).checkpoint)).size, 1);
    assert.equal(state.phase, "voting");
    assert.equal(state.keysAtOpen, 16);
    assert.equal(state.total, 16);
    assert.deepEqual(state.groups, [voters.map((_, i) => i + 1)]);
    assert.equal(state.sendWindowMs, 30_000);
    assert.ok(state.checkpoint.length > 0);
  } finally {
    raw.close();
  }
});

Deno.test("a sealed block's ballots per group: one small read of one length", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { app, rounds } = await fullApp(kv, { currentTtlMs: 0 });
    const voters = makeVoters(100);
    const id = await hall(app, { voters, atOpen: 100, lateJoiners: false });
    const groups = (await call(app, "GET", `/api/rounds/${id}/groups`)).body.groups as number[][];
    const store = await rounds.storeOf(id);
    // Three ballots over group 1 and one over group 0, stored as verified.
    for (const g of [1, 1, 0, 1]) {
      const publicKeys = groups[g].map((i) => voters[i - 1].key);
      const tag = crypto.randomUUID().replaceAll("-", "").padEnd(64, "0");
      await store.submitVote({ payload: "A", signature: "{}", publicKeys }, tag);
    }
    const [sealed] = await sealNextBlock(store, Date.now());
    const res = await app.request(`/api/rounds/${id}/block/id/${sealed.height}/groups`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.equal(new TextEncoder().encode(text).length, BLOCK_GROUPS_BYTES);
    assert.deepEqual(BlockGroups.parse(JSON.parse(text)).counts, [1, 3]);
    const open = await call(app, "GET", `/api/rounds/${id}/block/id/${sealed.height + 1}/groups`);
    assert.equal(open.status, 404);
  } finally {
    kv.close();
  }
});

Deno.test("a hall read whose parts cannot be read answers 503 busy, and is read again after", async () => {
  const raw = await Deno.openKv(":memory:");
  try {
    let failing = false;
    const kv = watchedKv(raw, () => {
      if (failing) throw new Error("the database is down");
    });
    const { app } = await fullApp(kv, { currentTtlMs: 60_000 });
    const voters = makeVoters(8);
    const id = await hall(app, { voters, atOpen: 8, lateJoiners: false });
    assert.equal((await app.request(`/api/rounds/${id}/groups`)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    failing = true;
    for (const read of ["state", "groups/0", "block/id/1/groups"]) {
      const down = await call(app, "GET", `/api/rounds/${id}/${read}`);
      assert.equal(down.status, 503, read);
      assert.equal(down.body.error.code, "busy", read);
    }
    failing = false;
    // Nothing of the failed read is kept: the next read is whole.
    const up = await app.request(`/api/rounds/${id}/state`);
    assert.equal(up.status, 200);
    assert.equal(RoundState.parse(await up.json()).keysAtOpen, 8);
  } finally {
    raw.close();
  }
});
