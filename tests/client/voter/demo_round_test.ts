/**
 * The voting page's demo round (lib/client/voter/demo_round.ts): the order of its steps and pauses
 * over recording panels, a whole round over the panel's own actions against the real application,
 * and how it stops.
 * @module
 */
import assert from "node:assert/strict";
import {
  DEMO_CHOICES,
  type DemoPanel,
  type DemoProgress,
  type DemoRoundIO,
  demoStatusText,
  demoTone,
  runDemoRound,
} from "../../../lib/client/voter/demo_round.ts";
import * as actions from "../../../lib/client/voter/panel_actions.ts";
import { storageKey, VOTER_ENTRIES } from "../../../lib/client/voter/voters.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { inMemoryApp } from "../../helpers/in_memory_app.ts";
import { MapStorage } from "../../helpers/map_storage.ts";

/** A round over panels that record every call, in one log with the pauses and the reports. */
function recordingRound(
  { registered = 0, fail }: { registered?: number; fail?: (call: string) => string | null } = {},
) {
  const log: string[] = [];
  const reports: DemoProgress[] = [];
  const panels = new Map<string, DemoPanel>();
  const outcome = (call: string) => {
    log.push(call);
    const reason = fail?.(call) ?? null;
    return reason === null ? { ok: true as const } : { ok: false as const, reason };
  };
  let added = 0;
  const io: DemoRoundIO = {
    addVoter() {
      const namespace = `Voter Number ${++added}`;
      log.push(`add ${namespace}`);
      panels.set(namespace, {
        generateKeys: () => outcome(`generate ${namespace}`),
        registerKey: () => Promise.resolve(outcome(`register ${namespace}`)),
        submitVote: (content) => Promise.resolve(outcome(`vote ${namespace} ${content}`)),
      });
      return Promise.resolve(namespace);
    },
    panelOf: (namespace) => Promise.resolve(panels.get(namespace)!),
    registeredKeys: () => Promise.resolve(registered),
    sleep(ms) {
      log.push(`sleep ${ms}`);
      return Promise.resolve();
    },
    report(progress) {
      reports.push(progress);
      log.push(`report ${demoStatusText(progress)}`);
    },
  };
  return { io, log, reports };
}

Deno.test("a demo round: all voters registered first, then each votes, a pause after every step", async () => {
  const { io, log } = recordingRound();
  // Choices drawn in turn: Yes, No, Abstain, Yes, …
  let draws = 0;
  const end = await runDemoRound(io, {
    ringSize: 3,
    voters: 3,
    pauseMs: 400,
    randomIndex: (n) => draws++ % n,
  });
  assert.deepEqual(end, { kind: "done", of: 3 });
  const voter = (i: number) => `Voter ${i} of 3 (Voter Number ${i})`;
  const joining = [1, 2, 3].flatMap((i) => [
    `report Voter ${i} of 3: adding a new voter with a generated name…`,
    `add Voter Number ${i}`,
    "sleep 400",
    `report ${voter(i)}: generating its keys…`,
    `generate Voter Number ${i}`,
    "sleep 400",
    `report ${voter(i)}: registering its key…`,
    `register Voter Number ${i}`,
    "sleep 400",
  ]);
  const voting = [1, 2, 3].flatMap((i) => [
    `report ${voter(i)}: signing and submitting its vote "${DEMO_CHOICES[i - 1]}"…`,
    `vote Voter Number ${i} ${DEMO_CHOICES[i - 1]}`,
    "sleep 400",
  ]);
  assert.deepEqual(log, [
    ...joining,
    ...voting,
    "report Done: 3 voters registered their keys and voted. Each vote turns green once its " +
    "block is sealed.",
  ]);
});

Deno.test("a demo round that could not fill a ring does not start", async (t) => {
  await t.step("too few keys: nothing added, what is missing said", async () => {
    const { io, log, reports } = recordingRound({ registered: 3 });
    const end = await runDemoRound(io, { ringSize: 12, voters: 8 });
    assert.deepEqual(end, { kind: "too-few-keys", registered: 3, adds: 8, needed: 12 });
    assert.deepEqual(reports, [end]);
    assert.equal(log.length, 1);
    assert.equal(
      demoStatusText(end),
      "Not started: a ring needs 12 registered keys, 3 are registered and the round adds 8. " +
        "Register 1 more key first.",
    );
    assert.equal(demoTone(end), "failed");
  });
  await t.step("exactly enough with the round's own keys: it runs", async () => {
    const { io } = recordingRound({ registered: 4 });
    assert.equal((await runDemoRound(io, { ringSize: 12, voters: 8, pauseMs: 0 })).kind, "done");
  });
  await t.step("an unreadable key directory: not started", async () => {
    const { io } = recordingRound();
    io.registeredKeys = () => Promise.resolve(null);
    const end = await runDemoRound(io, { ringSize: 8 });
    assert.equal(demoStatusText(end), "Not started: the key directory could not be read");
  });
});

