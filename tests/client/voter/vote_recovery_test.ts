/**
 * Nothing lost on reload (page §11): a vote's content and signature are stored before it is sent,
 * a refusal for good removes them again, and recoverVote settles a vote in doubt against the real
 * application over in-memory KV, through a transport that can lose the answer or the request.
 * @module
 */
import assert from "node:assert/strict";
import { createApiClient } from "../../../lib/client/api_client.ts";
import {
  type ClientIO,
  generateKeys,
  loadVoteStatus,
  readStoredVote,
  recoverVote,
  registerKey,
  submitVote,
} from "../../../lib/client/voter/panel_actions.ts";
import type { StoredVote } from "../../../lib/client/voter/status.ts";
import { storageKey } from "../../../lib/client/voter/voters.ts";
import { tagOfSignature } from "../../../lib/protocol/signature_fields.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { inMemoryApp } from "../../helpers/in_memory_app.ts";
import { MapStorage } from "../../helpers/map_storage.ts";

/**
 * What happens to the next `POST /api/vote`: delivered; delivered but its answer lost on the way
 * back; dropped before it reaches the server; or answered by the transport with `answer`.
 */
type PostFate =
  | { kind: "deliver" }
  | { kind: "lose-answer" }
  | { kind: "drop" }
  | { kind: "answer"; status: number; code: string; message: string };

const NO_VOTE: StoredVote = { voteId: null, blockId: null, voteContent: null, voteSignature: null };

async function setup() {
  const { kv, store, app, api } = await inMemoryApp();
  /** Every POST /api/vote body as sent, the server's status (0 when it never arrived). */
  const posts: { body: string; status: number }[] = [];
  const fates: PostFate[] = [];
  /** Called as each POST /api/vote leaves, before anything reaches the server. */
  let onPost: (body: string) => void = () => {};
  const transport = async (url: string, init: RequestInit): Promise<Response> => {
    if (url !== "/api/vote" || init.method !== "POST") return app.request(url, init);
    const body = init.body as string;
    onPost(body);
    const fate = fates.shift() ?? { kind: "deliver" };
    if (fate.kind === "drop") {
      posts.push({ body, status: 0 });
      throw new TypeError("the network went away");
    }
    if (fate.kind === "answer") {
      posts.push({ body, status: 0 });
      return Response.json({ error: { code: fate.code, message: fate.message } }, {
        status: fate.status,
      });
    }
    const response = await app.request(url, init);
    posts.push({ body, status: response.status });
    if (fate.kind === "lose-answer") throw new TypeError("the connection closed before the answer");
    return response;
  };
  const logs: string[] = [];
  /** One browser tab: its own storage (or a shared one), the same server. */
  const tab = (storage = new MapStorage()): ClientIO & { storage: MapStorage } => ({
    storage,
    api: createApiClient({ fetch: transport }),
    log: (message) => logs.push(message),
  });
  const io = tab();
  for (let i = 1; i <= 3; i++) {
    generateKeys(io, `Voter ${i}`, { seed: new Uint8Array(32).fill(i) });
    assert.equal((await registerKey(io, `Voter ${i}`)).status, "registered");
  }
  const seal = () => sealNextBlock(store, Date.now());
  /** The votes the server accepted. */
  const accepted = () => posts.filter((p) => p.status === 202).length;
  return {
    kv,
    api,
    io,
    tab,
    posts,
    logs,
    seal,
    accepted,
    fates,
    onPost: (f: (body: string) => void) => onPost = f,
  };
}

const VOTER = "Voter 2";

/** A copy of a tab's storage: the same browser profile opened again, or another tab's copy. */
function copyOf(storage: MapStorage): MapStorage {
  const copy = new MapStorage();
  for (const [key, value] of storage.items) copy.setItem(key, value);
  return copy;
}

Deno.test("content and signature are stored before the vote is sent", async () => {
  const { kv, io, posts, onPost } = await setup();
  try {
    const seen: StoredVote[] = [];
    onPost(() => seen.push(readStoredVote(io.storage, VOTER)));
    const outcome = await submitVote(io, VOTER, { content: "Yes", ringSize: 3 });
    assert.ok(outcome.ok);
    const signature = JSON.parse(posts[0].body).signature;
    assert.deepEqual(seen, [{ ...NO_VOTE, voteContent: "Yes", voteSignature: signature }]);
    assert.deepEqual(readStoredVote(io.storage, VOTER), {
      voteId: outcome.voteId,
      blockId: String(outcome.blockId),
      voteContent: "Yes",
      voteSignature: signature,
    });
  } finally {
    kv.close();
  }
});

