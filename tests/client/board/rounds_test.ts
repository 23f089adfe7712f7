/**
 * The rounds as the board names and links them (lib/client/board/rounds.ts): the `round`
 * parameter read strictly, each round's question, the list with the shown and current rounds
 * marked, and the board's addresses.
 * @module
 */
import assert from "node:assert/strict";
import {
  boardHref,
  parseRoundParam,
  roundLinks,
  roundQuestion,
  sharedVote,
} from "../../../lib/client/board/rounds.ts";

const round = (id: number, question: string, choices: string[] = []) => ({
  id,
  question,
  choices,
  createdAt: 1_700_000_000_000 + id,
  blockIntervalMs: 5000,
  phase: "voting" as const,
  minVoters: 8,
  lateJoiners: false,
  openedAt: 1_700_000_000_000 + id,
  joinDeadline: null,
  relayed: false,
});
const LIST = {
  current: 3,
  rounds: [round(3, "Lunch?", ["Pizza", "Soup"]), round(1, ""), round(2, "Tea or coffee?")],
};

Deno.test("parseRoundParam takes a round id and nothing else", () => {
  assert.equal(parseRoundParam("1"), 1);
  assert.equal(parseRoundParam("42"), 42);
  for (const value of [null, "", "0", "01", "-1", "1.5", "1e3", " 2", "abc", "9999999999"]) {
    assert.equal(parseRoundParam(value), null, String(value));
  }
});

Deno.test("roundQuestion: the question, or what a round without one takes", () => {
  assert.equal(roundQuestion(round(2, "Tea or coffee?")), "Tea or coffee?");
  assert.equal(roundQuestion(round(1, "")), "Free-text vote");
  assert.equal(roundQuestion(null), "Free-text vote");
});

Deno.test("roundLinks lists every round by id, the shown and the current one marked", () => {
  assert.deepEqual(roundLinks(LIST, 2), [
    { id: 1, href: "/board?round=1", question: "Free-text vote", shown: false, current: false },
    { id: 2, href: "/board?round=2", question: "Tea or coffee?", shown: true, current: false },
    { id: 3, href: "/board?round=3", question: "Lunch?", shown: false, current: true },
  ]);
});

Deno.test("boardHref writes the board's addresses, the vote id escaped", () => {
  assert.equal(boardHref({}), "/board");
  assert.equal(boardHref({ round: 2 }), "/board?round=2");
  assert.equal(boardHref({ vote: "Ab-_9<x" }), "/board#vote=Ab-_9%3Cx");
  assert.equal(boardHref({ round: 2, vote: "v1" }), "/board?round=2#vote=v1");
  assert.equal(boardHref({ view: "room" }), "/board?view=room");
  assert.equal(boardHref({ view: "room", round: 4 }), "/board?view=room&round=4");
  assert.equal(boardHref({ round: 2, vote: "v1" }, { queryOnly: true }), "?round=2#vote=v1");
  assert.equal(boardHref({}, { queryOnly: true }), "");
});

Deno.test("sharedVote reads the vote id of a board address's fragment", () => {
  assert.equal(sharedVote("#vote=Ab-_9%3Cx"), "Ab-_9<x");
  assert.equal(sharedVote(new URL("http://h/board?round=2#vote=v1").hash), "v1");
  assert.equal(sharedVote("#relay=x&vote=v2"), "v2");
  assert.equal(sharedVote("#vote="), null);
  assert.equal(sharedVote("#vote=%E0%A4"), null);
  assert.equal(sharedVote(""), null);
});
