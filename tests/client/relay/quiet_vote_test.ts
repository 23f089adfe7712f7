// A quiet phone's vote through the relay (page §14.8): sent in the phone's own window W, drawn
// again when the phone is ready after its draw; the same bytes sent again after a busy server's
// Retry-After, or after a relay timeout once its tag is looked up past the next seal and not
// found; never more than MAX_VOTE_SENDS; every relayed request held within the page's budget.
import assert from "node:assert/strict";
import type { Transport } from "../../../lib/client/api_client.ts";
import { keyConfigHash, type RelayPin } from "../../../lib/client/relay/fragment.ts";
import {
  createPageTransport,
  type RoundTiming,
  type Wait,
} from "../../../lib/client/relay/page_transport.ts";
import { RelayError } from "../../../lib/client/relay/relayed_transport.ts";
import { RequestBudget } from "../../../lib/client/relay/poll_schedule.ts";
import { MAX_VOTE_SENDS } from "../../../lib/client/relay/vote_retry.ts";

const PIN: RelayPin = {
  relay: "http://relay.example:8788",
  ohttp: keyConfigHash(new Uint8Array(1)),
};
const OPENED = 1_800_000_000_000;
const TIMING: RoundTiming = {
  openedAt: OPENED,
  intervalMs: 1_000,
  windowMs: 30_000,
  sealAt: OPENED + 500,
};
const BODY = JSON.stringify({ tag: "ab".repeat(32), payload: "Yes" });

/** One scripted relayed answer: a status (with headers and body), or a relay failure. */
type Scripted = { status: number; body?: unknown; headers?: Record<string, string> } | RelayError;

/** A registered phone whose relayed calls are answered from `script` in turn. */
function phone(
  script: Scripted[],
  { timing = TIMING, now = OPENED, budget }: {
    timing?: RoundTiming;
    now?: number;
    budget?: RequestBudget;
  } = {},
) {
  const sent: { at: number; call: string; body?: string }[] = [];
  const waits: (Wait | null)[] = [];
  const clock = { now };
  const relayed: Transport = (url, init) => {
    sent.push({ at: clock.now, call: `${init.method} ${url}`, body: init.body as string });
    const next = script.shift() ?? { status: 200, body: {} };
    if (next instanceof RelayError) throw next;
    return new Response(JSON.stringify(next.body ?? {}), {
      status: next.status,
      headers: { "content-type": "application/json", ...next.headers },
    });
  };
  const transport = createPageTransport({
    direct: () => {
      throw new Error("nothing goes straight");
    },
    pin: () => PIN,
    registered: () => true,
    markRegistered: () => {},
    keyCheck: () => Promise.resolve({ kind: "ok" }),
    relayed: () => Promise.resolve(relayed),
    timing: () => Promise.resolve(timing),
    now: () => clock.now,
    sleep: (ms) => {
      clock.now += ms;
      return Promise.resolve();
    },
    random: () => 0.5,
    loadedAt: OPENED - 60_000,
    onWait: (wait) => waits.push(wait),
    budget,
  });
  const vote = () =>
    Promise.resolve(transport("/api/rounds/2/vote", { method: "POST", body: BODY }));
  return { vote, transport, sent, waits, clock };
}

const ACCEPTED = { status: 202, body: { voteId: "v1", blockId: 3 } };

Deno.test("a vote is sent in the phone's own window: drawn in it, sent once", async () => {
  const p = phone([ACCEPTED]);
  const answer = await p.vote();
  assert.equal(answer.status, 202);
  // openedAt + 5 s + 0.5 × W.
  assert.deepEqual(p.sent.map((s) => s.at), [OPENED + 5_000 + 15_000]);
  assert.deepEqual(p.waits, [{ kind: "vote", until: OPENED + 20_000 }, null]);
});

Deno.test("a phone ready after its drawn time draws again over what is left, never at once", async () => {
  const ready = OPENED + 25_000;
  const p = phone([ACCEPTED], { now: ready });
  await p.vote();
  const end = OPENED + 5_000 + 30_000;
  const at = p.sent[0].at;
  assert.ok(at > ready && at <= end, `sent at ${at - OPENED} ms`);
  assert.equal(at, ready + 0.5 * (end - ready));
});

Deno.test("a busy server's vote is sent again, the same bytes, after Retry-After and a delay", async () => {
  const busy = { status: 503, body: { error: { code: "busy" } }, headers: { "retry-after": "4" } };
  const p = phone([busy, ACCEPTED]);
  const answer = await p.vote();
  assert.equal(answer.status, 202);
  assert.equal(p.sent.length, 2);
  assert.equal(p.sent[1].body, p.sent[0].body, "the same bytes");
  assert.equal(p.sent[1].at - p.sent[0].at, 4_000 + 0.5 * 1_000);
  // The wait is shown as the vote's.
  assert.ok(p.waits.filter((w) => w?.kind === "vote").length >= 2);
});

