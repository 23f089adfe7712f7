/**
 * A phone's group (lib/client/rounds/round_group.ts) read through the API client from the real
 * app over in-memory KV: the join phase, the opening group with its keys in id order and its
 * fingerprint, a late key pending with late joiners off and on, a late group once it fills, the
 * entries a phone keeps; and the texts a phone says about them.
 * @module
 */
import assert from "node:assert/strict";
import { createApiClient } from "../../../lib/client/api_client.ts";
import {
  isMarkedLate,
  keepChosen,
  markLate,
  readChosen,
  readGroupState,
} from "../../../lib/client/rounds/round_group.ts";
import {
  groupAnonymity,
  headcountText,
  LATE_OFF_TEXT,
  lateWaitingText,
  roundAnonymityText,
  votedText,
  waitingToOpenText,
} from "../../../lib/client/rounds/round_texts.ts";
import { groupFingerprint } from "../../../lib/protocol/groups.ts";
import { hexToBytes } from "../../../lib/protocol/bytes.ts";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { makeVoters } from "../../helpers/ledger_fixtures.ts";
import { MapStorage } from "../../helpers/map_storage.ts";

/** A round with `lateJoiners` over a fresh app; the client of that round and of the rounds. */
async function roundWith(kv: Deno.Kv, lateJoiners: boolean) {
  // Every read sees the round's phase at once: no cached round state.
  const { app } = await fullApp(kv, { currentTtlMs: 0 });
  const fetch = (url: string, init: RequestInit) => app.request(url, init);
  const { id } = await createApiClient({ fetch }).startRound(
    { question: "Lunch?", choices: ["Yes", "No"], lateJoiners },
    PRESENTER_TOKEN,
  );
  const api = createApiClient({ fetch, ledger: { round: id } });
  const register = async (n: number) => {
    for (const voter of makeVoters(n)) await api.registerKey({ key: voter.key, name: "x" });
  };
  return { api, register, rule: { minVoters: 8, lateJoiners } };
}

