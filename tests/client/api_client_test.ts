/**
 * The one API client (lib/client/api_client.ts) against the real application over in-memory KV,
 * with `app.request` as its transport: every call's answer, the paging, every error the API
 * answers, a server that lies about its answers' shape; and the rule that no other module writes a
 * path of the API.
 * @module
 */
import assert from "node:assert/strict";
import {
  ApiCallError,
  createApiClient,
  type PagedCall,
  pagesOf,
  readPages,
  type Transport,
} from "../../lib/client/api_client.ts";
import { MAX_PAGE_LIMIT } from "../../lib/protocol/schemas.ts";
import { createApp } from "../../server/app.ts";
import { createLabLedger } from "../../server/store/lab.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { createStore } from "../../server/store/mod.ts";
import {
  hostilePoints,
  makeVoters,
  proofVerifies,
  ringFor,
  signedVote,
} from "../helpers/ledger_fixtures.ts";
import { inMemoryApp } from "../helpers/in_memory_app.ts";
import { tamperingTransport } from "../helpers/tampering_proxy.ts";

/** The real app over in-memory KV with `keys` registered voters, and a client of it. */
async function ledger(keys: number) {
  const { kv, store, app, api } = await inMemoryApp();
  const voters = makeVoters(keys);
  for (const v of voters) await api.registerKey({ key: v.key, name: "Voter" });
  return { kv, store, app, api, voters };
}

/** Asserts that `call` fails with an ApiCallError of `status` and `code`, and returns it. */
async function refusal(
  call: Promise<unknown>,
  status: number,
  code: string,
): Promise<ApiCallError> {
  const error = await call.then(() => null, (e: unknown) => e);
  assert.ok(error instanceof ApiCallError, `expected an ApiCallError, got ${error}`);
  assert.equal(error.status, status, error.message);
  assert.equal(error.code, code, error.message);
  return error;
}

Deno.test("every call answers its documented shape", async (t) => {
  const { kv, store, api, voters } = await ledger(4);
  try {
    await t.step("the key directory: registration, one key, a page", async () => {
      const extra = makeVoters(1)[0];
      assert.deepEqual(await api.registerKey({ key: extra.key }), {
        id: 5,
        key: extra.key,
        total: 5,
      });
      assert.deepEqual(await api.keyById(2), { id: 2, key: voters[1].key, total: 5 });
      assert.deepEqual(await api.keys(1, 2), {
        items: [{ id: 2, key: voters[1].key }, { id: 3, key: voters[2].key }],
        total: 5,
      });
    });

    const ring = ringFor(voters[0], voters, 3);
    const accepted = await api.submitVote(signedVote(voters[0], ring, "yes"));
    await t.step("a vote: its id and the block it will be sealed in", () => {
      assert.match(accepted.voteId, /^[A-Za-z0-9_-]{22}$/);
      assert.equal(accepted.blockId, 1);
    });
    await sealNextBlock(store, 1_700_000_000_000);

    await t.step("the chain: status, a block's hash, the blocks list", async () => {
      const status = await api.blockStatus();
      assert.deepEqual([status.height, status.openBlock], [1, 2]);
      assert.deepEqual(await api.blockHash(1), { height: 1, hash: status.hash });
      const blocks = await api.blocks(0, 10);
      assert.equal(blocks.total, 2);
      assert.deepEqual(blocks.items.map((b) => b.height), [0, 1]);
      assert.equal(blocks.items[1].hash, status.hash);
    });

    await t.step("a vote's proof and the block's votes", async () => {
      const proof = await api.voteProof(1, accepted.voteId);
      assert.equal(proof.vote.payload, "yes");
      assert.deepEqual(proof.vote.publicKeys, ring.map((v) => v.key));
      assert.ok(proofVerifies(proof));
      const votes = await api.blockVotes(1)(0, 10);
      assert.deepEqual(votes.items, [{ voteId: accepted.voteId, index: 0, vote: proof.vote }]);
      assert.equal(votes.total, 1);
    });

    await t.step("the tally and the tag lookup", async () => {
      assert.deepEqual(await api.tally(), { total: 1, results: [{ payload: "yes", count: 1 }] });
      const tag = signedVote(voters[0], ring, "yes").tag;
      assert.deepEqual(await api.voteOfTag(tag), { voteId: accepted.voteId, blockId: 1 });
    });
  } finally {
    kv.close();
  }
});

