import assert from "node:assert/strict";
import { blockHash } from "../../lib/protocol/chain.ts";
import { type ApiClient, createApiClient } from "../../lib/app/api_client.ts";
import { AUDIT_PHASES, auditLedger, type AuditReport } from "../../lib/app/audit.ts";
import { inThreadChecker, type VoteChecker } from "../../lib/app/vote_checks.ts";
import { tallyOf } from "../../lib/protocol/tally.ts";
import { createApp } from "../../server/app.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { kvKeys, type OpenRecord } from "../../server/kv_layout.ts";
import { createStore } from "../../server/store.ts";
import { forgeBallot } from "../helpers/forged_ballot.ts";
import { call, makeVoters, ringFor, signedVote } from "../helpers/ledger_fixtures.ts";
import { tamperingTransport } from "../helpers/tampering_proxy.ts";

/** A ledger of three sealed blocks (3, 2 and 2 votes) behind the real app, in-memory KV. */
async function honestLedger() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const app = createApp({ store });
  const voters = makeVoters(8);
  for (const v of voters) {
    assert.equal((await call(app, "POST", "/api/pki/key", { key: v.key })).status, 201);
  }
  const plan = [["yes", "no", "yes"], ["yes", "abstain"], ["no", "yes"]];
  let next = 0;
  for (const [b, payloads] of plan.entries()) {
    for (const payload of payloads) {
      const signer = voters[next++];
      const res = await call(
        app,
        "POST",
        "/api/vote",
        signedVote(signer, ringFor(signer, voters, 3, next), payload),
      );
      assert.equal(res.status, 202);
    }
    assert.equal((await sealNextBlock(store, 1_700_000_000_000 + b * 60_000)).length, 1);
  }
  const api = createApiClient({ fetch: app.request });
  /** The client of a server that rewrites the answers of paths matching `pattern` by `edit`. */
  // deno-lint-ignore no-explicit-any
  const tampered = (pattern: RegExp, edit: (body: any) => void): ApiClient =>
    createApiClient({
      fetch: tamperingTransport(app.request, (path, body) => pattern.test(path) && edit(body)),
    });
  return { kv, store, app, api, tampered, voters };
}

Deno.test("the auditor passes an honest ledger and recomputes its tally", async () => {
  const { kv, api } = await honestLedger();
  const progress: string[] = [];
  const report = await auditLedger(api, {
    onProgress: (p) => progress.at(-1) !== p.phase && progress.push(p.phase),
  });
  assert.deepEqual(report.failures, []);
  assert.equal(report.ok, true);
  assert.deepEqual([report.height, report.blocks, report.keys, report.votes], [3, 4, 8, 7]);
  assert.deepEqual(report.tally, [
    { payload: "yes", count: 4 },
    { payload: "no", count: 2 },
    { payload: "abstain", count: 1 },
  ]);
  assert.deepEqual(progress, [...AUDIT_PHASES]);
  assert.deepEqual(report.voteFailures, []);
  kv.close();
});

