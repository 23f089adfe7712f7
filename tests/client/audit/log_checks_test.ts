/**
 * The audit's check of the log (protocol §4.6, §4.8, §4.10) over the real app in memory: the
 * checkpoint is signed by the server key under its origin and its root is made by the audited
 * blocks — a prefix when the chain grew after it was read, read up to when it is beyond the head —
 * and every lie about it fails, alone; the record carries it, cosignatures included, and a record
 * written before it did fails with its own line; the trusted witnesses are counted to a quorum.
 * @module
 */
import assert from "node:assert/strict";
import { createApiClient, readPages, type Transport } from "../../../lib/client/api_client.ts";
import {
  auditLedger,
  type AuditOptions,
  type AuditReport,
} from "../../../lib/client/audit/audit.ts";
import { formatReport } from "../../../lib/client/audit/report_text.ts";
import { recordWriter, writeRecord } from "../../../lib/client/audit/election_record.ts";
import { auditRecord } from "../../../lib/client/audit/election_record_source.ts";
import { derivedOrigin, logLeafHash } from "../../../lib/protocol/block_log.ts";
import { bytesToBase64 } from "../../../lib/protocol/bytes.ts";
import { signCheckpoint } from "../../../lib/protocol/checkpoint.ts";
import { signHead } from "../../../lib/protocol/head.ts";
import { merkleRoot } from "../../../lib/protocol/merkle.ts";
import { formatNote, parseNote } from "../../../lib/protocol/note.ts";
import { createApp } from "../../../server/app.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { kvKeys, type ServerKeyRecord } from "../../../server/store/layout.ts";
import { createStore, type Store } from "../../../server/store/mod.ts";
import { buildLedger } from "../../helpers/ledger_builder.ts";
import { makeVoters, ringFor, signedVote, type TestVoter } from "../../helpers/ledger_fixtures.ts";
import { tamperingTransport } from "../../helpers/tampering_proxy.ts";
import {
  type FindingPattern,
  hasFinding,
  inWords,
  matchesPattern,
} from "../../helpers/audit_findings.ts";
import {
  checkpointOver,
  checkpointTransport,
  cosignatureLine,
  cosignServed,
  makeWitness,
} from "./log_fixtures.ts";

/** Genesis and three blocks (2, 2 and 1 votes) behind the real app, and the server's seed. */
async function smallLedger() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const built = await buildLedger(store, { votes: 5, perBlock: 2, ringSize: 3 });
  const app = createApp({ store });
  const { seed } = (await kv.get<ServerKeyRecord>(kvKeys.serverKey())).value!;
  const api = createApiClient({ fetch: app.request });
  const { key } = await api.serverKey();
  const hashes = (await readPages(api.blocks)).items.map((b) => b.hash);
  const voters = built.map((b) => b.voter);
  return { kv, store, app, api, seed, key, hashes, voters };
}

/** Seals one more block of one vote, cast by a new voter over a ring of `voters`. */
async function sealOneMore(store: Store, voters: TestVoter[], now = 1_800_000_000_000) {
  const [signer] = makeVoters(1);
  await store.registerKey(signer.key);
  const { payload, signature, publicKeys, tag } = signedVote(
    signer,
    ringFor(signer, voters, 3),
    "late",
  );
  await store.submitVote({ payload, signature, publicKeys }, tag);
  assert.equal((await sealNextBlock(store, now)).length, 1);
}

/** A sink keeping the record in memory. */
function memorySink() {
  const parts: string[] = [];
  return {
    write: (text: string) => void parts.push(text),
    restart: () => void (parts.length = 0),
    text: () => parts.join(""),
  };
}

/** `text` as a stream. */
function streamOf(text: string): ReadableStream<Uint8Array> {
  return new Blob([text]).stream();
}

/** The audit through `api`, its reads saved as a record: the report and the record's text. */
async function auditAndSave(api: ReturnType<typeof createApiClient>, opts: AuditOptions = {}) {
  const sink = memorySink();
  const writer = recordWriter(api, sink);
  const report = await auditLedger(writer.source, opts);
  await writer.finish();
  return { report, text: sink.text() };
}