Deno.test("paging reads a collection in pages of the largest allowed size", async (t) => {
  const { kv, api } = await ledger(2 * MAX_PAGE_LIMIT + 5);
  const asked: [number, number][] = [];
  const keys: PagedCall<{ id: number; key: string }> = (offset, limit) => {
    asked.push([offset, limit]);
    return api.keys(offset, limit);
  };
  try {
    await t.step("every key, in three pages, ids in order", async () => {
      const all = await readPages(keys);
      assert.deepEqual(asked, [[0, 100], [100, 100], [200, 100]]);
      assert.equal(all.total, 205);
      assert.deepEqual(all.items.map((k) => k.id), Array.from({ length: 205 }, (_, i) => i + 1));
    });
    await t.step("a range: from an offset, at most a count", async () => {
      asked.length = 0;
      const some = await readPages(keys, { offset: 150, count: 30 });
      assert.deepEqual(asked, [[150, 30]]);
      assert.deepEqual(some.items.map((k) => k.id), Array.from({ length: 30 }, (_, i) => i + 151));
      asked.length = 0;
      const tail = await readPages(keys, { offset: 190 });
      assert.deepEqual(asked, [[190, 100]]);
      assert.equal(tail.items.length, 15);
    });
    await t.step("each page with its offset", async () => {
      const offsets = [];
      for await (const page of pagesOf(api.keys, { offset: 50 })) offsets.push(page.offset);
      assert.deepEqual(offsets, [50, 150]);
    });
    await t.step("past the end: one empty page, no loop", async () => {
      asked.length = 0;
      assert.deepEqual(await readPages(keys, { offset: 500 }), { items: [], total: 205 });
      assert.equal(asked.length, 1);
    });
    await t.step("a collection that stops short of its total ends at the empty page", async () => {
      const short: PagedCall<number> = (offset) =>
        Promise.resolve({ items: offset < 3 ? [offset] : [], total: 10 });
      assert.deepEqual(await readPages(short), { items: [0, 1, 2], total: 10 });
    });
    await t.step("the blocks list and a block's votes page alike", async () => {
      assert.deepEqual(await readPages(api.blocks), {
        items: [await api.blocks(0, 1).then((p) => p.items[0])],
        total: 1,
      });
      await refusal(readPages(api.blockVotes(1)), 404, "unknown_block");
    });
  } finally {
    kv.close();
  }
});

Deno.test("every refusal of the API becomes an ApiCallError with its status and code", async (t) => {
  const { kv, store, api, app, voters } = await ledger(3);
  try {
    const ring = ringFor(voters[0], voters, 3);
    const vote = signedVote(voters[0], ring, "yes");
    const accepted = await api.submitVote(vote);
    const cases: { desc: string; call: () => Promise<unknown>; status: number; code: string }[] = [
      {
        desc: "a key that is no curve point",
        call: () => api.registerKey({ key: hostilePoints().smallOrder }),
        status: 400,
        code: "invalid_key",
      },
      {
        desc: "a body of the wrong shape",
        call: () => api.registerKey({ key: voters[2].key, name: "x".repeat(201) }),
        status: 400,
        code: "invalid_request",
      },
      {
        desc: "a page larger than allowed",
        call: () => api.keys(0, MAX_PAGE_LIMIT + 1),
        status: 400,
        code: "invalid_request",
      },
      {
        desc: "an unknown key id",
        call: () => api.keyById(99),
        status: 404,
        code: "unknown_key",
      },
      {
        desc: "a vote whose signature does not verify",
        call: () => api.submitVote({ ...signedVote(voters[1], ring, "no"), payload: "yes" }),
        status: 400,
        code: "invalid_signature",
      },
      {
        desc: "a ring member that is not registered",
        call: () => api.submitVote(signedVote(voters[1], [voters[1], ...makeVoters(1)], "no")),
        status: 403,
        code: "unregistered_key",
      },
      {
        desc: "a second vote of one key",
        call: () => api.submitVote(signedVote(voters[0], ring, "no")),
        status: 409,
        code: "duplicate_tag",
      },
      {
        desc: "a payload over the limit",
        call: () => api.submitVote(signedVote(voters[1], ring, "x".repeat(1001))),
        status: 413,
        code: "payload_too_large",
      },
      {
        desc: "a body over 64 KiB",
        call: () => api.submitVote({ ...vote, payload: "x".repeat(70_000) }),
        status: 413,
        code: "body_too_large",
      },
      {
        desc: "a block that is not sealed",
        call: () => api.blockHash(1),
        status: 404,
        code: "unknown_block",
      },
      {
        desc: "a vote of a block that is not sealed",
        call: () => api.voteProof(1, accepted.voteId),
        status: 404,
        code: "block_not_sealed",
      },
      {
        desc: "an unknown vote",
        call: () => api.voteProof(0, "A".repeat(22)),
        status: 404,
        code: "unknown_vote",
      },
      {
        desc: "a tag that never voted",
        call: () => api.voteOfTag("ab".repeat(32)),
        status: 404,
        code: "unknown_tag",
      },
      {
        desc: "a client pointed at the wrong base URL",
        call: () => createApiClient({ fetch: app.request, baseUrl: "/v0" }).tally(),
        status: 404,
        code: "not_found",
      },
    ];
    for (const c of cases) {
      await t.step(`${c.desc}: ${c.status} ${c.code}`, async () => {
        const error = await refusal(c.call(), c.status, c.code);
        assert.ok(error.reason.length > 0);
        assert.ok(error.message.startsWith(`${error.call} answered ${c.status}: `), error.message);
        assert.equal(error.retryAfterSeconds, null);
      });
    }

    await t.step("a duplicate key carries the existing id", async () => {
      const error = await refusal(api.registerKey({ key: voters[1].key }), 409, "duplicate_key");
      assert.deepEqual(error.details, { id: 2 });
      assert.equal(error.call, "POST /api/pki/key");
    });

    await t.step("the calls still answer after the refusals", async () => {
      await sealNextBlock(store, Date.now());
      assert.equal((await api.voteProof(1, accepted.voteId)).index, 0);
    });
  } finally {
    kv.close();
  }
});

