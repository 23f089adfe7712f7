/**
 * The election record (protocol §4.8): saved from what the audit reads, it audits clean offline,
 * byte for byte the same each time; every change fails the audit naming what failed; `--key` pins
 * its key; the example of §4.8 audits clean.
 * @module
 */
import assert from "node:assert/strict";
import { createApiClient } from "../../../lib/client/api_client.ts";
import {
  auditLedger,
  type AuditOptions,
  type AuditReport,
} from "../../../lib/client/audit/audit.ts";
import {
  RECORD_KIND,
  recordWriter,
  writeRecord,
} from "../../../lib/client/audit/election_record.ts";
import { auditRecord } from "../../../lib/client/audit/election_record_source.ts";
import { serverPublicKey } from "../../../lib/protocol/head.ts";
import { createApp } from "../../../server/app.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore } from "../../../server/store/mod.ts";
import { buildLedger } from "../../helpers/ledger_builder.ts";
import { makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";
import { type FindingPattern, hasFinding, inWords } from "../../helpers/audit_findings.ts";

/** A sink keeping the record in memory. */
function memorySink() {
  const parts: string[] = [];
  return {
    write: (text: string) => void parts.push(text),
    restart: () => void (parts.length = 0),
    text: () => parts.join(""),
  };
}

/** `text` as a stream of `size`-byte chunks, cut anywhere, even inside a UTF-8 character. */
function chunked(text: string, size = 777): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at += size));
    },
  });
}

const auditText = (text: string, opts: AuditOptions = {}) => auditRecord(chunked(text), opts);

/** The audit of a server, teeing what it reads into a record. */
async function saveThroughAudit(api: ReturnType<typeof createApiClient>) {
  const sink = memorySink();
  const writer = recordWriter(api, sink);
  const report = await auditLedger(writer.source);
  await writer.finish();
  return { report, text: sink.text() };
}

/** Three sealed blocks (3, 3 and 1 votes, rings of 3, 7 keys) behind the real app, in memory. */
async function honestLedger() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  await buildLedger(store, {
    votes: 7,
    perBlock: 3,
    ringSize: 3,
    payloads: ["yes", "no", "«ja» ✓"],
  });
  return { kv, api: createApiClient({ fetch: createApp({ store }).request }) };
}

// deno-lint-ignore no-explicit-any
type Line = any;

/** `text` with its lines parsed, changed by `edit` and written back (field order kept). */
function edited(text: string, edit: (lines: Line[]) => Line[] | void): string {
  const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
  return (edit(lines) ?? lines).map((l: Line) => JSON.stringify(l) + "\n").join("");
}

/** The number (1-based) of the first line of `text` matching `test`. */
function lineOf(text: string, test: (line: Line) => boolean): number {
  return text.trimEnd().split("\n").findIndex((l) => test(JSON.parse(l))) + 1;
}

const votesOf = (lines: Line[], height: number) =>
  lines.filter((l) => l.kind === "vote" && l.height === height);

Deno.test("a record saved from an honest server audits clean offline, with the same report", async () => {
  const { kv, api } = await honestLedger();
  const { report: live, text } = await saveThroughAudit(api);
  assert.equal(live.ok, true, inWords(live));
  const offline = await auditText(text);
  assert.deepEqual(offline.failures, []);
  assert.equal(offline.ok, true);
  const summary = (r: AuditReport) => [r.serverKey, r.height, r.blocks, r.keys, r.votes, r.tally];
  assert.deepEqual(summary(offline), summary(live));
  const kinds = text.trimEnd().split("\n").map((l) => JSON.parse(l).kind);
  assert.deepEqual(kinds, [
    RECORD_KIND,
    "checkpoint",
    ...Array(7).fill("key"),
    ...Array(4).fill("block"),
    ...Array(7).fill("vote"),
    "tally",
    "end",
  ]);
  assert.ok(text.endsWith('{"kind":"end","keys":7,"blocks":4,"votes":7}\n'));
  kv.close();
});

Deno.test("two saves of one chain are byte-identical, the board's walk too", async () => {
  const { kv, api } = await honestLedger();
  const first = (await saveThroughAudit(api)).text;
  const second = (await saveThroughAudit(api)).text;
  assert.equal(second, first);
  const walked = memorySink();
  const counts = await writeRecord(api, walked);
  assert.equal(walked.text(), first);
  assert.deepEqual(counts, { keys: 7, blocks: 4, votes: 7, height: 3 });
  // Non-ASCII payloads are written as themselves, in UTF-8.
  assert.match(first, /"payload":"«ja» ✓"/);
  kv.close();
});