Deno.test("the first failing step stops the round, its reason on the status line", async (t) => {
  await t.step("a refused registration", async () => {
    const reason = "POST /api/pki/key answered 409: Key already registered";
    const { io, log } = recordingRound({
      fail: (call) => call === "register Voter Number 2" ? reason : null,
    });
    const end = await runDemoRound(io, { ringSize: 2, voters: 3, pauseMs: 1 });
    assert.deepEqual(end, {
      kind: "failed",
      step: "registering",
      at: { voter: 2, of: 3, namespace: "Voter Number 2" },
      reason,
    });
    assert.equal(log.at(-2), "register Voter Number 2");
    assert.ok(!log.some((line) => line.startsWith("vote ") || line.includes("Number 3")));
    assert.equal(
      demoStatusText(end),
      `Stopped at voter 2 of 3 (Voter Number 2), registering its key: ${reason}`,
    );
    assert.equal(demoTone(end), "failed");
  });
  await t.step("a refused vote", async () => {
    const { io, log } = recordingRound({
      fail: (call) => call.startsWith("vote Voter Number 1 ") ? "Vote refused: no" : null,
    });
    const end = await runDemoRound(io, { ringSize: 2, voters: 2, pauseMs: 1 });
    assert.equal(end.kind, "failed");
    assert.equal(log.filter((line) => line.startsWith("vote ")).length, 1);
  });
  await t.step("a panel that throws, or never appears", async () => {
    const { io } = recordingRound();
    io.panelOf = () => Promise.reject(new Error("The panel of Voter Number 1 did not appear"));
    const end = await runDemoRound(io, { ringSize: 2, voters: 2, pauseMs: 1 });
    assert.equal(
      demoStatusText(end),
      "Stopped at voter 1 of 2, adding a new voter with a generated name: " +
        "The panel of Voter Number 1 did not appear",
    );
  });
});

Deno.test("a demo round over the panel's own actions and the real API: 8 votes, all verified", async () => {
  const { kv, store, api } = await inMemoryApp();
  try {
    const storage = new MapStorage();
    const logs: string[] = [];
    const io: actions.ClientIO = { storage, api, log: (message) => logs.push(message) };
    const ringSize = 8;
    const calls: string[] = [];
    const voters: string[] = [];
    // What VoterPanel hands the round: its buttons' handlers, each one panel action.
    const panelOf = (namespace: string): Promise<DemoPanel> =>
      Promise.resolve({
        generateKeys() {
          calls.push("generateKeys");
          assert.equal(actions.generateKeys(io, namespace).status, "unregistered");
          return { ok: true };
        },
        async registerKey() {
          calls.push("registerKey");
          const line = await actions.registerKey(io, namespace);
          return line.status === "registered" ? { ok: true } : { ok: false, reason: line.text };
        },
        async submitVote(content) {
          calls.push("submitVote");
          const outcome = await actions.submitVote(io, namespace, { content, ringSize });
          return outcome.ok ? { ok: true } : outcome;
        },
      });
    const end = await runDemoRound({
      addVoter() {
        voters.push(`Demo Voter ${voters.length + 1}`);
        return Promise.resolve(voters.at(-1)!);
      },
      panelOf,
      registeredKeys: () => actions.registeredKeyCount(io),
      sleep: () => Promise.resolve(),
      report() {},
    }, { ringSize, pauseMs: 0 });
    assert.deepEqual(end, { kind: "done", of: 8 });
    assert.deepEqual(calls, [
      ...Array(8).fill(["generateKeys", "registerKey"]).flat(),
      ...Array(8).fill("submitVote"),
    ]);
    assert.equal(await actions.registeredKeyCount(io), 8);

    // Every voter holds exactly the entries of page §3, and its vote is pending until sealed.
    for (const namespace of voters) {
      for (const entry of VOTER_ENTRIES) {
        assert.notEqual(storage.getItem(storageKey(namespace, entry)), null, entry);
      }
      assert.ok(DEMO_CHOICES.includes(storage.getItem(storageKey(namespace, "voteContent"))!));
      assert.equal((await actions.loadVoteStatus(io, namespace)).status, "pending");
    }
    assert.equal(storage.items.size, 8 * VOTER_ENTRIES.length);
    await sealNextBlock(store, Date.now());
    for (const namespace of voters) {
      assert.equal((await actions.loadVoteStatus(io, namespace)).status, "voted");
    }
    const tally = await api.tally();
    assert.equal(tally.total, 8);
    assert.deepEqual(logs, []);
  } finally {
    kv.close();
  }
});

Deno.test("in a round with phases the demo runs alone: refused once a key joined", async () => {
  const { io, log, reports } = recordingRound({ registered: 1 });
  const last = await runDemoRound(io, {
    ringSize: 8,
    openVoting: () => Promise.resolve({ ok: true }),
  });
  assert.deepEqual(last, { kind: "not-alone", registered: 1 });
  assert.equal(reports.length, 1);
  assert.equal(log.filter((line) => line.startsWith("add")).length, 0);
  assert.equal(
    demoStatusText(last),
    "Not started: the demo round runs only in a round of its own, before anyone joins, and 1 key " +
      "has joined this round. Start a new round for the demo.",
  );
});

Deno.test("in a round with phases the demo opens voting after its joins, before its votes", async () => {
  const { io, log } = recordingRound();
  const last = await runDemoRound(io, {
    ringSize: 8,
    pauseMs: 0,
    openVoting: () => {
      log.push("open voting");
      return Promise.resolve({ ok: true });
    },
  });
  assert.equal(last.kind, "done");
  const open = log.indexOf("open voting");
  assert.ok(open > log.findLastIndex((line) => line.startsWith("register")));
  assert.ok(open < log.findIndex((line) => line.startsWith("vote")));
  const refused = recordingRound();
  const stopped = await runDemoRound(refused.io, {
    ringSize: 8,
    pauseMs: 0,
    openVoting: () => Promise.resolve({ ok: false, reason: "1 more key must join" }),
  });
  assert.equal(
    demoStatusText(stopped),
    "Stopped: voting could not be opened: 1 more key must join",
  );
  assert.equal(refused.log.filter((line) => line.startsWith("vote")).length, 0);
});
