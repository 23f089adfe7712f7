// "Who saw what" (page §10.11, protocol §7): the relay's stats read and checked, and the sentences
// exactly as specified.
import assert from "node:assert/strict";
import {
  parseRelayStats,
  readRelayStats,
  SAME_MACHINE_TEXT,
  whoSawText,
} from "../../../lib/client/board/who_saw.ts";

const STATS = { requests: 61, clients: 16, bytes: 123_456, sameMachine: false };

Deno.test("the sentence puts the relay's figures beside the server's, word for word", () => {
  assert.equal(
    whoSawText({ phones: 16, envelopes: 61, votes: 16 }),
    "The relay saw 16 phones and 61 sealed envelopes it cannot open. The server saw 16 votes, " +
      "all from the relay. If the two compare their logs they can pair every vote with a phone: " +
      "this protects you only if different people run them.",
  );
  assert.equal(
    SAME_MACHINE_TEXT,
    "This relay runs on the server's machine: a demonstration, no protection.",
  );
});

Deno.test("the relay's stats are four counts; anything else is refused with the reason", () => {
  assert.deepEqual(parseRelayStats({ ...STATS, extra: 1 }), STATS);
  const cases: { desc: string; json: unknown; reason: RegExp }[] = [
    { desc: "not an object", json: [1], reason: /not an object/ },
    { desc: "null", json: null, reason: /not an object/ },
    { desc: "no sameMachine", json: { ...STATS, sameMachine: "yes" }, reason: /machine/ },
    { desc: "negative", json: { ...STATS, clients: -1 }, reason: /client count/ },
    { desc: "fraction", json: { ...STATS, requests: 1.5 }, reason: /request count/ },
    { desc: "missing", json: { ...STATS, bytes: undefined }, reason: /byte count/ },
  ];
  for (const { desc, json, reason } of cases) {
    assert.throws(() => parseRelayStats(json), reason, desc);
  }
});

Deno.test("the stats are read from the relay's own /stats over HTTP", async () => {
  let answer: () => Response = () => Response.json(STATS);
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    (request) =>
      new URL(request.url).pathname === "/stats" ? answer() : new Response("", { status: 404 }),
  );
  const relay = `http://127.0.0.1:${server.addr.port}/`;
  try {
    assert.deepEqual(await readRelayStats(fetch, relay), STATS);
    answer = () => new Response("", { status: 502 });
    await assert.rejects(() => readRelayStats(fetch, relay), /\/stats answered 502/);
    answer = () => Response.json({ requests: 1 });
    await assert.rejects(() => readRelayStats(fetch, relay), /machine/);
  } finally {
    await server.shutdown();
  }
});