Deno.test("a 202 lost on the way back: the reload finds the vote by its tag", async () => {
  const { kv, api, io, tab, posts, fates, seal, accepted } = await setup();
  try {
    fates.push({ kind: "lose-answer" });
    const outcome = await submitVote(io, VOTER, { content: "Yes", ringSize: 3 });
    assert.ok(!outcome.ok && outcome.code === "unconfirmed" && outcome.status === 0);
    assert.match(outcome.reason, /^The vote could not be sent: POST \/api\/vote failed: /);
    assert.equal(accepted(), 1, "the server counted it");
    const inDoubt = readStoredVote(io.storage, VOTER);
    assert.equal(inDoubt.voteId, null);
    assert.equal(inDoubt.voteContent, "Yes");

    const reloaded = tab(copyOf(io.storage));
    const line = await loadVoteStatus(reloaded, VOTER);
    assert.equal(line.status, "pending");
    const onServer = await api.voteOfTag(tagOfSignature(inDoubt.voteSignature)!);
    assert.deepEqual(readStoredVote(reloaded.storage, VOTER), {
      ...inDoubt,
      voteId: onServer.voteId,
      blockId: String(onServer.blockId),
    });
    assert.equal(posts.length, 1, "found, not sent again");
    assert.equal((await seal()).length, 1);
    assert.equal((await loadVoteStatus(reloaded, VOTER)).status, "voted");
    assert.deepEqual(await recoverVote(reloaded, VOTER), { kind: "none" });
  } finally {
    kv.close();
  }
});

Deno.test("a vote that never arrived: recovery sends the very same vote, counted once", async () => {
  const { kv, api, io, tab, posts, fates, seal, accepted } = await setup();
  try {
    fates.push({ kind: "drop" });
    const outcome = await submitVote(io, VOTER, { content: "No", ringSize: 3 });
    assert.ok(!outcome.ok && outcome.code === "unconfirmed");
    assert.equal(accepted(), 0);
    const reloaded = tab(copyOf(io.storage));
    const recovery = await recoverVote(reloaded, VOTER);
    assert.equal(recovery.kind, "resent");
    assert.equal(posts.length, 2);
    assert.equal(posts[1].body, posts[0].body, "byte for byte the vote first sent");
    assert.deepEqual(Object.keys(JSON.parse(posts[1].body)), [
      "publicKeys",
      "signature",
      "tag",
      "payload",
    ]);
    const privateKey = io.storage.getItem(storageKey(VOTER, "privateKey"))!;
    assert.ok(!posts[1].body.includes(privateKey), "the private key stays home");
    const stored = readStoredVote(reloaded.storage, VOTER);
    assert.ok(recovery.kind === "resent" && stored.voteId === recovery.voteId);
    assert.equal(stored.blockId, String(recovery.blockId));

    assert.deepEqual(await recoverVote(reloaded, VOTER), { kind: "none" });
    assert.equal(accepted(), 1);
    assert.equal((await seal()).length, 1);
    assert.equal((await api.tally()).total, 1, "one vote counted");
    assert.equal((await loadVoteStatus(reloaded, VOTER)).status, "voted");
  } finally {
    kv.close();
  }
});

Deno.test("two tabs of one voter recovering at once agree on one vote", async (t) => {
  for (const shared of [false, true]) {
    await t.step(shared ? "one shared storage" : "two copies of the storage", async () => {
      const { kv, io, tab, fates, seal, accepted } = await setup();
      try {
        fates.push({ kind: "drop" });
        assert.equal((await submitVote(io, VOTER, { content: "Yes", ringSize: 3 })).ok, false);
        const [a, b] = shared ? [tab(io.storage), tab(io.storage)] : [
          tab(copyOf(io.storage)),
          tab(copyOf(io.storage)),
        ];
        // Both ask the tag (404), both send: one 202, one 409 that asks the tag again.
        const kinds = (await Promise.all([recoverVote(a, VOTER), recoverVote(b, VOTER)]))
          .map((r) => r.kind).sort();
        assert.deepEqual(kinds, ["recovered", "resent"]);
        assert.equal(accepted(), 1);
        const [va, vb] = [readStoredVote(a.storage, VOTER), readStoredVote(b.storage, VOTER)];
        assert.notEqual(va.voteId, null);
        assert.deepEqual(va, vb);
        await seal();
        const lines = await Promise.all([loadVoteStatus(a, VOTER), loadVoteStatus(b, VOTER)]);
        assert.equal(lines[0].status, "voted");
        assert.deepEqual(lines[0], lines[1]);
      } finally {
        kv.close();
      }
    });
  }
});