Deno.test("a saturated server's 503 carries the seconds to wait", async () => {
  const { kv, app, voters } = await ledger(2);
  try {
    // The server answers 503 busy only under saturation, which a test cannot arrange
    // deterministically: this transport answers for it as protocol §4 documents, and passes every
    // other request to the real app.
    const busy: Transport = (url, init) =>
      init.method === "POST" && url.endsWith("/vote")
        ? Response.json({ error: { code: "busy", message: "Verification is saturated" } }, {
          status: 503,
          headers: { "retry-after": "3" },
        })
        : app.request(url, init);
    const api = createApiClient({ fetch: busy });
    const error = await refusal(
      api.submitVote(signedVote(voters[0], voters, "yes")),
      503,
      "busy",
    );
    assert.equal(error.retryAfterSeconds, 3);
    assert.equal(error.reason, "Verification is saturated");
    assert.equal((await api.tally()).total, 0, "reads pass through");
  } finally {
    kv.close();
  }
});

Deno.test("failures without an API answer have codes of their own", async (t) => {
  const { kv, app } = await ledger(1);
  try {
    await t.step("no answer at all: network_error, status 0", async () => {
      const down = createApiClient({
        fetch: () => Promise.reject(new TypeError("connection refused")),
      });
      const error = await refusal(down.blockStatus(), 0, "network_error");
      assert.equal(error.message, "GET /api/block/status failed: connection refused");
    });
    await t.step("an error answer that is not JSON: http_error with its status", async () => {
      const gateway = createApiClient({
        fetch: () => new Response("<h1>Bad gateway</h1>", { status: 502 }),
      });
      const error = await refusal(gateway.tally(), 502, "http_error");
      assert.equal(error.reason, "status 502");
    });
    await t.step("a 2xx that is not JSON: malformed_answer", async () => {
      const html = createApiClient({ fetch: () => new Response("<!DOCTYPE html>") });
      const error = await refusal(html.tally(), 200, "malformed_answer");
      assert.equal(error.reason, "the answer is not JSON");
    });
    await t.step("a 2xx unlike its schema: malformed_answer naming the field", async () => {
      const lying = createApiClient({
        fetch: tamperingTransport(app.request, (path, body) => {
          if (path === "/api/block/status") body.hash = "not hex";
        }),
      });
      const error = await refusal(lying.blockStatus(), 200, "malformed_answer");
      assert.match(error.reason, /^unexpected answer: hash: must be 64 lowercase hex characters$/);
      assert.equal((await lying.tally()).total, 0, "other answers still read");
    });
  } finally {
    kv.close();
  }
});

