/**
 * A quiet phone's reads (page §14.8): the open block, the checkpoint and the groups answered in the
 * page from its round's latest state read, waiting for the first one; the state read itself and
 * every other call go out; and its relayed requests counted over a reload.
 * @module
 */
import assert from "node:assert/strict";
import { afterHold, quietAnswer, quietHold, quietRoom } from "../../../islands/hooks/quiet_room.ts";
import { earliestStage } from "../../../islands/hooks/round_state.ts";
import { pageBudget, RELAYED_PER_MINUTE } from "../../../islands/hooks/page_budget.ts";
import type { RoundState } from "../../../lib/protocol/hall_schemas.ts";
import { MapStorage } from "../../helpers/map_storage.ts";
import { holdsRegisteredKey } from "../../../islands/hooks/registered_key.ts";

const STATE = {
  round: 2,
  current: 2,
  phase: "voting",
  openedAt: 1_800_000_000_000,
  keysAtOpen: 8,
  groups: [[1, 2, 3, 4, 5, 6, 7, 8]],
  pending: [],
  total: 8,
  intervalMs: 1000,
  verifyRate: 25,
  sendWindowMs: 30_000,
  open: { height: 2, votes: 1, nextSealAt: 1_800_000_001_000 },
  sealed: { height: 1, hash: "ab".repeat(32) },
  tally: { total: 0, results: [] },
  checkpoint: "log\n1\nAAAA\n",
} as unknown as RoundState;

Deno.test("without a quiet round nothing is answered in the page", async () => {
  quietRoom.value = null;
  assert.equal(await quietAnswer("/api/rounds/2/block/open", "GET"), null);
});

Deno.test("a quiet round's timed reads wait for its first state, then are answered from it", async () => {
  quietRoom.value = { round: 2, state: null };
  const pending = quietAnswer("/api/rounds/2/log/checkpoint", "GET");
  // The state read itself never waits for itself.
  assert.equal(await quietAnswer("/api/rounds/2/state", "GET"), null);
  assert.equal(await quietAnswer("/api/rounds/2/block/status", "GET"), null);
  quietRoom.value = { round: 2, state: STATE };
  assert.equal(await (await pending)!.text(), STATE.checkpoint);
  const open = await (await quietAnswer("/api/rounds/2/block/open", "GET"))!.json();
  assert.deepEqual(open, { ...STATE.open, intervalMs: 1000 });
  // Another round's reads go out.
  assert.equal(await quietAnswer("/api/rounds/3/block/open", "GET"), null);
  quietRoom.value = null;
});

Deno.test("a quiet round left before its first state lets the waiting reads go out", async () => {
  quietRoom.value = { round: 2, state: null };
  const pending = quietAnswer("/api/rounds/2/groups", "GET");
  quietRoom.value = null;
  assert.equal(await pending, null);
});

Deno.test("a page with several voters polls at the pace of the one furthest behind", () => {
  assert.equal(earliestStage(["proven", "voting", "sent"]), "voting");
  assert.equal(earliestStage(["proven"]), "proven");
  assert.equal(earliestStage([]), "waiting");
});

Deno.test("the budget of relayed requests holds over a reload of the tab", () => {
  const storage = new MapStorage() as unknown as Storage;
  const now = Date.now();
  const first = pageBudget(storage);
  for (let i = 0; i < RELAYED_PER_MINUTE; i++) first.record(now - 1000 + i);
  assert.ok(first.delayFor(now) > 0);
  const reloaded = pageBudget(storage);
  assert.ok(reloaded.delayFor(now) > 0, "the requests before the reload still count");
  assert.equal(pageBudget(new MapStorage() as unknown as Storage).delayFor(now), 0);
});

Deno.test("between voting opening and the vote leaving, only the state, the group and the vote go", async () => {
  quietHold.value = true;
  let released = false;
  const held = afterHold("/api/rounds/2/server-key").then(() => (released = true));
  for (
    const path of [
      "/api/rounds/2/state",
      "/api/rounds/2/groups/3",
      "/api/rounds/2/vote",
      `/api/rounds/2/tag/${"ab".repeat(32)}`,
      "/api/rounds",
    ]
  ) await afterHold(path);
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(released, false, "the fork watch's read waits");
  quietHold.value = false;
  await held;
  assert.equal(released, true);
});

Deno.test("a key of the round is found in the browser's own storage, whose methods are its prototype's", () => {
  /** Storage as the browser has it: methods on the prototype, none of them own properties. */
  class PrototypeStorage {
    #items = new Map<string, string>();
    getItem(key: string) {
      return this.#items.get(key) ?? null;
    }
    setItem(key: string, value: string) {
      this.#items.set(key, value);
    }
  }
  const storage = new PrototypeStorage();
  assert.equal(holdsRegisteredKey(storage, 2), false);
  storage.setItem("round/2/voters", "Ada");
  storage.setItem("round/2/Ada:keyId", "7");
  assert.equal(holdsRegisteredKey(storage, 2), true);
});