Deno.test("a refusal for good removes the entries again; no answer or a 5xx keeps them", async (t) => {
  const { kv, io, fates, onPost, logs } = await setup();
  try {
    let seen: StoredVote | null = null;
    onPost(() => seen = readStoredVote(io.storage, VOTER));
    const cases: { desc: string; fate?: PostFate; content?: string; code: string }[] = [
      { desc: "413 payload_too_large from the server", content: "x".repeat(1001), code: "refused" },
      {
        desc: "400 not_a_choice",
        fate: { kind: "answer", status: 400, code: "not_a_choice", message: "Not a choice" },
        code: "refused",
      },
      {
        desc: "403 unregistered_key",
        fate: { kind: "answer", status: 403, code: "unregistered_key", message: "Unregistered" },
        code: "refused",
      },
      {
        desc: "409 round_closed",
        fate: { kind: "answer", status: 409, code: "round_closed", message: "Round 2 is current" },
        code: "refused",
      },
    ];
    for (const c of cases) {
      await t.step(`${c.desc}: removed`, async () => {
        seen = null;
        if (c.fate) fates.push(c.fate);
        const outcome = await submitVote(io, VOTER, { content: c.content ?? "Yes", ringSize: 3 });
        assert.equal(seen!.voteContent, c.content ?? "Yes", "stored while on its way");
        assert.ok(!outcome.ok);
        assert.equal(outcome.code, c.code);
        assert.match(outcome.reason, /^Vote refused: \S/);
        assert.deepEqual(readStoredVote(io.storage, VOTER), NO_VOTE);
      });
    }
    await t.step("503 busy: kept for recovery, the reason as before", async () => {
      fates.push({ kind: "answer", status: 503, code: "busy", message: "The server is busy" });
      const outcome = await submitVote(io, VOTER, { content: "Yes", ringSize: 3 });
      assert.deepEqual(
        outcome.ok ? null : [outcome.code, outcome.reason],
        ["unconfirmed", "Vote refused: The server is busy"],
      );
      const kept = readStoredVote(io.storage, VOTER);
      assert.equal(kept.voteId, null);
      assert.equal(kept.voteContent, "Yes");
      assert.notEqual(kept.voteSignature, null);
    });
    await t.step("a recovery whose resend is refused for good drops the vote", async () => {
      fates.push({ kind: "answer", status: 409, code: "round_closed", message: "Round closed" });
      logs.length = 0;
      const recovery = await recoverVote(io, VOTER);
      assert.equal(recovery.kind, "dropped");
      assert.ok(recovery.kind === "dropped" && recovery.refusal.code === "refused");
      assert.equal(recovery.refusal.reason, "Vote refused: Round closed");
      assert.deepEqual(logs, ["POST /api/vote answered 409: Round closed"]);
      assert.deepEqual(readStoredVote(io.storage, VOTER), NO_VOTE);
    });
  } finally {
    kv.close();
  }
});

Deno.test("a recovery that cannot reach the server changes nothing and says so", async () => {
  const { kv, io, tab, fates, logs } = await setup();
  try {
    fates.push({ kind: "drop" });
    await submitVote(io, VOTER, { content: "Yes", ringSize: 3 });
    const before = readStoredVote(io.storage, VOTER);
    const offline: ClientIO = {
      ...tab(io.storage),
      api: createApiClient({ fetch: () => Promise.reject(new TypeError("offline")) }),
    };
    logs.length = 0;
    assert.deepEqual(await recoverVote(offline, VOTER), { kind: "unsettled" });
    assert.deepEqual(readStoredVote(io.storage, VOTER), before);
    assert.match(logs[0], /^GET \/api\/tag\/[0-9a-f]{64} failed: offline$/);
    assert.equal((await loadVoteStatus(offline, VOTER)).status, "unvoted");
    const outcome = await submitVote(offline, VOTER, { content: "No", ringSize: 3 });
    assert.deepEqual(outcome.ok ? null : [outcome.code, outcome.reason], [
      "unsettled",
      "The vote could not be sent: an earlier vote of this voter is not confirmed yet",
    ]);
    assert.deepEqual(readStoredVote(io.storage, VOTER), before, "the earlier vote kept");
  } finally {
    kv.close();
  }
});

Deno.test("a new vote after one in doubt that landed: the first is kept, the second refused", async () => {
  const { kv, io, fates, accepted } = await setup();
  try {
    fates.push({ kind: "lose-answer" });
    await submitVote(io, VOTER, { content: "Yes", ringSize: 3 });
    const first = readStoredVote(io.storage, VOTER);
    const outcome = await submitVote(io, VOTER, { content: "No", ringSize: 3 });
    assert.ok(!outcome.ok && outcome.code === "duplicate_tag");
    assert.equal(outcome.reason, "Vote refused: this voter has already voted");
    const stored = readStoredVote(io.storage, VOTER);
    assert.equal(stored.voteContent, "Yes");
    assert.equal(stored.voteSignature, first.voteSignature);
    assert.notEqual(stored.voteId, null);
    assert.equal(accepted(), 1);
  } finally {
    kv.close();
  }
});

Deno.test("a stored vote whose signature is not a wire signature is dropped", async (t) => {
  const cases = [
    { desc: "not JSON", signature: "{" },
    { desc: "no tag", signature: JSON.stringify({ c0: "00", r: [], ring: [] }) },
    { desc: "a tag of 31 bytes", signature: JSON.stringify({ I: "ab".repeat(31), ring: [] }) },
  ];
  const { kv, io, posts, logs } = await setup();
  try {
    for (const c of cases) {
      await t.step(c.desc, async () => {
        io.storage.setItem(storageKey(VOTER, "voteContent"), "Yes");
        io.storage.setItem(storageKey(VOTER, "voteSignature"), c.signature);
        logs.length = 0;
        const recovery = await recoverVote(io, VOTER);
        assert.ok(recovery.kind === "dropped" && recovery.refusal.code === "malformed_vote");
        assert.deepEqual(readStoredVote(io.storage, VOTER), NO_VOTE);
        assert.match(logs[0], /^Stored vote dropped: signature: /);
        assert.equal(posts.length, 0, "nothing sent");
      });
    }
  } finally {
    kv.close();
  }
});
