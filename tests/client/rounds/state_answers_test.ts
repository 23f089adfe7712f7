// A quiet phone's timed reads answered from its state read (page §14.8): the answers are the bytes
// the server's own reads would give, for the round read only, and nothing else is answered.
import assert from "node:assert/strict";
import {
  answeredByState,
  answerFromState,
  groupIndexOf,
  type StateFields,
} from "../../../lib/client/rounds/state_answers.ts";
import { OpenBlock, RoundGroups } from "../../../lib/protocol/schemas.ts";
import {
  roomWindowText,
  sendWindowText,
  windowDiffersText,
} from "../../../lib/client/rounds/window_text.ts";

const STATE: StateFields = {
  round: 2,
  phase: "voting",
  keysAtOpen: 16,
  groups: [[1, 2, 3, 4, 5, 6, 7, 8], [9, 10, 11, 12, 13, 14, 15, 16]],
  pending: [],
  intervalMs: 1000,
  verifyRate: 25,
  sendWindowMs: 30_000,
  open: { height: 3, votes: 2, nextSealAt: 1_700_000_000_000 },
  checkpoint: "example.org/log\n3\nAAAA\n\n— server sig\n",
};

Deno.test("the open block, the checkpoint and the groups are answered as the server says them", () => {
  const open = answerFromState(STATE, "GET", "/api/rounds/2/block/open")!;
  assert.deepEqual(OpenBlock.parse(JSON.parse(open.body)), { ...STATE.open, intervalMs: 1000 });
  const checkpoint = answerFromState(STATE, "GET", "/api/rounds/2/log/checkpoint")!;
  assert.equal(checkpoint.body, STATE.checkpoint);
  assert.match(checkpoint.type, /^text\/plain/);
  const groups = RoundGroups.parse(
    JSON.parse(answerFromState(STATE, "GET", "/api/rounds/2/groups")!.body),
  );
  assert.deepEqual(groups.groups, STATE.groups);
  assert.equal(groups.sendWindowMs, 30_000);
});

Deno.test("another round, another read or a write is not answered", () => {
  assert.equal(answerFromState(STATE, "GET", "/api/rounds/3/block/open"), null);
  assert.equal(answerFromState(STATE, "GET", "/api/rounds/2/block/status"), null);
  assert.equal(answerFromState(STATE, "GET", "/api/rounds/2/state"), null);
  assert.equal(answerFromState(STATE, "GET", "/api/rounds/2/groups/0"), null);
  assert.equal(answerFromState(STATE, "POST", "/api/rounds/2/groups"), null);
  assert.equal(answeredByState("/api/rounds/7/log/checkpoint"), true);
  assert.equal(answeredByState("/api/rounds/7/state"), false);
  assert.equal(answeredByState("/api/log/checkpoint"), false);
});

Deno.test("a key's group index is the group holding it", () => {
  assert.equal(groupIndexOf(STATE.groups, 9), 1);
  assert.equal(groupIndexOf(STATE.groups, 1), 0);
  assert.equal(groupIndexOf(STATE.groups, 17), null);
});

Deno.test("the window lines name W in whole seconds, and the server's when it differs", () => {
  assert.equal(
    sendWindowText(30_000),
    "Votes are sent at a random time within 30 s, from 5 s after voting opened, so the time a " +
      "vote arrives does not point at its phone.",
  );
  assert.equal(
    windowDiffersText(40_000, 30_000),
    "The server says the send window is 30 s; this phone works it out as 40 s from the round's " +
      "figures, and uses its own.",
  );
  assert.equal(
    roomWindowText(44_001),
    "Send window: 45 s. Each phone sends its vote at a random time in it.",
  );
});