/** `promise`, or a failure once `ms` have passed without it settling (so a hang fails the test). */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("a call with no whole answer by its deadline fails with timeout, status 0", async (t) => {
  const { kv, app } = await ledger(1);
  try {
    await t.step("a transport that never answers, nor hears the abort", async () => {
      let calls = 0;
      const silent = createApiClient({
        fetch: () => {
          calls++;
          return new Promise<Response>(() => {});
        },
        timeoutMs: 50,
      });
      const started = performance.now();
      const error = await refusal(within(2_000, silent.serverKey()), 0, "timeout");
      assert.ok(performance.now() - started < 1_000, "the deadline ends the wait");
      assert.equal(error.reason, "no answer within 50 ms");
      assert.equal(error.message, "GET /api/server-key failed: no answer within 50 ms");
      assert.equal(calls, 1);
    });
    await t.step("the request is aborted at the deadline", async () => {
      let signal: AbortSignal | null | undefined;
      const stalling = createApiClient({
        fetch: (_, init) => {
          signal = init.signal;
          return new Promise<Response>(() => {});
        },
        timeoutMs: 1_000,
      });
      const error = await refusal(within(3_000, stalling.blocks(0, 1)), 0, "timeout");
      assert.equal(error.reason, "no answer within 1 s");
      assert.equal(signal?.aborted, true);
    });
    await t.step("headers in time, a body that never ends: timeout", async () => {
      const dripping = createApiClient({
        fetch: () =>
          new Response(new ReadableStream({ start: (c) => c.enqueue(new Uint8Array([0x7b])) }), {
            headers: { "content-type": "application/json" },
          }),
        timeoutMs: 50,
      });
      await refusal(within(2_000, dripping.blockStatus()), 0, "timeout");
    });
    await t.step("an answer in time is read as before, its timer cleared", async () => {
      const api = createApiClient({ fetch: app.request, timeoutMs: 5_000 });
      assert.equal((await api.blockStatus()).height, 0);
      assert.equal((await api.blocks(0, 1)).items.length, 1);
    });
    await t.step("a refusal in time keeps its own code", async () => {
      const api = createApiClient({ fetch: app.request, timeoutMs: 5_000 });
      await refusal(api.keyById(99), 404, "unknown_key");
    });
    await t.step("a deadline that is not a positive number of milliseconds is refused", () => {
      for (const timeoutMs of [0, -1, NaN, Infinity]) {
        assert.throws(() => createApiClient({ fetch: app.request, timeoutMs }), RangeError);
      }
    });
  } finally {
    kv.close();
  }
});

Deno.test("a client of the practice ledger sends every call under /api/lab/, every write as JSON", async () => {
  const kv = await Deno.openKv(":memory:");
  const app = createApp({
    store: await createStore(kv),
    lab: await createLabLedger(kv, { maxKeys: 10, maxVotes: 10 }),
  });
  const paths: string[] = [];
  const writeTypes: (string | null)[] = [];
  const recording: Transport = (url, init) => {
    paths.push(`${init.method} ${url}`);
    if (init.method === "POST") writeTypes.push(new Headers(init.headers).get("content-type"));
    return app.request(url, init);
  };
  try {
    const lab = createApiClient({ fetch: recording, ledger: "lab" });
    const [voter] = makeVoters(1);
    assert.equal((await lab.registerKey({ key: voter.key, name: "Lab" })).id, 1);
    assert.equal((await lab.keys(0, 1)).total, 1);
    await lab.tally();
    await lab.blockStatus();
    const lens = createApiClient({ fetch: recording, ledger: "lab", lens: "honest" });
    assert.equal((await lens.blocks(0, 1)).items.length, 1);
    const fresh = await lab.resetLedger();
    assert.equal(fresh.height, 0);
    assert.equal((await lab.keys(0, 1)).total, 0);
    assert.deepEqual(paths, [
      "POST /api/lab/pki/key",
      "GET /api/lab/pki/key/offset/0/limit/1",
      "GET /api/lab/tally",
      "GET /api/lab/block/status",
      "GET /api/lab/lens/honest/blocks?from=0&limit=1",
      "POST /api/lab/reset",
      "GET /api/lab/pki/key/offset/0/limit/1",
    ]);
    // Every write says it is JSON, the bodiless reset too (protocol §4.1).
    assert.deepEqual(writeTypes, ["application/json", "application/json"]);
    // The election's ledger holds none of it, and has no reset.
    const election = createApiClient({ fetch: app.request });
    assert.equal((await election.keys(0, 1)).total, 0);
    await refusal(election.resetLedger(), 404, "not_found");
  } finally {
    kv.close();
  }
});

Deno.test("no module but the API client writes a path of the API", async () => {
  const root = new URL("../../", import.meta.url);
  const files = ["audit.ts"];
  for (const dir of ["lib", "islands", "components", "routes"]) {
    for await (const file of walk(new URL(`${dir}/`, root))) files.push(`${dir}/${file}`);
  }
  const writers: string[] = [];
  for (const file of files) {
    const code = withoutComments(await Deno.readTextFile(new URL(file, root)));
    if (code.includes("/api/")) writers.push(file);
  }
  // Comments may name a call; code may not build its path.
  assert.deepEqual(writers, ["lib/client/api_client.ts"]);
});

async function* walk(dir: URL, prefix = ""): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory) {
      yield* walk(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`);
    } else if (/\.tsx?$/.test(entry.name)) yield `${prefix}${entry.name}`;
  }
}

/** `code` without block comments and line comments (a `//` after `:` is a URL, kept). */
function withoutComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");
}
