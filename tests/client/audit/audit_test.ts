/**
 * The audit (lib/client/audit/) over in-memory KV: an honest ledger passes with its tally
 * recomputed; every kind of tampering, a reused tag and a forged ballot fail, whatever the order.
 * @module
 */
import assert from "node:assert/strict";
import { bytesToHex } from "../../../lib/protocol/bytes.ts";
import { blockHash } from "../../../lib/protocol/chain.ts";
import { signHead } from "../../../lib/protocol/head.ts";
import { merkleRoot, voteLeaf } from "../../../lib/protocol/merkle.ts";
import type { BlockRecord, SignedHead, TallyEntry } from "../../../lib/protocol/schemas.ts";
import {
  type ApiClient,
  type BlockVoteEntry,
  createApiClient,
  readPages,
} from "../../../lib/client/api_client.ts";
import { AUDIT_PHASES, auditLedger, type AuditReport } from "../../../lib/client/audit/audit.ts";
import { findingText } from "../../../lib/client/audit/report_text.ts";
import { inThreadChecker, type VoteChecker } from "../../../lib/client/audit/vote_checks.ts";
import { RING_OPEN } from "../../../lib/protocol/ring_signature.ts";
import { rankTally, tallyOf } from "../../../lib/protocol/tally.ts";
import { createApp } from "../../../server/app.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { kvKeys, type OpenRecord, type ServerKeyRecord } from "../../../server/store/layout.ts";
import { createStore } from "../../../server/store/mod.ts";
import { forgeBallot } from "../../helpers/forged_ballot.ts";
import { inMemoryApp } from "../../helpers/in_memory_app.ts";
import { buildLedger } from "../../helpers/ledger_builder.ts";
import { call, makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";
import { tamperingTransport } from "../../helpers/tampering_proxy.ts";
import {
  type FindingPattern,
  findingsLike,
  hasFinding,
  inWords,
} from "../../helpers/audit_findings.ts";
import { checkpointOver, checkpointTransport } from "./log_fixtures.ts";

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
  // Each case names the findings, any one of which shows the tampering.
  const cases: { desc: string; api: ApiClient; expect: FindingPattern[] }[] = [
    {
      desc: "a rewritten payload",
      api: tampered(/\/block\/id\/2\/votes/, (b) => (b.votes[0].vote.payload = "no")),
      expect: [{ kind: "merkle-root", height: 2 }, { kind: "invalid-signature" }],
    },
    {
      desc: "a dropped vote",
      api: tampered(/\/block\/id\/1\/votes/, (b) => b.votes.splice(1, 1)),
      expect: [
        { kind: "leaf-index", expected: 1, vote: { height: 1, index: 2 } },
        { kind: "merkle-root", height: 1 },
      ],
    },
    {
      desc: "a reordered block",
      api: tampered(/\/block\/id\/1\/votes/, (b) => {
        [b.votes[0].vote, b.votes[1].vote] = [b.votes[1].vote, b.votes[0].vote];
      }),
      expect: [{ kind: "merkle-root", height: 1, votes: 3 }],
    },
    {
      desc: "a block listed out of vote-id order",
      api: tampered(/\/block\/id\/1\/votes/, (b) => {
        [b.votes[0], b.votes[1]] = [b.votes[1], b.votes[0]];
        [b.votes[0].index, b.votes[1].index] = [0, 1];
      }),
      expect: [{ kind: "vote-order", vote: { height: 1, index: 1 } }],
    },
    {
      desc: "a vote id listed twice",
      api: tampered(/\/block\/id\/2\/votes/, (b) => (b.votes[1].voteId = b.votes[0].voteId)),
      expect: [{ kind: "vote-id-repeated", height: 2, vote: { height: 2, index: 1 } }],
    },
    {
      desc: "a broken link",
      api: tampered(/\/api\/blocks/, (b) => (b.blocks[2].prev_hash = "ab".repeat(32))),
      expect: [{ kind: "block-hash", height: 2 }],
    },
    {
      desc: "a block with a recomputed hash but a wrong link",
      api: tampered(/\/api\/blocks/, (b) => {
        b.blocks[3].prev_hash = b.blocks[1].hash;
        b.blocks[3].hash = blockHash(b.blocks[3]);
      }),
      expect: [{ kind: "block-link", height: 3 }],
    },
    {
      desc: "a skewed tally",
      api: tampered(/\/api\/tally/, (b) => (b.results[0].count += 1)),
      expect: [{ kind: "tally-count", payload: "yes", count: 4, served: 5 }],
    },
    {
      desc: "a padded tally row hidden in front of the honest one",
      api: tampered(/\/api\/tally/, (b) => b.results.unshift({ payload: "yes", count: 10 })),
      expect: [{ kind: "tally-row-repeated", payload: "yes" }],
    },
    {
      desc: "served counts that do not add up to the served total",
      api: tampered(/\/api\/tally/, (b) => b.results.unshift({ payload: "yes", count: 10 })),
      expect: [{ kind: "tally-sum", sum: 17, total: 7 }],
    },
    {
      desc: "a ring member missing from the directory",
      api: tampered(/\/api\/pki\/key\/offset/, (b) => {
        b.keys.pop();
        b.total -= 1;
      }),
      expect: [{ kind: "unregistered-member" }],
    },
    {
      desc: "a head signature from another block",
      api: tampered(/\/api\/blocks/, (b) => {
        b.blocks[2].head_signature = b.blocks[1].head_signature;
      }),
      expect: [{ kind: "head-signature", height: 2 }],
    },
    {
      desc: "a block served without its head signature",
      api: tampered(/\/api\/blocks/, (b) => delete b.blocks[0].head_signature),
      expect: [{ kind: "head-unsigned", height: 0 }],
    },
    {
      desc: "another server key",
      api: tampered(/\/api\/server-key/, (b) => (b.key = b.key.replace(/^../, "00"))),
      expect: [{ kind: "head-signature", height: null }],
    },
  ];
  for (const c of cases) {
    await t.step(c.desc, async () => {
      const report = await auditLedger(c.api);
      assert.equal(report.ok, false);
      assert.ok(hasFinding(report, ...c.expect), inWords(report));
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
  assert.ok(hasFinding(report, { kind: "duplicate-tag", height: 1 }), inWords(report));
  // The block itself is internally consistent: only the tag gives it away.
  assert.ok(!hasFinding(report, { kind: "merkle-root" }, { kind: "block-hash" }), inWords(report));
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
  const ringOpen = { kind: "invalid-signature", reason: RING_OPEN } as const;
  const voteId = cast.body.voteId;
  assert.deepEqual(report.voteFailures, [{ voteId, height: 4, index: 0, problems: [ringOpen] }]);
  assert.deepEqual(report.failures, [
    { ...ringOpen, vote: { height: 4, index: 0, position: 0, voteId } },
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
  assert.equal(report.failures.length, 1);
  const [stopped] = report.failures;
  assert.ok(stopped.kind === "stopped" && stopped.reason.includes("connection refused"));
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
    args: ["run", "--allow-net", new URL("../../../audit.ts", import.meta.url).pathname, url],
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
    const merkle = findingText({ kind: "merkle-root", height: 3, votes: 2 });
    assert.ok(lying.stdout.includes(`\n  - ${merkle}\n`), lying.stdout);
  } finally {
    await proxy.shutdown();
    await server.shutdown();
    kv.close();
  }
});

// ---- Counting what is read, and the heads the auditor trusts (issue 19) ----

/**
 * A ledger of three sealed blocks (6, 6 and 2 votes) built through the store, its honest client,
 * every block as served, every vote by height, and the server's real head-signing seed as stored
 * under `["cfg", "server-key"]` (server/head_signer.ts): what a lying server signs with.
 */
async function sixVoteLedger() {
  const { kv, store, app, api } = await inMemoryApp();
  await buildLedger(store, { votes: 14, perBlock: 6, ringSize: 4 });
  const { seed } = (await kv.get<ServerKeyRecord>(kvKeys.serverKey())).value!;
  const blocks = (await readPages(api.blocks)).items;
  const votes = new Map<number, BlockVoteEntry[]>();
  for (const b of blocks.slice(1)) {
    votes.set(b.height, (await readPages(api.blockVotes(b.height))).items);
  }
  return { kv, app, api, seed, blocks, votes };
}

type Ledger6 = Awaited<ReturnType<typeof sixVoteLedger>>;

/**
 * A server that hides leaf `drop` of block `height`: its listing serves the other votes, re-indexed,
 * with `total` (default: the votes served); the block's Merkle root is recomputed over them, its
 * size `kept` or lowered by one, its hash recomputed, every later block re-linked, and every head
 * from that block up, the status's too, re-signed with the server's real key, and so is the log's
 * checkpoint over the forged chain (unless `log` is "honest": the log then tells the truth). With
 * `tally`, the served tally no longer counts the hidden vote either: the lie is then consistent
 * throughout.
 */
function hidingServer(
  ledger: Ledger6,
  { height, drop, size, total, tally = false, log = "forged" }: {
    height: number;
    drop: number;
    size: "kept" | "lowered";
    total?: number;
    tally?: boolean;
    log?: "forged" | "honest";
  },
): ApiClient {
  const hidden = ledger.votes.get(height)![drop];
  const served = ledger.votes.get(height)!.filter((v) => v !== hidden)
    .map((v, index) => ({ ...v, index }));
  const forged = new Map<number, BlockRecord>();
  for (const honest of ledger.blocks.slice(height)) {
    const b = { ...honest };
    if (b.height === height) {
      b.merkle_root = bytesToHex(merkleRoot(served.map((v) => voteLeaf(v.vote))));
      if (size === "lowered") b.size -= 1;
    } else b.prev_hash = forged.get(b.height - 1)!.hash;
    b.hash = blockHash(b);
    b.head_signature = signHead(ledger.seed, b);
    forged.set(b.height, b);
  }
  const listing = `/api/block/id/${height}/votes`;
  const hashes = ledger.blocks.map((b) => forged.get(b.height)?.hash ?? b.hash);
  const checkpoint = checkpointOver(ledger.seed, hashes);
  const lies = tamperingTransport(ledger.app.request, (path, body) => {
    if (path === "/api/blocks") {
      body.blocks = body.blocks.map((b: BlockRecord) => forged.get(b.height) ?? b);
    } else if (path === "/api/block/status") {
      const head = forged.get(body.height);
      if (head) Object.assign(body, { hash: head.hash, head_signature: head.head_signature });
    } else if (path === listing) {
      body.votes = served;
      body.total = total ?? served.length;
    } else if (path === "/api/tally" && tally) {
      const row = body.results.find((r: TallyEntry) => r.payload === hidden.vote.payload);
      row.count -= 1;
      body.total -= 1;
      body.results = rankTally(
        new Map(body.results.map((r: TallyEntry) => [r.payload, r.count])),
      );
    }
  });
  return createApiClient({
    fetch: log === "honest" ? lies : checkpointTransport(lies, () => checkpoint),
  });
}

Deno.test("a block serving 5 of its 6 votes under its own size fails: the audit counts", async (t) => {
  const ledger = await sixVoteLedger();
  for (const total of [6, 5]) {
    await t.step(`root recomputed, later blocks re-signed, listing total ${total}`, async () => {
      const lying = hidingServer(ledger, { height: 2, drop: 2, size: "kept", total, tally: true });
      const report = await auditLedger(lying);
      assert.equal(report.ok, false);
      assert.ok(
        hasFinding(report, { kind: "block-size", height: 2, size: 6, read: 5 }),
        inWords(report),
      );
      // Nothing else gives it away: every hash, link, root, head signature and the checkpoint.
      const others = report.failures.filter((f) =>
        !(f.kind === "block-size" || f.kind === "listing-total")
      );
      assert.deepEqual(others, []);
      assert.deepEqual(
        findingsLike(report, { kind: "listing-total" }),
        total === 6 ? [] : [{ kind: "listing-total", height: 2, size: 6, total: 5 }],
      );
    });
  }
  ledger.kv.close();
});

Deno.test("a block shrunk to 5 of its 6 votes and re-signed fails against a remembered head", async () => {
  const ledger = await sixVoteLedger();
  const remembered: SignedHead[] = ledger.blocks.map(({ height, hash, head_signature }) => ({
    height,
    hash,
    head_signature: head_signature!,
  }));
  // The served tally still counts the hidden vote: the recount catches it.
  const halfLie = hidingServer(ledger, { height: 2, drop: 2, size: "lowered" });
  const byTally = await auditLedger(halfLie);
  assert.equal(byTally.failures.length, 2, inWords(byTally));
  assert.deepEqual(byTally.failures[0], { kind: "tally-total", total: 14, votes: 13 });
  assert.equal(byTally.failures[1].kind, "tally-count");
  // The whole lie: size, root, hashes, links, heads and tally agree. Only a head the auditor
  // trusts from before can tell, and it does: both blocks from the shrunk one up differ from it.
  const wholeLie = hidingServer(ledger, { height: 2, drop: 2, size: "lowered", tally: true });
  assert.deepEqual((await auditLedger(wholeLie)).failures, [], "consistent without an anchor");
  // Unless the log was left alone: its checkpoint, signed before the rewrite, is a head too.
  const logKept = hidingServer(ledger, {
    height: 2,
    drop: 2,
    size: "lowered",
    tally: true,
    log: "honest",
  });
  const byLog = await auditLedger(logKept);
  assert.equal(byLog.failures.length, 1, inWords(byLog));
  assert.ok(hasFinding(byLog, { kind: "checkpoint-root", size: 4 }), inWords(byLog));
  const anchored = await auditLedger(wholeLie, { trusted: { heads: remembered } });
  assert.equal(anchored.ok, false);
  const forged = (await readPages(wholeLie.blocks)).items;
  assert.deepEqual(
    anchored.failures,
    [2, 3].map((h) => ({
      kind: "remembered-hash",
      height: h,
      hash: forged[h].hash,
      remembered: remembered[h].hash,
      how: "fork",
    })),
  );
  ledger.kv.close();
});

Deno.test("remembered heads above the chain or under another key fail the audit", async (t) => {
  const ledger = await sixVoteLedger();
  const { key } = await ledger.api.serverKey();
  const head = ({ height, hash, head_signature }: BlockRecord): SignedHead => ({
    height,
    hash,
    head_signature: head_signature!,
  });
  const heads = ledger.blocks.map(head);
  await t.step("every remembered head on the chain: pass", async () => {
    const report = await auditLedger(ledger.api, { trusted: { key, heads } });
    assert.deepEqual(report.failures, []);
    assert.equal(report.serverKey, key);
    assert.equal(report.keyPinned, true);
  });
  await t.step("a head above the audited height", async () => {
    const above = {
      height: 7,
      hash: "ab".repeat(32),
      head_signature: signHead(ledger.seed, { height: 7, hash: "ab".repeat(32) }),
    };
    const report = await auditLedger(ledger.api, { trusted: { key, heads: [...heads, above] } });
    assert.equal(report.ok, false);
    assert.deepEqual(report.failures, [{ kind: "remembered-above", height: 7, audited: 3 }]);
  });
  await t.step("heads under another key", async () => {
    const other = "11".repeat(32);
    const report = await auditLedger(ledger.api, { trusted: { key: other, heads } });
    assert.equal(report.ok, false);
    assert.deepEqual(report.failures, [
      { kind: "server-key", served: key, trusted: other },
      { kind: "remembered-key", count: 4, key: other, served: key },
    ]);
  });
  ledger.kv.close();
});

Deno.test("a listing whose total lies fails once per block, and a short page fails", async (t) => {
  const ledger = await sixVoteLedger();
  const { app } = ledger;
  const lie = (edit: (path: string, body: { votes: unknown[]; total: number }) => void) =>
    createApiClient({ fetch: tamperingTransport(app.request, edit) });
  for (const delta of [+1, -1]) {
    await t.step(`total ${delta > 0 ? "larger" : "smaller"} than the block's size`, async () => {
      const report = await auditLedger(lie((path, body) => {
        if (path === "/api/block/id/1/votes") body.total += delta;
      }));
      assert.deepEqual(report.failures, [
        { kind: "listing-total", height: 1, size: 6, total: 6 + delta },
      ]);
    });
  }
  await t.step("a short page", async () => {
    const report = await auditLedger(lie((path, body) => {
      if (path === "/api/block/id/3/votes") body.votes.pop();
    }));
    assert.equal(report.ok, false);
    assert.ok(hasFinding(report, { kind: "block-size", height: 3, size: 2, read: 1 }));
  });
  await t.step("a missing page", async () => {
    const report = await auditLedger(lie((path, body) => {
      if (path === "/api/block/id/3/votes") body.votes = [];
    }));
    assert.ok(hasFinding(report, { kind: "block-size", height: 3, size: 2, read: 0 }));
  });
  ledger.kv.close();
});

/** `work`, or a rejection naming the bound when it is still running after `ms`. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("paging ends when a block's size and its listing's total lie", async () => {
  const ledger = await sixVoteLedger();
  const huge = 100_000_000;
  const forged = new Map<number, BlockRecord>();
  for (const honest of ledger.blocks.slice(1)) {
    const b = { ...honest };
    if (b.height === 1) b.size = huge;
    else b.prev_hash = forged.get(b.height - 1)!.hash;
    b.hash = blockHash(b);
    b.head_signature = signHead(ledger.seed, b);
    forged.set(b.height, b);
  }
  let stopped = false;
  const lying = createApiClient({
    fetch: tamperingTransport(ledger.app.request, (path, body) => {
      // A hung audit is ended after the bound, so it does not run on after the test.
      if (stopped) throw new Error("the test gave up");
      if (path === "/api/blocks") {
        body.blocks = body.blocks.map((b: BlockRecord) => forged.get(b.height) ?? b);
      } else if (path === "/api/block/status") {
        Object.assign(body, {
          hash: forged.get(3)!.hash,
          head_signature: forged.get(3)!.head_signature,
        });
      } else if (path.startsWith("/api/block/id/1/votes")) body.total = huge;
    }),
  });
  try {
    const report = await within(10_000, auditLedger(lying));
    assert.ok(
      hasFinding(report, { kind: "block-size", height: 1, size: huge, read: 6 }),
      inWords(report),
    );
  } finally {
    stopped = true;
    ledger.kv.close();
  }
});

Deno.test("a block of two pages: a lying total is reported once, a short page ends the listing", async (t) => {
  const { kv, store, app } = await inMemoryApp();
  await buildLedger(store, { votes: 103, perBlock: 103, ringSize: 2 });
  const lie = (edit: (path: string, body: { votes: unknown[]; total: number }) => void) =>
    createApiClient({ fetch: tamperingTransport(app.request, edit) });
  await t.step("the same wrong total on both pages", async () => {
    const report = await auditLedger(lie((path, body) => {
      if (path === "/api/block/id/1/votes") body.total = 110;
    }));
    assert.deepEqual(report.failures, [
      { kind: "listing-total", height: 1, size: 103, total: 110 },
    ]);
  });
  await t.step("a first page of 99 votes: the second page is not counted", async () => {
    const report = await auditLedger(lie((path, body) => {
      if (path === "/api/block/id/1/votes" && body.votes.length === 100) body.votes.pop();
    }));
    assert.ok(
      hasFinding(report, { kind: "block-size", height: 1, size: 103, read: 99 }),
      inWords(report),
    );
    assert.equal(report.votes, 99);
  });
  kv.close();
});
