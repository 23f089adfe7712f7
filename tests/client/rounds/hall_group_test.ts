/**
 * A phone's group from the round's state read and one read of its group by index
 * (lib/client/rounds/state_group.ts `readGroupFromState`), through the API client against the real
 * app over in-memory KV; and refused against a lying server: another group's ids, a key swapped
 * for another, its own key missing, groups off the rule.
 * @module
 */
import assert from "node:assert/strict";
import { createApiClient } from "../../../lib/client/api_client.ts";
import { placeInGroups, readGroupFromState } from "../../../lib/client/rounds/state_group.ts";
import { groupFingerprint } from "../../../lib/protocol/groups.ts";
import { hexToBytes } from "../../../lib/protocol/bytes.ts";
import type { RoundGroupRead, RoundState } from "../../../lib/protocol/hall_schemas.ts";
import { fullApp, PRESENTER_TOKEN } from "../../helpers/app_fixture.ts";
import { makeVoters } from "../../helpers/ledger_fixtures.ts";

const rule = { minVoters: 8, lateJoiners: false };

/** A round of `n` keys, voting open; its client, voters, and the fetch behind it. */
async function openRound(kv: Deno.Kv, n: number) {
  const { app } = await fullApp(kv, { currentTtlMs: 0 });
  const fetch = (url: string, init: RequestInit) => app.request(url, init);
  const { id } = await createApiClient({ fetch }).startRound(
    { question: "Lunch?", choices: ["Yes", "No"] },
    PRESENTER_TOKEN,
  );
  const api = createApiClient({ fetch, ledger: { round: id } });
  const voters = makeVoters(n);
  for (const voter of voters) await api.registerKey({ key: voter.key });
  await api.openVoting(PRESENTER_TOKEN);
  return { api, voters };
}

Deno.test("a phone reads the state, then its one group: ids, keys in id order, fingerprint", async () => {
  using kv = await Deno.openKv(":memory:");
  const { api, voters } = await openRound(kv, 100);
  const state = await api.roundState();
  assert.deepEqual(state.groups.map((g) => g.length), [50, 50]);
  const asked: number[] = [];
  const counting = { group: (g: number) => (asked.push(g), api.group(g)) };
  const got = await readGroupFromState(counting, {
    ownId: 77,
    ownKey: voters[76].key,
    rule,
    state,
  });
  assert.deepEqual(asked, [1], "one read, by the group's index");
  assert.equal(got.kind, "group");
  if (got.kind !== "group") return;
  assert.deepEqual(got.ids, state.groups[1]);
  assert.deepEqual(got.keys, voters.slice(50).map((v) => v.key));
  assert.equal(got.fingerprint, groupFingerprint(got.keys.map((k) => hexToBytes(k))));
  assert.equal(got.late, false);
});

Deno.test("a lying group read is refused: other ids, a swapped key, a key twice", async () => {
  using kv = await Deno.openKv(":memory:");
  const { api, voters } = await openRound(kv, 100);
  const state = await api.roundState();
  const lying = (lie: (read: RoundGroupRead) => RoundGroupRead) => ({
    group: async (g: number) => lie(await api.group(g)),
  });
  const cases: [string, (read: RoundGroupRead) => RoundGroupRead][] = [
    ["another group", (r) => ({ ...r, group: 0, ids: state.groups[0] })],
    ["ids shifted", (r) => ({ ...r, ids: r.ids.map((i) => i + 1) })],
    ["own key swapped", (r) => ({ ...r, keys: r.keys.map((k, i) => i === 26 ? r.keys[0] : k) })],
    ["a key dropped", (r) => ({ ...r, keys: r.keys.slice(1) })],
    ["a key twice", (r) => ({ ...r, keys: r.keys.map((k, i) => i === 3 ? r.keys[2] : k) })],
  ];
  for (const [name, lie] of cases) {
    const got = await readGroupFromState(lying(lie), {
      ownId: 77,
      ownKey: voters[76].key,
      rule,
      state,
    });
    assert.equal(got.kind, "refused", name);
  }
});

Deno.test("the state's groups are held to the rule, the directory's size, and the key's own place", () => {
  const base: Pick<RoundState, "phase" | "keysAtOpen" | "groups" | "pending" | "total"> = {
    phase: "voting",
    keysAtOpen: 100,
    groups: [
      Array.from({ length: 50 }, (_, i) => i + 1),
      Array.from({ length: 50 }, (_, i) => i + 51),
    ],
    pending: [],
    total: 100,
  };
  assert.deepEqual(placeInGroups(base, { ownId: 51, rule }), {
    kind: "member",
    group: 1,
    ids: base.groups[1],
    late: false,
  });
  assert.equal(placeInGroups({ ...base, phase: "join" }, { ownId: 1, rule }).kind, "join");
  // One group of 100: over the verifier's ring limit, not the rule's cut.
  const one = { ...base, groups: [Array.from({ length: 100 }, (_, i) => i + 1)] };
  assert.equal(placeInGroups(one, { ownId: 1, rule }).kind, "refused");
  // Fewer keys in the directory than the groups list.
  assert.equal(placeInGroups({ ...base, total: 99 }, { ownId: 1, rule }).kind, "refused");
  // Opened with 7 keys: no honest round.
  const seven = { ...base, keysAtOpen: 7, groups: [[1, 2, 3, 4, 5, 6, 7]], total: 7 };
  assert.equal(placeInGroups(seven, { ownId: 1, rule }).kind, "refused");
  // A key after the opening, late joiners off: pending.
  const late = { ...base, pending: [101], total: 101 };
  assert.equal(placeInGroups(late, { ownId: 101, rule }).kind, "pending");
});