/** The record's lines, parsed, changed by `edit`, written back. */
// deno-lint-ignore no-explicit-any
function edited(text: string, edit: (lines: any[]) => any[] | void): string {
  const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
  return (edit(lines) ?? lines).map((l: unknown) => JSON.stringify(l) + "\n").join("");
}

const summary = (r: AuditReport) => [r.height, r.blocks, r.keys, r.votes, r.tally];

Deno.test("an honest server's checkpoint is signed by its key and made by the audited blocks", async () => {
  const { kv, api, key, hashes } = await smallLedger();
  const report = await auditLedger(api);
  assert.deepEqual(report.failures, []);
  const root = bytesToBase64(merkleRoot(hashes.map(logLeafHash)));
  const served = await api.checkpoint();
  assert.deepEqual(report.checkpoint, {
    origin: derivedOrigin(key),
    size: 4,
    root,
    note: served,
  });
  assert.equal(report.witnesses, null);
  const printed = formatReport("test", report).split("\n");
  assert.ok(
    printed.includes(`  checkpoint        size 4 of log ${derivedOrigin(key)}, root ${root}`),
  );
  kv.close();
});

Deno.test("every lie about the checkpoint fails the audit, alone and named", async (t) => {
  const { kv, app, seed, key, hashes } = await smallLedger();
  const other = crypto.getRandomValues(new Uint8Array(32));
  const origin = derivedOrigin(key);
  const four = merkleRoot(hashes.map(logLeafHash));
  const cases: {
    desc: string;
    note: (served: string) => string | null;
    expect: FindingPattern;
  }[] = [
    {
      desc: "a root over another last block, signed by the server key",
      note: () => checkpointOver(seed, [...hashes.slice(0, 3), "ab".repeat(32)]),
      expect: { kind: "checkpoint-root", size: 4, made: bytesToBase64(four) },
    },
    {
      desc: "the root of four blocks under the size 3, signed by the server key",
      note: () => signCheckpoint({ origin, size: 3, root: four }, seed),
      expect: { kind: "checkpoint-root", size: 3, root: bytesToBase64(four) },
    },
    {
      desc: "the size 0 with the root of four blocks",
      note: () => signCheckpoint({ origin, size: 0, root: four }, seed),
      expect: {
        kind: "checkpoint-root",
        size: 0,
        made: "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
      },
    },
    {
      desc: "signed by another key under the server's origin",
      note: () => signCheckpoint({ origin, size: 4, root: four }, other),
      expect: { kind: "checkpoint-unsigned", key, origin },
    },
    {
      desc: "signed by another key under its own origin",
      note: () => checkpointOver(other, hashes),
      expect: { kind: "checkpoint-unsigned", key },
    },
    {
      desc: "its signature changed",
      note: (served) =>
        served.replace(/ (.)(\S+)\n$/, (_, c, rest) => ` ${c === "A" ? "B" : "A"}${rest}\n`),
      expect: { kind: "checkpoint-unsigned", key, origin },
    },
    {
      desc: "its origin renamed, the signature kept",
      note: (served) => served.replace(origin + "\n", "vote.example.org/log\n"),
      expect: { kind: "checkpoint-unsigned", key, origin: "vote.example.org/log" },
    },
    {
      desc: "the log's line dropped, a witness's kept",
      note: (served) => {
        const text = parseNote(served).text;
        const w = makeWitness("w.example");
        return formatNote({ text, signatures: [cosignatureLine(w, served)] });
      },
      expect: { kind: "checkpoint-unsigned", key, origin },
    },
    {
      desc: "not a note",
      note: () => "ringvote\n4\n",
      expect: { kind: "checkpoint-malformed" },
    },
    {
      desc: "a signed note that is not a checkpoint",
      note: () =>
        formatNote({
          text: `${origin}\n`,
          signatures: parseNote(checkpointOver(seed, hashes)).signatures,
        }),
      expect: { kind: "checkpoint-malformed" },
    },
    {
      desc: "a size with a leading zero",
      note: (served) => served.replace("\n4\n", "\n04\n"),
      expect: { kind: "checkpoint-malformed" },
    },
    {
      desc: "a note of over 100,000 characters",
      note: (served) => served + "x".repeat(100_000),
      expect: { kind: "checkpoint-too-long", max: 100_000 },
    },
    {
      desc: "not served",
      note: () => null,
      expect: { kind: "checkpoint-not-given" },
    },
    {
      desc: "a size beyond the chain, signed, its blocks never served",
      note: () => checkpointOver(seed, [...hashes, "ab".repeat(32)]),
      expect: { kind: "checkpoint-unserved", size: 5, audited: 3, served: 3 },
    },
  ];
  for (const c of cases) {
    await t.step(c.desc, async () => {
      const api = createApiClient({ fetch: checkpointTransport(app.request, c.note) });
      const report = await auditLedger(api);
      assert.equal(report.ok, false);
      assert.equal(report.failures.length, 1, inWords(report));
      assert.ok(matchesPattern(report.failures[0], c.expect), inWords(report));
      assert.equal(report.checkpoint, null);
      assert.deepEqual([report.votes, report.blocks], [5, 4], "the rest was audited");
      assert.match(formatReport("test", report), /^ {2}checkpoint {8}\(not verified\)$/m);
    });
  }
  kv.close();
});