Deno.test("after a relay timeout the tag is looked up past the next seal: found, it is the vote's answer", async () => {
  const timeout = new RelayError("gateway-timeout", "504", 504);
  const p = phone([timeout, { status: 200, body: { voteId: "v7", blockId: 4 } }]);
  const answer = await p.vote();
  assert.equal(answer.status, 202);
  assert.deepEqual(await answer.json(), { voteId: "v7", blockId: 4 });
  assert.deepEqual(p.sent.map((s) => s.call), [
    "POST /api/rounds/2/vote",
    `GET /api/rounds/2/tag/${"ab".repeat(32)}`,
  ]);
  // The next seal tick after the send, then 1 s + U·2 s.
  const sentAt = p.sent[0].at;
  const nextSeal = TIMING.sealAt! + Math.ceil((sentAt - TIMING.sealAt!) / 1_000) * 1_000;
  assert.equal(p.sent[1].at, nextSeal + 1_000 + 0.5 * 2_000);
});

Deno.test("after a relay timeout and no tag, the same bytes again; never past the cap", async () => {
  const timeout = () => new RelayError("gateway-timeout", "504", 504);
  const absent = { status: 404, body: { error: { code: "unknown_tag" } } };
  const script: Scripted[] = [];
  for (let i = 0; i < MAX_VOTE_SENDS + 2; i++) script.push(timeout(), absent);
  const p = phone(script);
  const failed = await Promise.resolve(p.vote()).catch((error: unknown) => error);
  assert.ok(failed instanceof RelayError, "the last failure is the call's");
  const votes = p.sent.filter((s) => s.call.startsWith("POST"));
  assert.equal(votes.length, MAX_VOTE_SENDS);
  assert.ok(votes.every((v) => v.body === BODY), "never another ballot");
});

Deno.test("a refusal is the vote's answer at once; a first duplicate is left to the page", async () => {
  const refused = phone([{ status: 400, body: { error: { code: "bad_signature" } } }]);
  assert.equal((await refused.vote()).status, 400);
  assert.equal(refused.sent.length, 1);
  const duplicate = phone([{ status: 409, body: { error: { code: "duplicate_tag" } } }]);
  assert.equal((await duplicate.vote()).status, 409);
  assert.equal(duplicate.sent.length, 1);
});

Deno.test("every relayed request waits until it fits the page's budget", async () => {
  const p = phone([], { budget: new RequestBudget(3) });
  for (let i = 0; i < 7; i++) await p.transport("/api/rounds/2/state", { method: "GET" });
  const times = p.sent.map((s) => s.at - OPENED);
  assert.deepEqual(times, [0, 0, 0, 60_000, 60_000, 60_000, 120_000]);
});

Deno.test("a round without the phone's own window keeps the window of two sealing intervals", async () => {
  const p = phone([ACCEPTED], { timing: { openedAt: OPENED, intervalMs: 1_000 } });
  await p.vote();
  assert.deepEqual(p.sent.map((s) => s.at), [OPENED + 5_000 + 1_000]);
  assert.equal(p.sent.length, 1);
});

Deno.test("a tag lookup that gets no answer is made again after the next seal, and never taken for absent", async () => {
  const timeout = () => new RelayError("gateway-timeout", "504", 504);
  const p = phone([
    timeout(),
    timeout(),
    { status: 500, body: { error: { code: "internal_error" } } },
    { status: 200, body: { voteId: "v9", blockId: 5 } },
  ]);
  const answer = await p.vote();
  assert.equal(answer.status, 202);
  assert.deepEqual(await answer.json(), { voteId: "v9", blockId: 5 });
  // One vote sent; three lookups after it, each past a later seal; the vote never sent again.
  const calls = p.sent.map((s) => s.call.split(" ")[0]);
  assert.deepEqual(calls, ["POST", "GET", "GET", "GET"]);
  for (let i = 2; i < p.sent.length; i++) assert.ok(p.sent[i].at > p.sent[i - 1].at);
});

Deno.test("a tag that never answers leaves the vote in doubt after MAX_VOTE_SENDS lookups", async () => {
  const script: Scripted[] = [];
  for (let i = 0; i < MAX_VOTE_SENDS + 3; i++) script.push(new RelayError("timeout", "late"));
  const p = phone(script);
  const failed = await Promise.resolve(p.vote()).catch((error: unknown) => error);
  assert.ok(failed instanceof RelayError);
  assert.equal(p.sent.filter((s) => s.call.startsWith("POST")).length, 1);
  assert.equal(p.sent.filter((s) => s.call.startsWith("GET")).length, MAX_VOTE_SENDS);
});
