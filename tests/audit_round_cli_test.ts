// `deno task audit URL --round ID` as a user runs it: a subprocess against the app served on a free
// loopback port, with round 1 and a round 2 of choices each holding sealed votes. Round 2 audits
// on its own ledger (protocol §4.9), round 1 audits as without the option, `--save` writes round 2's
// election record, an unknown round fails naming it, a malformed id is a usage error, and a vote
// whose ring is not one of the round's groups (§2.8) fails the audit with that finding.
import assert from "node:assert/strict";
import { findingText } from "../lib/client/audit/report_text.ts";
import { createApp } from "../server/app.ts";
import { sealNextBlock } from "../server/sealer.ts";
import { createStore } from "../server/store/mod.ts";
import { createRounds, roundPrefix } from "../server/store/rounds.ts";
import {
  call,
  makeVoters,
  ringFor,
  signedVote,
  type TestVoter,
} from "./helpers/ledger_fixtures.ts";
import { testVerifier } from "./helpers/test_verifier.ts";

const AUDIT = new URL("../audit.ts", import.meta.url).pathname;
const ADMIN_TOKEN = "presenter-token-0123456789";

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

/** The failure lines of a printed report. */
const failureLines = (stdout: string) =>
  stdout.split("\n").filter((l) => l.startsWith("  - ")).map((l) => l.slice(4));

/**
 * The app with rounds served on 127.0.0.1 and a free port: round 1 with 2 sealed votes in 4 keys,
 * round 2 (Red/Green/Blue) with 3 sealed votes in 8 keys, its one group, and the current round.
 */
async function servedRounds() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const rounds = await createRounds(kv, {
    election: store,
    electionIntervalMs: 60_000,
    adminToken: ADMIN_TOKEN,
    currentTtlMs: 0,
  });
  const app = createApp({ store, rounds, verifier: testVerifier });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    app.fetch,
  );
  const url = `http://127.0.0.1:${server.addr.port}/`;

  const castIn = async (base: string, voters: TestVoter[], payloads: string[]) => {
    for (const v of voters) {
      assert.equal((await call(app, "POST", `${base}/pki/key`, { key: v.key })).status, 201);
    }
    const round = base !== "/api";
    if (round) {
      const opened = await app.request(`${base}/voting`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      });
      assert.equal(opened.status, 200, await opened.text());
    }
    for (const [i, payload] of payloads.entries()) {
      // A round's ring is its one group: every key, in id order (protocol §2.8).
      const ring = round ? voters : ringFor(voters[i], voters, 3);
      const ballot = signedVote(voters[i], ring, payload);
      assert.equal((await call(app, "POST", `${base}/vote`, ballot)).status, 202);
    }
  };
  await castIn("/api", makeVoters(4), ["Yes", "No"]);
  await sealNextBlock(store, Date.now());
  const started = await app.request("/api/rounds", {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ question: "Which colour?", choices: ["Red", "Green", "Blue"] }),
  });
  assert.deepEqual(await started.json(), { id: 2 });
  const roundVoters = makeVoters(8);
  await castIn("/api/rounds/2", roundVoters, ["Red", "Blue", "Red"]);
  await sealNextBlock(await rounds.storeOf(2), Date.now());

  return {
    url,
    app,
    /**
     * Writes into round 2 past the server's intake (as a server that broke the rule would) a vote
     * whose ring leaves a key of the group out, and seals it.
     */
    async castOutsideGroup() {
      const ledger = await createStore(kv, { prefix: roundPrefix(2) });
      const ballot = signedVote(roundVoters[3], roundVoters.slice(0, 7), "Green");
      const vote = {
        payload: ballot.payload,
        signature: ballot.signature,
        publicKeys: ballot.publicKeys,
      };
      await ledger.submitVote(vote, ballot.tag);
      await sealNextBlock(ledger, Date.now());
    },
    async stop() {
      await server.shutdown();
      kv.close();
    },
  };
}

