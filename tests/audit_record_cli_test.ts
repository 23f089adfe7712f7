// `deno task audit URL --save FILE` and `deno task audit FILE` as a user runs them: the real server
// in its own process is audited and its record saved, with the log's checkpoint a witness
// cosigned; the server is stopped and the record audited again by a process allowed to read files
// and nothing else (no network), its witness counted as from the server; changed copies fail,
// naming the vote or block; a record without a checkpoint fails with its own line; a malformed
// file fails with its line, never a stack trace.
import assert from "node:assert/strict";
import type { AuditReport } from "../lib/client/audit/audit.ts";
import { auditRecord } from "../lib/client/audit/election_record_source.ts";
import { findingText } from "../lib/client/audit/report_text.ts";
import { serverPublicKey } from "../lib/protocol/head.ts";
import { readRecordFile } from "../record_file.ts";
import { type FindingPattern, hasFinding, inWords } from "./helpers/audit_findings.ts";
import { call, makeVoters, signedVote } from "./helpers/ledger_fixtures.ts";
import { startServer } from "./helpers/server_process.ts";
import { cosignServed, makeWitness } from "./client/audit/log_fixtures.ts";

const AUDIT = new URL("../audit.ts", import.meta.url).pathname;

/** Runs `deno run {permissions} audit.ts ...args`: exit status, stdout and stderr. */
async function audit(permissions: string[], ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, AUDIT, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** `deno task audit`'s permissions. */
const TASK = ["--allow-net", "--allow-read", "--allow-write"];
/** Offline: read files, nothing else. */
const OFFLINE = ["--allow-read"];

/** The failure lines of a printed report. */
const failureLines = (stdout: string) =>
  stdout.split("\n").filter((l) => l.startsWith("  - ")).map((l) => l.slice(4));

/**
 * The same audit of the record at `path` run here: its findings, as data, and the lines the
 * command line printed for them, which must be those findings in words.
 */
async function auditedHere(path: string, stdout: string): Promise<AuditReport> {
  const report = await auditRecord(await readRecordFile(path));
  assert.deepEqual(failureLines(stdout), report.failures.map(findingText));
  return report;
}

/** Asserts that `report` found `pattern`, naming what it found otherwise. */
function assertFound(report: AuditReport, pattern: FindingPattern) {
  assert.ok(hasFinding(report, pattern), inWords(report));
}

/** A copy of the record at `path`, its parsed lines changed by `edit`, written to `to`. */
// deno-lint-ignore no-explicit-any
async function tampered(path: string, to: string, edit: (lines: any[]) => any[] | void) {
  const lines = (await Deno.readTextFile(path)).trimEnd().split("\n").map((l) => JSON.parse(l));
  const out = edit(lines) ?? lines;
  await Deno.writeTextFile(to, out.map((l: unknown) => JSON.stringify(l) + "\n").join(""));
  return to;
}

Deno.test({
  name: "deno task audit URL --save FILE, then FILE offline: the same verdict, tampering caught",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "ringvote-record-cli-" });
    const record = `${dir}/record.ndjson`;
    const server = await startServer();
    let key = "";
    const [witness, stranger] = [
      makeWitness("witness.example/a"),
      makeWitness("witness.example/b"),
    ];
    try {
      const voters = makeVoters(4);
      for (const v of voters) await call(server.url, "POST", "/api/pki/key", { key: v.key });
      for (const [i, payload] of ["Yes", "No", "Yes"].entries()) {
        const res = await call(
          server.url,
          "POST",
          "/api/vote",
          signedVote(voters[i], voters, payload),
        );
        assert.equal(res.status, 202);
      }
      while ((await call(server.url, "GET", "/api/tally")).body.total < 3) {
        await new Promise((r) => setTimeout(r, 100));
      }
      key = (await call(server.url, "GET", "/api/server-key")).body.key;
      const { note } = await cosignServed(server.url, witness);

      await t.step("audit URL --save FILE: exit 0, the record written", async () => {
        const run = await audit(TASK, server.url, "--save", record, "--witness", witness.vkey);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.match(run.stdout, /VERDICT: the record is consistent/);
        assert.match(run.stdout, /saved to .*record\.ndjson: 4 keys, \d+ blocks, 3 votes$/m);
        const [first, second] = (await Deno.readTextFile(record)).split("\n").slice(0, 2)
          .map((l) => JSON.parse(l));
        assert.equal(first.kind, "ringvote/v1/election-record");
        assert.equal(first.key, key);
        // The checkpoint it was taken at, as served, with the witness's cosignature.
        assert.equal(second.kind, "checkpoint");
        assert.ok(second.note.startsWith(note.slice(0, note.indexOf("\n\n"))));
        assert.match(second.note, /\n— witness\.example\/a \S+\n$/);
      });
    } finally {
      await server.stop();
    }

    try {
      await t.step("audit FILE with no network: exit 0, the same report", async () => {
        const run = await audit(OFFLINE, record);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.match(
          run.stdout,
          /^Ringvote audit of .*record\.ndjson \(election record, offline\)$/m,
        );
        assert.match(run.stdout, /votes verified {4}3\n/);
        assert.match(run.stdout, /VERDICT: the record is consistent: every check holds/);
        assert.match(run.stdout, /\(not pinned: compare it out of band\)/);
      });
      await t.step(
        "allowed to read the record alone, it checks in its own thread: the same report",
        async () => {
          const run = await audit([`--allow-read=${record}`], record);
          assert.equal(run.code, 0, run.stdout + run.stderr);
          assert.match(run.stdout, /votes verified {4}3\n/);
          assert.match(run.stdout, /VERDICT: the record is consistent: every check holds/);
          const tampered = (await Deno.readTextFile(record)).replace(
            '"payload":"Yes"',
            '"payload":"No"',
          );
          const copy = `${dir}/readable-only.ndjson`;
          await Deno.writeTextFile(copy, tampered);
          const refused = await audit([`--allow-read=${copy}`], copy);
          assert.equal(refused.code, 1);
          assertFound(await auditedHere(copy, refused.stdout), { kind: "invalid-signature" });
        },
      );
      await t.step("audit FILE --key: its key passes pinned, another fails", async () => {
        const pinned = await audit(OFFLINE, record, "--key", key);
        assert.equal(pinned.code, 0, pinned.stdout);
        assert.match(pinned.stdout, new RegExp(`server key        ${key} \\(pinned\\)`));
        const other = serverPublicKey(crypto.getRandomValues(new Uint8Array(32)));
        const refused = await audit(OFFLINE, record, `--key=${other}`);
        assert.equal(refused.code, 1);
        assert.deepEqual(failureLines(refused.stdout), [
          findingText({ kind: "server-key", served: key, trusted: other }),
        ]);
      });
      await t.step("audit FILE --witness: its cosigner passes offline, another fails", async () => {
        const cosigned = await audit(OFFLINE, record, "--witness", witness.vkey);
        assert.equal(cosigned.code, 0, cosigned.stdout);
        assert.match(cosigned.stdout, /^ {2}witnesses {9}1 of 1 cosigned, 1 needed$/m);
        const other = await audit(OFFLINE, record, "--witness", stranger.vkey);
        assert.equal(other.code, 1, other.stdout);
        const { size } = (await auditRecord(await readRecordFile(record))).checkpoint!;
        assert.deepEqual(failureLines(other.stdout), [
          findingText({ kind: "witness-quorum", count: 0, trusted: 1, size, quorum: 1 }),
        ]);
      });
      await t.step(
        "a record without its checkpoint line, as written before: exit 1, its own line",
        async () => {
          const copy = await tampered(
            record,
            `${dir}/old.ndjson`,
            (lines) => lines.filter((l) => l.kind !== "checkpoint"),
          );
          const run = await audit(OFFLINE, copy);
          assert.equal(run.code, 1, run.stdout);
          assert.match(run.stdout, /votes verified {4}3\n/);
          const report = await auditedHere(copy, run.stdout);
          assert.deepEqual(report.failures.map((f) => f.kind), ["checkpoint-not-given"]);
        },
      );
      await t.step("a changed checkpoint: exit 1", async () => {
        const copy = await tampered(record, `${dir}/checkpoint.ndjson`, (lines) => {
          lines[1].note = lines[1].note.replace(
            /\n(\d+)\n/,
            (_: string, n: string) => `\n${+n + 1}\n`,
          );
        });
        const run = await audit(OFFLINE, copy);
        assert.equal(run.code, 1, run.stdout);
        assertFound(await auditedHere(copy, run.stdout), { kind: "checkpoint-unsigned", key });
      });
      await t.step("a changed payload: exit 1, the vote named", async () => {
        let voteId = "";
        const copy = await tampered(record, `${dir}/payload.ndjson`, (lines) => {
          const vote = lines.find((l) => l.kind === "vote");
          vote.payload = vote.payload === "No" ? "Yes" : "No"; // another of the two choices
          voteId = vote.voteId;
        });
        const run = await audit(OFFLINE, copy);
        assert.equal(run.code, 1);
        assertFound(await auditedHere(copy, run.stdout), {
          kind: "invalid-signature",
          vote: { index: 0, voteId },
        });
      });
      await t.step("a vote removed: exit 1, its block named", async () => {
        let height = 0;
        const copy = await tampered(record, `${dir}/removed.ndjson`, (lines) => {
          const i = lines.findIndex((l) => l.kind === "vote");
          height = lines[i].height;
          lines.splice(i, 1);
        });
        const run = await audit(OFFLINE, copy);
        assert.equal(run.code, 1);
        assertFound(await auditedHere(copy, run.stdout), { kind: "block-size", height });
      });
      await t.step("a head signature changed: exit 1, its block named", async () => {
        const copy = await tampered(record, `${dir}/signature.ndjson`, (lines) => {
          const block = lines.find((l) => l.kind === "block" && l.height === 1);
          block.head_signature = "00".repeat(64);
        });
        const run = await audit(OFFLINE, copy);
        assert.equal(run.code, 1);
        assertFound(await auditedHere(copy, run.stdout), { kind: "head-signature", height: 1 });
      });
      await t.step(
        "a truncated or foreign file: exit 1 with its line, no stack trace",
        async () => {
          const text = await Deno.readTextFile(record);
          await Deno.writeTextFile(
            `${dir}/cut.ndjson`,
            text.slice(0, text.indexOf('"kind":"vote"') + 40),
          );
          const cut = await audit(OFFLINE, `${dir}/cut.ndjson`);
          assert.equal(cut.code, 1);
          const cutReport = await auditedHere(`${dir}/cut.ndjson`, cut.stdout);
          assert.ok(hasFinding(cutReport, { kind: "stopped" }, { kind: "record-unreadable" }));
          await Deno.writeTextFile(`${dir}/junk.ndjson`, "PK\u0003\u0004 not a record\n");
          const junk = await audit(OFFLINE, `${dir}/junk.ndjson`);
          assert.equal(junk.code, 1);
          const junkReport = await auditedHere(`${dir}/junk.ndjson`, junk.stdout);
          assert.deepEqual(junkReport.failures.map((f) => f.kind), ["stopped"]);
          for (const run of [cut, junk]) assert.doesNotMatch(run.stderr, /\bat .*\.ts:\d+|error:/);
        },
      );
      await t.step("usage errors: exit 2", async () => {
        const missing = await audit(OFFLINE, `${dir}/absent.ndjson`);
        assert.equal(missing.code, 2);
        assert.match(missing.stderr, /cannot read ".*absent\.ndjson"/);
        const saveFile = await audit(TASK, record, "--save", `${dir}/copy.ndjson`);
        assert.equal(saveFile.code, 2);
        assert.match(saveFile.stderr, /--save writes the record of a URL: give a URL/);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