Deno.test("a block sealed after the checkpoint was read: the checkpoint is a prefix of the chain", async () => {
  const { kv, store, app, voters, hashes } = await smallLedger();
  let sealed = false;
  const live: Transport = async (url, init) => {
    const res = await app.request(url, init);
    if (new URL(url, "http://x").pathname === "/api/log/checkpoint" && !sealed) {
      sealed = true;
      await sealOneMore(store, voters);
    }
    return res;
  };
  const report = await auditLedger(createApiClient({ fetch: live }));
  assert.ok(sealed);
  assert.deepEqual(report.failures, []);
  assert.equal(report.height, 4);
  assert.equal(report.checkpoint?.size, 4, "the root of the first 4 of 5 blocks");
  assert.equal(report.checkpoint?.root, bytesToBase64(merkleRoot(hashes.map(logLeafHash))));
  kv.close();
});

/**
 * The ledger after one more block, behind a server whose status and tally are those of before it
 * (a replica behind its log): its checkpoint is one block beyond the audited head. `blocks` edits
 * the blocks listing as served.
 */
async function laggingStatus(
  // deno-lint-ignore no-explicit-any
  blocks: (body: any) => void = () => {},
) {
  const ledger = await smallLedger();
  const { app, store, voters } = ledger;
  const stale = new Map<string, unknown>();
  for (const path of ["/api/block/status", "/api/tally"]) {
    stale.set(path, await (await app.request(path)).json());
  }
  await sealOneMore(store, voters);
  const fetch = tamperingTransport(app.request, (path, body) => {
    if (stale.has(path)) Object.assign(body, stale.get(path));
    if (path === "/api/blocks") blocks(body);
  });
  return { ...ledger, api: createApiClient({ fetch }) };
}

Deno.test("a checkpoint beyond the audited head is read up to, its blocks checked", async (t) => {
  await t.step("the blocks up to it served honestly: pass", async () => {
    const { kv, api } = await laggingStatus();
    const { report, text } = await auditAndSave(api);
    assert.deepEqual(report.failures, []);
    assert.equal(report.height, 3);
    assert.equal(report.checkpoint?.size, 5);
    // Its record holds the block read up to, and audits the same offline.
    const offline = await auditRecord(streamOf(text));
    assert.deepEqual(offline.failures, []);
    assert.equal(offline.checkpoint?.size, 5);
    kv.close();
  });
  await t.step("a block beyond the head signed with another block's signature: fail", async () => {
    const { kv, api } = await laggingStatus((body) => {
      const b = body.blocks.find((b: { height: number }) => b.height === 4);
      if (b) b.head_signature = "00".repeat(64);
    });
    const report = await auditLedger(api);
    assert.deepEqual(report.failures, [
      { kind: "checkpoint-block", height: 4, audited: 3, problem: { is: "signature" } },
    ]);
    kv.close();
  });
  await t.step("a block beyond the head with another hash, re-signed: fail", async () => {
    const { kv, api, seed } = await laggingStatus((body) => {
      const b = body.blocks.find((b: { height: number }) => b.height === 4);
      if (!b) return;
      b.hash = "cd".repeat(32);
      b.head_signature = signHead(seed, b);
    });
    const report = await auditLedger(api);
    assert.deepEqual(report.failures, [
      { kind: "checkpoint-block", height: 4, audited: 3, problem: { is: "hash" } },
    ]);
    kv.close();
  });
});