Deno.test("the auditor catches every kind of tampering", async (t) => {
  const { kv, tampered } = await honestLedger();
  const cases: { desc: string; api: ApiClient; expect: RegExp }[] = [
    {
      desc: "a rewritten payload",
      api: tampered(/\/block\/id\/2\/votes/, (b) => (b.votes[0].vote.payload = "no")),
      expect: /block 2: Merkle root does not match|invalid signature/,
    },
    {
      desc: "a dropped vote",
      api: tampered(/\/block\/id\/1\/votes/, (b) => b.votes.splice(1, 1)),
      expect: /block 1 vote 2 .*expected leaf index 1|block 1: Merkle root does not match/,
    },
    {
      desc: "a reordered block",
      api: tampered(/\/block\/id\/1\/votes/, (b) => {
        [b.votes[0].vote, b.votes[1].vote] = [b.votes[1].vote, b.votes[0].vote];
      }),
      expect: /block 1: Merkle root does not match its 3 votes/,
    },
    {
      desc: "a block listed out of vote-id order",
      api: tampered(/\/block\/id\/1\/votes/, (b) => {
        [b.votes[0], b.votes[1]] = [b.votes[1], b.votes[0]];
        [b.votes[0].index, b.votes[1].index] = [0, 1];
      }),
      expect: /block 1 vote 1 \(.{22}\): vote id not after the previous leaf's .{22}: out of order/,
    },
    {
      desc: "a vote id listed twice",
      api: tampered(/\/block\/id\/2\/votes/, (b) => (b.votes[1].voteId = b.votes[0].voteId)),
      expect: /block 2 vote 1 \(.{22}\): vote id already listed in block 2/,
    },
    {
      desc: "a broken link",
      api: tampered(/\/api\/blocks/, (b) => (b.blocks[2].prev_hash = "ab".repeat(32))),
      expect: /block 2: hash does not match its fields/,
    },
    {
      desc: "a block with a recomputed hash but a wrong link",
      api: tampered(/\/api\/blocks/, (b) => {
        b.blocks[3].prev_hash = b.blocks[1].hash;
        b.blocks[3].hash = blockHash(b.blocks[3]);
      }),
      expect: /block 3: prev_hash does not link to block 2/,
    },
    {
      desc: "a skewed tally",
      api: tampered(/\/api\/tally/, (b) => (b.results[0].count += 1)),
      expect: /tally: "yes" has 4 votes, served 5/,
    },
    {
      desc: "a padded tally row hidden in front of the honest one",
      api: tampered(/\/api\/tally/, (b) => b.results.unshift({ payload: "yes", count: 10 })),
      expect: /tally: "yes" is served in more than one row/,
    },
    {
      desc: "served counts that do not add up to the served total",
      api: tampered(/\/api\/tally/, (b) => b.results.unshift({ payload: "yes", count: 10 })),
      expect: /tally: the served counts add up to 17, but the served total is 7/,
    },
    {
      desc: "a ring member missing from the directory",
      api: tampered(/\/api\/pki\/key\/offset/, (b) => {
        b.keys.pop();
        b.total -= 1;
      }),
      expect: /is not registered/,
    },
    {
      desc: "a head signature from another block",
      api: tampered(/\/api\/blocks/, (b) => {
        b.blocks[2].head_signature = b.blocks[1].head_signature;
      }),
      expect: /block 2: head signature is not the server key's/,
    },
    {
      desc: "a block served without its head signature",
      api: tampered(/\/api\/blocks/, (b) => delete b.blocks[0].head_signature),
      expect: /block 0: no head signature/,
    },
    {
      desc: "another server key",
      api: tampered(/\/api\/server-key/, (b) => (b.key = b.key.replace(/^../, "00"))),
      expect: /status: head signature is not the server key's/,
    },
  ];
  for (const c of cases) {
    await t.step(c.desc, async () => {
      const report = await auditLedger(c.api);
      assert.equal(report.ok, false);
      assert.ok(report.failures.some((f) => c.expect.test(f)), report.failures.join("\n"));
    });
  }
  kv.close();
});

Deno.test("the auditor catches a tag used twice, written straight into KV", async () => {
  const { kv, store, api } = await honestLedger();
  // Replay block 1's first vote into the open block, bypassing the API's tag check.
  const first = (await store.blockVotes(1, 0, 1)).votes[0];
  const open = (await kv.get<OpenRecord>(kvKeys.open())).value!;
  await kv.set(kvKeys.vote(open.height, "AAAAAAAAAAAAAAAAAAAAAA"), first.vote);
  assert.equal((await sealNextBlock(store, 1_700_001_000_000)).length, 1);
  const report = await auditLedger(api);
  assert.equal(report.ok, false);
  assert.ok(
    report.failures.some((f) => /tag [0-9a-f]{64} already voted in block 1/.test(f)),
    report.failures.join("\n"),
  );
  // The block itself is internally consistent: only the tag gives it away.
  assert.ok(!report.failures.some((f) => /Merkle|hash does not match/.test(f)));
  kv.close();
});

Deno.test("a ballot forged in KV before sealing fails its signature check alone", async () => {
  const { kv, store, app, api, voters } = await honestLedger();
  const signer = voters[7];
  const cast = await call(
    app,
    "POST",
    "/api/vote",
    signedVote(signer, ringFor(signer, voters, 3), "no"),
  );
  assert.equal(cast.status, 202);
  await forgeBallot(kv, cast.body.voteId, "yes");
  assert.equal((await sealNextBlock(store, 1_700_001_000_000)).length, 1);
  const report = await auditLedger(api);
  assert.equal(report.ok, false);
  assert.deepEqual(report.voteFailures, [{
    voteId: cast.body.voteId,
    height: 4,
    index: 0,
    reasons: ["invalid signature: the ring equations do not close"],
  }]);
  assert.deepEqual(report.failures, [
    `block 4 vote 0 (${cast.body.voteId}): invalid signature: the ring equations do not close`,
  ]);
  kv.close();
});