Deno.test({
  name: "deno task audit URL --round ID: that round's ledger is audited",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "ringvote-round-cli-" });
    const served = await servedRounds();
    try {
      const roundKey = (await call(served.app, "GET", "/api/rounds/2/server-key")).body.key;
      const electionKey = (await call(served.app, "GET", "/api/server-key")).body.key;

      await t.step("--round 2: exit 0, round 2's keys, votes and tally", async () => {
        const run = await audit(TASK, served.url, "--round", "2");
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.match(run.stdout, /^Ringvote audit of http:\/\/127\.0\.0\.1:\d+\/ \(round 2\)$/m);
        assert.match(run.stdout, new RegExp(`^  server key        ${roundKey} `, "m"));
        assert.match(run.stdout, /keys registered {3}8\n/);
        assert.match(run.stdout, /votes verified {4}3\n/);
        assert.match(run.stdout, /^ +2 {2}"Red"$/m);
        assert.match(run.stdout, /^ +1 {2}"Blue"$/m);
        assert.match(run.stdout, /VERDICT: the record is consistent/);
      });

      await t.step("--round=2 --key pins round 2's key; round 1's key is another", async () => {
        const pinned = await audit(TASK, served.url, "--round=2", "--key", roundKey);
        assert.equal(pinned.code, 0, pinned.stdout);
        assert.match(pinned.stdout, new RegExp(`server key        ${roundKey} \\(pinned\\)`));
        const other = await audit(TASK, served.url, "--round", "2", "--key", electionKey);
        assert.equal(other.code, 1, other.stdout);
        assert.deepEqual(failureLines(other.stdout), [
          findingText({ kind: "server-key", served: roundKey, trusted: electionKey }),
        ]);
      });

      await t.step("no --round, and --round 1: round 1 as ever", async () => {
        for (const args of [[], ["--round", "1"]]) {
          const run = await audit(TASK, served.url, ...args);
          assert.equal(run.code, 0, run.stdout + run.stderr);
          assert.match(run.stdout, new RegExp(`^  server key        ${electionKey} `, "m"));
          assert.match(run.stdout, /keys registered {3}4\n/);
          assert.match(run.stdout, /votes verified {4}2\n/);
          assert.match(run.stdout, /VERDICT: the record is consistent/);
        }
        const plain = await audit(TASK, served.url);
        assert.match(plain.stdout, /^Ringvote audit of http:\/\/127\.0\.0\.1:\d+\/$/m);
      });

      await t.step("--round 2 --save FILE: round 2's election record", async () => {
        const record = `${dir}/round-2.ndjson`;
        const run = await audit(TASK, served.url, "--round", "2", "--save", record);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.match(run.stdout, /saved to .*round-2\.ndjson: 8 keys, \d+ blocks, 3 votes$/m);
        const first = JSON.parse((await Deno.readTextFile(record)).split("\n")[0]);
        assert.equal(first.kind, "ringvote/v1/election-record");
        assert.equal(first.key, roundKey);
        assert.deepEqual(first.groups, { keysAtOpen: 8, minVoters: 8, lateJoiners: false });
        const offline = await audit(["--allow-read"], record);
        assert.equal(offline.code, 0, offline.stdout + offline.stderr);
        assert.match(offline.stdout, /votes verified {4}3\n/);
        assert.match(
          offline.stdout,
          /^ {2}ring rule {9}a round's groups: 8 keys at the opening, minVoters 8, late joiners off$/m,
        );
        assert.match(offline.stdout, /VERDICT: the record is consistent/);
        const asRound = await audit(["--allow-read"], record, "--round", "2");
        assert.equal(asRound.code, 0, asRound.stdout + asRound.stderr);
      });

      await t.step("a round's record with its group rule taken out fails --round", async () => {
        const lines = (await Deno.readTextFile(`${dir}/round-2.ndjson`)).split("\n");
        const { groups: _, ...header } = JSON.parse(lines[0]);
        const stripped = `${dir}/round-2-stripped.ndjson`;
        await Deno.writeTextFile(stripped, [JSON.stringify(header), ...lines.slice(1)].join("\n"));
        // Read alone, it is held to the election's ring rule, and says so.
        const alone = await audit(["--allow-read"], stripped);
        assert.equal(alone.code, 0, alone.stdout + alone.stderr);
        assert.match(alone.stdout, /^ {2}ring rule {9}the election's: rings drawn from/m);
        const asRound = await audit(["--allow-read"], stripped, "--round", "2");
        assert.equal(asRound.code, 1, asRound.stdout + asRound.stderr);
        assert.deepEqual(failureLines(asRound.stdout), [
          findingText({ kind: "record-no-groups" }),
        ]);
        // A round's record cut after its header stops before the votes: its rule was never read,
        // so the report says it is not known and blames no missing rule.
        const cut = `${dir}/round-2-cut.ndjson`;
        await Deno.writeTextFile(cut, `${lines[0]}\n`);
        const stopped = await audit(["--allow-read"], cut, "--round", "2");
        assert.equal(stopped.code, 1, stopped.stdout + stopped.stderr);
        assert.match(stopped.stdout, /^ {2}ring rule {9}not known: the audit stopped/m);
        assert.ok(failureLines(stopped.stdout).length > 0, stopped.stdout);
        assert.ok(
          !failureLines(stopped.stdout).includes(findingText({ kind: "record-no-groups" })),
          stopped.stdout,
        );
      });

      await t.step("an unknown round: exit 1, the line naming it", async () => {
        const run = await audit(TASK, served.url, "--round", "99");
        assert.equal(run.code, 1, run.stdout + run.stderr);
        assert.match(run.stdout, /\(round 99\)$/m);
        // The audit stops at its first read, the server key, with the server's own answer.
        const reason = 'GET /api/rounds/99/server-key answered 404: No round "99"';
        assert.deepEqual(failureLines(run.stdout), [findingText({ kind: "stopped", reason })]);
      });

      await t.step("a malformed round id is a usage error: exit 2", async () => {
        for (const bad of ["0", "abc", "-1", "2.5", "02", ""]) {
          const run = await audit(TASK, served.url, `--round=${bad}`);
          assert.equal(run.code, 2, `${bad}: ${run.stdout}`);
          assert.equal(run.stdout, "");
          assert.match(
            run.stderr,
            bad === ""
              ? /--round needs a value/
              : new RegExp(`--round must be a round id, a whole number from 1; got "${bad}"`),
          );
          assert.match(run.stderr, /usage: deno task audit \[URL\] \[--round ID\]/);
        }
        const missing = await audit(TASK, served.url, "--round");
        assert.equal(missing.code, 2);
        assert.match(missing.stderr, /--round needs a value/);
      });

      await t.step(
        "a ring that is not one of the round's groups: exit 1, its finding",
        async () => {
          await served.castOutsideGroup();
          const run = await audit(TASK, served.url, "--round", "2");
          assert.equal(run.code, 1, run.stdout + run.stderr);
          const lines = failureLines(run.stdout);
          assert.equal(lines.length, 1, run.stdout);
          assert.match(lines[0], /^block 2 vote 0 \(.+\): ring is not one of the round's groups$/);
          assert.match(run.stdout, /VERDICT: INCONSISTENT/);
          // Its election record carries the round's group rule: offline, the same finding.
          const save = `${dir}/bad.ndjson`;
          const saved = await audit(TASK, served.url, "--round", "2", "--save", save);
          assert.equal(saved.code, 1, saved.stdout + saved.stderr);
          const offline = await audit(["--allow-read"], `${save}.failed`);
          assert.equal(offline.code, 1, offline.stdout + offline.stderr);
          assert.deepEqual(failureLines(offline.stdout), lines);
        },
      );
    } finally {
      await served.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