Deno.test("the record carries the checkpoint it was taken at, cosignatures and all", async () => {
  const { kv, app, api } = await smallLedger();
  const witness = makeWitness("witness.example/a");
  const { timestamp } = await cosignServed(app, witness);
  const { report, text } = await auditAndSave(api);
  assert.deepEqual(report.failures, []);
  const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines[1].kind, "checkpoint");
  assert.equal(lines[1].note, await api.checkpoint());
  assert.match(
    lines[1].note,
    new RegExp(`\n— witness\\.example/a \\S+\n$`),
    "with its cosignature",
  );
  assert.equal(JSON.stringify(lines[1]) + "\n", text.split("\n")[1] + "\n", "its one form");
  // The board's walk writes the same bytes.
  const walked = memorySink();
  await writeRecord(api, walked);
  assert.equal(walked.text(), text);
  // Offline, its witness is counted as from the server.
  const trusted = { witnesses: { keys: [witness.key], quorum: 1 } };
  const offline = await auditRecord(streamOf(text), { trusted });
  assert.deepEqual(offline.failures, []);
  assert.deepEqual(offline.witnesses, {
    quorum: 1,
    findings: [{ vkey: witness.vkey, name: witness.name, cosignedAt: timestamp * 1000 }],
  });
  kv.close();
});

Deno.test("a record without a checkpoint line, written before records carried one, fails with its own line", async () => {
  const { kv, api } = await smallLedger();
  const { report: live, text } = await auditAndSave(api);
  const old = edited(text, (ls) => ls.filter((l) => l.kind !== "checkpoint"));
  const report = await auditRecord(streamOf(old));
  assert.equal(report.failures.length, 1, inWords(report));
  assert.equal(report.failures[0].kind, "checkpoint-not-given");
  assert.deepEqual(summary(report), summary(live), "everything else audited as ever");
  const witness = makeWitness("witness.example/a");
  const trusted = { witnesses: { keys: [witness.key], quorum: 1 } };
  const witnessed = await auditRecord(streamOf(old), { trusted });
  assert.deepEqual(witnessed.failures.map((f) => f.kind), [
    "checkpoint-not-given",
    "witnesses-unchecked",
  ]);
  kv.close();
});

Deno.test("a record's checkpoint changed, moved or doubled fails its audit", async (t) => {
  const { kv, api, seed, hashes } = await smallLedger();
  const { text } = await auditAndSave(api);
  const cases: { desc: string; record: string; expect: FindingPattern }[] = [
    {
      desc: "another root, signed by the server key",
      record: edited(text, (ls) => {
        ls[1].note = checkpointOver(seed, [...hashes.slice(0, 3), "ab".repeat(32)]);
      }),
      expect: { kind: "checkpoint-root", size: 4 },
    },
    {
      desc: "a note that does not verify",
      record: edited(text, (ls) => void (ls[1].note = ls[1].note.replace("\n4\n", "\n3\n"))),
      expect: { kind: "checkpoint-unsigned" },
    },
    {
      desc: "moved after the keys",
      record: edited(text, (ls) => void ls.splice(3, 0, ls.splice(1, 1)[0])),
      expect: { kind: "stopped" },
    },
    {
      desc: "doubled",
      record: edited(text, (ls) => void ls.splice(1, 0, ls[1])),
      expect: { kind: "stopped" },
    },
    {
      desc: "an empty note",
      record: edited(text, (ls) => void (ls[1].note = "")),
      expect: { kind: "stopped" },
    },
  ];
  for (const c of cases) {
    await t.step(c.desc, async () => {
      const report = await auditRecord(streamOf(c.record));
      assert.equal(report.ok, false);
      assert.ok(hasFinding(report, c.expect), inWords(report));
    });
  }
  kv.close();
});