Deno.test("chunks checked in parallel and out of order give the same report", async () => {
  const { kv, tampered } = await honestLedger();
  const forged = tampered(/\/block\/id\/[12]\/votes/, (b) => {
    b.votes[1].vote.payload = "forged";
  });
  // Later chunks answer first: the report must still follow chain order.
  const inThread = inThreadChecker();
  let calls = 0;
  const shuffled: VoteChecker = async (votes) => {
    const delay = 40 - 15 * calls++;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, delay)));
    return inThread(votes);
  };
  const reports: AuditReport[] = [];
  for (const opts of [{ parallel: 1 }, { parallel: 8, checker: shuffled }]) {
    reports.push(await auditLedger(forged, opts));
  }
  assert.equal(reports[0].ok, false);
  assert.deepEqual(reports[1], reports[0]);
  assert.deepEqual(reports[0].voteFailures.map((f) => [f.height, f.index]), [[1, 1], [2, 1]]);
  kv.close();
});

Deno.test("a block sealed while the audit runs is audited too, not reported as a tally mismatch", async () => {
  const { kv, store, app, voters } = await honestLedger();
  let sealedDuringAudit = false;
  // A live server: a new vote lands and its block is sealed just as the audit asks for the tally.
  const live = async (input: RequestInfo | URL, init?: RequestInit) => {
    const path = new URL(String(input), "http://x").pathname;
    if (path === "/api/tally" && !sealedDuringAudit) {
      sealedDuringAudit = true;
      const signer = voters[7];
      const vote = signedVote(signer, ringFor(signer, voters, 3, 7), "late");
      assert.equal((await call(app, "POST", "/api/vote", vote)).status, 202);
      assert.equal((await sealNextBlock(store, 1_800_000_000_000)).length, 1);
    }
    return app.request(input as string, init);
  };
  const report = await auditLedger(createApiClient({ fetch: live }));
  assert.ok(sealedDuringAudit, "the chain grew during the audit");
  assert.deepEqual(report.failures, []);
  assert.equal(report.ok, true);
  assert.deepEqual([report.height, report.votes], [4, 8], "the new block is in the audit");
  kv.close();
});

Deno.test("the auditor reports an unreachable server instead of throwing", async () => {
  const refused = () => Promise.reject(new Error("connection refused"));
  const report = await auditLedger(createApiClient({ fetch: refused }));
  assert.equal(report.ok, false);
  assert.deepEqual(report.failures, [
    "audit stopped: GET /api/block/status failed: connection refused",
  ]);
});

Deno.test("tallyOf counts descending, ties by payload", () => {
  assert.deepEqual(tallyOf(["b", "a", "b", "c", "a"]), [
    { payload: "a", count: 2 },
    { payload: "b", count: 2 },
    { payload: "c", count: 1 },
  ]);
});

async function runAudit(url: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", new URL("../../audit.ts", import.meta.url).pathname, url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

Deno.test("deno task audit: exit 0 on an honest server, 1 behind a tampering proxy", async () => {
  const { kv, app } = await honestLedger();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
  const honestUrl = `http://127.0.0.1:${server.addr.port}`;
  // The proxy forwards every request and rewrites one payload in block 3's vote list.
  const proxy = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const res = await fetch(honestUrl + url.pathname + url.search);
    if (!url.pathname.startsWith("/api/block/id/3/votes")) return res;
    const body = await res.json();
    body.votes[1].vote.payload = "tampered";
    return Response.json(body);
  });
  try {
    const honest = await runAudit(honestUrl);
    assert.equal(honest.code, 0, honest.stdout);
    assert.match(honest.stdout, /VERDICT: the record is consistent/);
    assert.match(honest.stdout, /votes verified\s+7/);
    const lying = await runAudit(`http://127.0.0.1:${proxy.addr.port}`);
    assert.equal(lying.code, 1, lying.stdout);
    assert.match(lying.stdout, /VERDICT: INCONSISTENT/);
    assert.match(lying.stdout, /block 3: Merkle root does not match its 2 votes/);
  } finally {
    await proxy.shutdown();
    await server.shutdown();
    kv.close();
  }
});