Deno.test("the join phase, then the opening group: its keys in id order and its fingerprint", async () => {
  using kv = await Deno.openKv(":memory:");
  const { api, register, rule } = await roundWith(kv, false);
  await register(9);
  assert.deepEqual(await readGroupState(api, { ownId: 3, rule }), { kind: "join" });
  await api.openVoting(PRESENTER_TOKEN);
  const state = await readGroupState(api, { ownId: 3, rule });
  assert.equal(state.kind, "group");
  if (state.kind !== "group") return;
  const directory = (await api.keys(0, 100)).items;
  assert.deepEqual(state.ids, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(state.keys, directory.map((entry) => entry.key));
  assert.equal(state.late, false);
  assert.equal(state.fingerprint, groupFingerprint(state.keys.map((k) => hexToBytes(k, 32))));
  assert.match(state.fingerprint, /^[0-9a-f]{8}$/);
});

Deno.test("a late key: pending for good without late joiners; with them, a group of 8", async () => {
  {
    using kv = await Deno.openKv(":memory:");
    const { api, register, rule } = await roundWith(kv, false);
    await register(8);
    await api.openVoting(PRESENTER_TOKEN);
    await register(8);
    const state = await readGroupState(api, { ownId: 9, rule });
    assert.deepEqual(state, { kind: "pending", missing: 0, minVoters: 8, lateJoiners: false });
  }
  using kv = await Deno.openKv(":memory:");
  const { api, register, rule } = await roundWith(kv, true);
  await register(8);
  await api.openVoting(PRESENTER_TOKEN);
  await register(3);
  assert.deepEqual(await readGroupState(api, { ownId: 10, rule }), {
    kind: "pending",
    missing: 5,
    minVoters: 8,
    lateJoiners: true,
  });
  await register(5);
  const state = await readGroupState(api, { ownId: 10, rule });
  assert.equal(state.kind, "group");
  if (state.kind !== "group") return;
  assert.deepEqual(state.ids, [9, 10, 11, 12, 13, 14, 15, 16]);
  assert.equal(state.late, true);
});

Deno.test("served groups unlike the rule are refused: the rule held is the round's", async () => {
  using kv = await Deno.openKv(":memory:");
  const { api, register } = await roundWith(kv, true);
  await register(8);
  await api.openVoting(PRESENTER_TOKEN);
  await register(8);
  // The server made a late group of 8; a phone holding a rule without late joiners expects none.
  const ownId = 9;
  const honest = await readGroupState(api, { ownId, rule: { minVoters: 8, lateJoiners: true } });
  assert.equal(honest.kind, "group");
  const state = await readGroupState(api, { ownId, rule: { minVoters: 8, lateJoiners: false } });
  assert.equal(state.kind, "refused");
});

Deno.test("a phone keeps its choice and its late mark in the round's storage", () => {
  const storage = new MapStorage();
  assert.equal(readChosen(storage, "Ann"), null);
  keepChosen(storage, "Ann", "Yes");
  assert.equal(readChosen(storage, "Ann"), "Yes");
  keepChosen(storage, "Ann", null);
  assert.equal(readChosen(storage, "Ann"), null);
  markLate(storage, "Ann", true);
  assert.equal(isMarkedLate(storage, "Ann"), true);
  markLate(storage, "Ann", false);
  assert.equal(isMarkedLate(storage, "Ann"), false);
});

Deno.test("the texts of a round with phases, word for word", () => {
  assert.equal(
    waitingToOpenText({ joinDeadline: null, minVoters: 8 }),
    "Voting opens when the presenter starts it.",
  );
  assert.match(
    waitingToOpenText({ joinDeadline: Date.UTC(2026, 0, 1, 12, 0, 0), minVoters: 8 }),
    /^Voting opens when the presenter starts it, or by itself at \d\d:\d\d:\d\d if at least 8 keys have joined by then\.$/,
  );
  assert.equal(LATE_OFF_TEXT, "You joined after voting opened: you can vote in the next round.");
  assert.match(lateWaitingText({ missing: 1, minVoters: 8 }), /waits for 1 more late joiner to/);
  assert.match(lateWaitingText({ missing: 3, minVoters: 8 }), /cheapest to fill with extra keys/);
  assert.equal(
    roundAnonymityText({ n: 17, k: 17, late: false }),
    "Hidden among all 17 keys of this round: effective anonymity 17 of 17",
  );
  assert.equal(
    headcountText(17),
    "17 keys joined. Count the hands: more keys than people means someone made extra keys",
  );
  assert.equal(votedText({ voted: 12, keys: 17 }), "Voting: 12 of 17 voted");
  assert.equal(groupAnonymity({ groupSize: 17, revealedOthers: 2, ownRevealed: false }), 15);
  assert.equal(groupAnonymity({ groupSize: 17, revealedOthers: 2, ownRevealed: true }), 1);
});

/** `api` whose `groups()` answers `lie` instead of what the server holds. */
function lyingGroups<T extends object>(api: T, lie: unknown): T {
  return { ...api, groups: () => Promise.resolve(lie) };
}

Deno.test("a lying server cannot narrow a phone's ring below minVoters keys", async () => {
  using kv = await Deno.openKv(":memory:");
  const { api, register, rule } = await roundWith(kv, true);
  await register(24);
  await api.openVoting(PRESENTER_TOKEN);
  // One phone is told voting opened with 2 keys: its "group" would be itself and one other.
  const narrow = lyingGroups(api, {
    phase: "voting",
    keysAtOpen: 2,
    groups: [[1, 2], [3, 4, 5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15, 16, 17, 18]],
    pending: [19, 20, 21, 22, 23, 24],
  });
  const state = await readGroupState(narrow, { ownId: 2, rule });
  assert.equal(state.kind, "refused");
  // Or told that a late group is one key: the round's rule itself is a lie (minVoters is 8–64).
  const alone = lyingGroups(api, {
    phase: "voting",
    keysAtOpen: 23,
    groups: [Array.from({ length: 23 }, (_, i) => i + 1), [24]],
    pending: [],
  });
  const lone = await readGroupState(alone, {
    ownId: 24,
    rule: { minVoters: 1, lateJoiners: true },
  });
  assert.equal(lone.kind, "refused");
  // The honest answer still gives the whole room.
  const honest = await readGroupState(api, { ownId: 2, rule });
  assert.equal(honest.kind === "group" && honest.ids.length, 24);
});

Deno.test("a round closed before voting opened: its keys are told so, not refused", async () => {
  using kv = await Deno.openKv(":memory:");
  const { api, register, rule } = await roundWith(kv, false);
  await register(8);
  // The presenter starts the next round without opening voting in this one.
  await api.startRound({ question: "Next?", choices: ["Yes", "No"] }, PRESENTER_TOKEN);
  assert.deepEqual(await readGroupState(api, { ownId: 3, rule }), { kind: "closed" });
});