Deno.test("the trusted witnesses are counted to a quorum on the audited checkpoint", async (t) => {
  const { kv, app, api, store, voters } = await smallLedger();
  const [a, b] = [makeWitness("witness.example/a"), makeWitness("witness.example/b")];
  const { timestamp } = await cosignServed(app, a);
  const cosigned = await api.checkpoint();
  const audit = (keys: typeof a[], quorum: number, client = api) =>
    auditLedger(client, { trusted: { witnesses: { keys: keys.map((w) => w.key), quorum } } });

  await t.step("its one cosigner, quorum 1: pass, with when it cosigned", async () => {
    const report = await audit([a], 1);
    assert.deepEqual(report.failures, []);
    assert.deepEqual(report.witnesses?.findings, [
      { vkey: a.vkey, name: a.name, cosignedAt: timestamp * 1000 },
    ]);
    const printed = formatReport("test", report);
    assert.ok(
      printed.includes(
        `  witness           ${a.vkey}: cosigned at ${new Date(timestamp * 1000).toISOString()}`,
      ),
      printed,
    );
    assert.match(printed, /^ {2}witnesses {9}1 of 1 cosigned, 1 needed$/m);
  });
  await t.step("two witnesses, one cosigned, quorum 2: fail", async () => {
    const report = await audit([a, b], 2);
    assert.deepEqual(report.failures, [
      { kind: "witness-quorum", count: 1, trusted: 2, size: 4, quorum: 2 },
    ]);
    assert.equal(report.witnesses?.findings[1].cosignedAt, null);
    assert.match(
      formatReport("test", report),
      new RegExp(`^  witness {11}\\S+: no valid cosignature$`, "m"),
    );
  });
  await t.step("two witnesses, quorum 1: pass", async () => {
    assert.deepEqual((await audit([a, b], 1)).failures, []);
  });
  await t.step("another witness only: fail", async () => {
    assert.deepEqual((await audit([b], 1)).failures, [
      { kind: "witness-quorum", count: 0, trusted: 1, size: 4, quorum: 1 },
    ]);
  });
  await t.step("a forged line under the witness's name and key ID does not count", async () => {
    const forged = createApiClient({
      fetch: checkpointTransport(app.request, (note) => {
        const parsed = parseNote(note);
        const line = cosignatureLine(a, note);
        line.signature[20] ^= 1;
        // The server's line for `a` is replaced by the forged one.
        const others = parsed.signatures.filter((s) => s.name !== a.name);
        return formatNote({ text: parsed.text, signatures: [...others, line] });
      }),
    });
    assert.deepEqual((await audit([a], 1, forged)).failures, [
      { kind: "witness-quorum", count: 0, trusted: 1, size: 4, quorum: 1 },
    ]);
  });
  await t.step(
    "a cosignature of an older checkpoint, moved onto the new one, does not count",
    async () => {
      const old = await api.checkpoint();
      const moved = parseNote(old).signatures.find((s) => s.name === a.name)!;
      await sealOneMore(store, voters);
      const replayed = createApiClient({
        fetch: checkpointTransport(app.request, (note) => {
          const parsed = parseNote(note);
          return formatNote({ text: parsed.text, signatures: [...parsed.signatures, moved] });
        }),
      });
      const report = await audit([a], 1, replayed);
      assert.deepEqual(report.failures, [
        { kind: "witness-quorum", count: 0, trusted: 1, size: 5, quorum: 1 },
      ]);
    },
  );
  await t.step(
    "an older cosigned checkpoint, a prefix of the chain, vouches for no block above it",
    async () => {
      // Block 4 was sealed by the step before: the cosigned checkpoint holds blocks 0–3.
      const stale = createApiClient({ fetch: checkpointTransport(app.request, () => cosigned) });
      const report = await audit([a], 1, stale);
      assert.equal(report.checkpoint?.size, 4);
      assert.deepEqual(report.failures, [{ kind: "witnesses-prefix", size: 4, height: 4 }]);
      assert.equal(report.witnesses?.findings[0].cosignedAt, timestamp * 1000);
      // Without witnesses to trust, a prefix checkpoint is what protocol §4.6 allows.
      assert.deepEqual((await auditLedger(stale)).failures, []);
    },
  );
  await t.step("a checkpoint that does not verify counts no witness", async () => {
    const lying = createApiClient({
      fetch: checkpointTransport(app.request, (note) => note.replace(/\n5\n/, "\n4\n")),
    });
    const report = await audit([a], 1, lying);
    assert.equal(report.failures.length, 2, inWords(report));
    assert.equal(report.failures[1].kind, "witnesses-unchecked");
  });
  kv.close();
});