Deno.test("a block sealed while saving starts the record again: it holds the last run only", async () => {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const built = await buildLedger(store, { votes: 4, perBlock: 2, ringSize: 3 });
  const app = createApp({ store });
  let grew = false;
  // A live server: a vote lands and its block is sealed just as the first run asks for the tally.
  const live = async (input: string, init?: RequestInit) => {
    if (new URL(input, "http://x").pathname === "/api/tally" && !grew) {
      grew = true;
      const [signer] = makeVoters(1);
      await store.registerKey(signer.key);
      const vote = signedVote(signer, ringFor(signer, built.map((b) => b.voter), 3), "late");
      const { payload, signature, publicKeys, tag } = vote;
      await store.submitVote({ payload, signature, publicKeys }, tag);
      await sealNextBlock(store, 1_800_000_000_000);
    }
    return app.request(input, init);
  };
  const { report, text } = await saveThroughAudit(createApiClient({ fetch: live }));
  assert.ok(grew, "the chain grew during the audit");
  assert.equal(report.ok, true, inWords(report));
  assert.equal(text.split(RECORD_KIND).length, 2, "one header: the first run's lines are gone");
  const offline = await auditText(text);
  assert.deepEqual(offline.failures, []);
  assert.deepEqual([offline.height, offline.keys, offline.votes], [3, 5, 5]);
  kv.close();
});

Deno.test("every change to a record fails its audit, naming what failed", async (t) => {
  const { kv, api } = await honestLedger();
  const { text } = await saveThroughAudit(api);
  const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
  const [v1, v2, v3] = [1, 2, 3].map((h) => votesOf(lines, h));
  const other = serverPublicKey(crypto.getRandomValues(new Uint8Array(32)));
  // `only`: the expected finding is the one failure (a cause reported once).
  const cases: {
    desc: string;
    record: string;
    expect: FindingPattern;
    voteId?: string;
    only?: boolean;
  }[] = [
    {
      desc: "a payload changed",
      record: edited(text, (ls) => void (votesOf(ls, 2)[1].payload = "maybe")),
      expect: {
        kind: "invalid-signature",
        vote: { height: 2, index: 1, voteId: v2[1].voteId },
      },
      voteId: v2[1].voteId,
    },
    {
      desc: "a vote removed",
      record: edited(text, (ls) => ls.filter((l) => l.voteId !== v1[0].voteId)),
      expect: { kind: "block-size", height: 1, size: 3, read: 2 },
    },
    {
      desc: "a vote added",
      record: edited(text, (ls) => {
        ls.splice(ls.indexOf(votesOf(ls, 3)[0]) + 1, 0, {
          ...v3[0],
          index: 1,
          voteId: "z".repeat(22),
        });
      }),
      expect: { kind: "duplicate-tag", vote: { height: 3, index: 1, voteId: "z".repeat(22) } },
      voteId: "z".repeat(22),
    },
    {
      desc: "a head signature changed",
      record: edited(text, (ls) => {
        const block = ls.find((l) => l.kind === "block" && l.height === 2);
        block.head_signature = block.head_signature.replace(
          /^./,
          (c: string) => c === "0" ? "1" : "0",
        );
      }),
      expect: { kind: "head-signature", height: 2 },
    },
    {
      desc: "the header's timestamp changed",
      record: edited(text, (ls) => void (ls[0].timestamp += 1)),
      expect: { kind: "status-timestamp", height: 3 },
    },
    {
      desc: "the header's head signature changed",
      record: edited(text, (ls) => {
        ls[0].head_signature = ls[0].head_signature.replace(
          /.$/,
          (c: string) => c === "0" ? "1" : "0",
        );
      }),
      expect: { kind: "head-signature", height: null },
      only: true,
    },
    {
      desc: "the key swapped",
      record: edited(text, (ls) => void (ls[0].key = other)),
      expect: { kind: "head-signature", height: 0, key: other },
    },
    {
      desc: "a block removed",
      record: edited(text, (ls) => ls.filter((l) => !(l.kind === "block" && l.height === 2))),
      expect: { kind: "chain-short", last: 2, height: 3 },
    },
    {
      desc: "the tally changed",
      record: edited(text, (ls) => void (ls.at(-2).results[0].count += 1)),
      expect: { kind: "tally-sum", sum: 8, total: 7 },
    },
    {
      desc: "the tally's rows out of count order",
      record: edited(text, (ls) => void ls.at(-2).results.reverse()),
      expect: { kind: "tally-order" },
    },
    {
      desc: "the tally's tied rows out of payload order",
      record: edited(text, (ls) => {
        const rows = ls.at(-2).results;
        assert.deepEqual(rows.map((r: Line) => r.count), [3, 2, 2]);
        [rows[1], rows[2]] = [rows[2], rows[1]];
      }),
      expect: { kind: "tally-tie-order", first: "«ja» ✓", second: "no", count: 2 },
    },
    {
      desc: "a vote line truncated",
      record: (() => {
        const n = lineOf(text, (l) => l.voteId === v2[0].voteId);
        return text.split("\n").map((l, i) => (i === n - 1 ? l.slice(0, 100) : l)).join("\n");
      })(),
      expect: { kind: "stopped" },
    },
    {
      desc: "the file cut inside its last line",
      record: text.slice(0, -10),
      expect: { kind: "record-unreadable" },
    },
    {
      desc: "the end line missing",
      record: text.slice(0, text.lastIndexOf("{")),
      expect: { kind: "record-unreadable" },
    },
    {
      desc: "the end line's counts changed",
      record: edited(text, (ls) => void (ls.at(-1).votes = 6)),
      expect: {
        kind: "record-end-counts",
        line: 22,
        end: { keys: 7, blocks: 4, votes: 6 },
        held: { keys: 7, blocks: 4, votes: 7 },
      },
    },
    {
      desc: "a vote moved after a later block's votes",
      record: edited(text, (ls) => {
        const moved = ls.splice(ls.indexOf(votesOf(ls, 1)[2]), 1)[0];
        ls.splice(ls.indexOf(votesOf(ls, 3)[0]), 0, moved);
      }),
      expect: { kind: "record-misplaced-vote", line: 19, voteId: v1[2].voteId, height: 1 },
    },
    {
      desc: "a line after the end line",
      record: text + JSON.stringify(lines[2]) + "\n",
      expect: { kind: "record-unreadable" },
    },
    {
      desc: "a space in a line",
      record: text.replace('"kind":"tally",', '"kind":"tally", '),
      expect: { kind: "stopped" },
    },
    {
      desc: "a file that is not a record",
      record: '{"kind":"ringvote/v1/fork-evidence","key":"00"}\n',
      expect: { kind: "stopped" },
    },
    { desc: "an empty file", record: "", expect: { kind: "stopped" } },
  ];
  for (const c of cases) {
    await t.step(c.desc, async () => {
      assert.notEqual(c.record, text);
      const report = await auditText(c.record);
      assert.equal(report.ok, false);
      assert.ok(hasFinding(report, c.expect), inWords(report));
      if (c.voteId) assert.ok(report.voteFailures.some((f) => f.voteId === c.voteId));
      if (c.only) assert.equal(report.failures.length, 1, inWords(report));
    });
  }
  kv.close();
});

Deno.test("--key pins a record's key: its own passes, another is refused first", async () => {
  const { kv, api } = await honestLedger();
  const { text, report: live } = await saveThroughAudit(api);
  const key = live.serverKey!;
  const pinned = await auditText(text, { trusted: { key } });
  assert.equal(pinned.ok, true, inWords(pinned));
  assert.equal(pinned.keyPinned, true);
  const other = serverPublicKey(crypto.getRandomValues(new Uint8Array(32)));
  const refused = await auditText(text, { trusted: { key: other } });
  assert.deepEqual(refused.failures, [{ kind: "server-key", served: key, trusted: other }]);
  assert.equal(refused.keys, 0, "nothing else was read");
  // A record whose key was swapped for the pinned one fails on every head signature.
  const swapped = await auditText(edited(text, (ls) => void (ls[0].key = other)), {
    trusted: { key: other },
  });
  assert.equal(swapped.ok, false);
  assert.ok(hasFinding(swapped, { kind: "head-signature", height: null, key: other }));
  kv.close();
});

Deno.test("protocol §4.8: the example record audits clean", async () => {
  const doc = await Deno.readTextFile(new URL("../../../docs/protocol.md", import.meta.url));
  const section = doc.slice(doc.search(/^### 4\.8 /m));
  const example = /```ndjson\n([\s\S]*?)```/.exec(section.slice(0, section.search(/^## /m)));
  assert.ok(example, "§4.8 prints an example record");
  const report = await auditText(example[1]);
  assert.deepEqual(report.failures, []);
  assert.deepEqual([report.height, report.blocks, report.keys, report.votes], [1, 2, 2, 1]);
});
