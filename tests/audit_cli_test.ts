// `deno task audit` as a user runs it: a subprocess against the real server (main.ts in its own
// process), anchored in the key the auditor pins with --key and in the witnesses it trusts with
// --witness and --quorum; the log's checkpoint checked, a lying one caught; and `--evidence FILE`,
// which checks a fork-evidence file of either form alone, against the pinned key when one is given.
import assert from "node:assert/strict";
import { createApiClient, readPages } from "../lib/client/api_client.ts";
import { findingText } from "../lib/client/audit/report_text.ts";
import { logLeafHash } from "../lib/protocol/block_log.ts";
import { bytesToBase64 } from "../lib/protocol/bytes.ts";
import { signCheckpoint } from "../lib/protocol/checkpoint.ts";
import { forkEvidence, serverPublicKey, signHead } from "../lib/protocol/head.ts";
import { logForkEvidence } from "../lib/protocol/log_evidence.ts";
import { consistencyProof, hashLeaf, rootOfSize } from "../lib/protocol/merkle.ts";
import { ED25519_TYPE, formatVerifierKey, signerKey } from "../lib/protocol/note.ts";
import type { SignedHead } from "../lib/protocol/schemas.ts";
import { createApp } from "../server/app.ts";
import { kvKeys, type ServerKeyRecord } from "../server/store/layout.ts";
import { createStore } from "../server/store/mod.ts";
import { buildLedger } from "./helpers/ledger_builder.ts";
import { call, makeVoters, signedVote } from "./helpers/ledger_fixtures.ts";
import { startServer } from "./helpers/server_process.ts";
import { checkpointOver, cosignServed, makeWitness } from "./client/audit/log_fixtures.ts";

const AUDIT = new URL("../audit.ts", import.meta.url).pathname;

/** Runs `deno run --allow-net --allow-read audit.ts ...args`: exit status, stdout and stderr. */
async function audit(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-read", AUDIT, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test({
  name: "deno task audit URL --key: the pinned key is the anchor",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const server = await startServer();
    try {
      const voters = makeVoters(3);
      for (const v of voters) await call(server.url, "POST", "/api/pki/key", { key: v.key });
      await call(server.url, "POST", "/api/vote", signedVote(voters[0], voters, "Yes"));
      while ((await call(server.url, "GET", "/api/block/status")).body.height < 1) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const { key } = (await call(server.url, "GET", "/api/server-key")).body;
      const other = serverPublicKey(crypto.getRandomValues(new Uint8Array(32)));

      await t.step("the server's own key: exit 0, the report names the pinned key", async () => {
        const run = await audit(server.url, "--key", key.toUpperCase());
        assert.equal(run.code, 0, run.stdout);
        assert.match(run.stdout, new RegExp(`^  server key        ${key} \\(pinned\\)$`, "m"));
        assert.match(run.stdout, /VERDICT: the record is consistent/);
      });
      await t.step("another key: exit 1 before any other check, both keys named", async () => {
        const run = await audit(server.url, `--key=${other}`);
        assert.equal(run.code, 1, run.stdout);
        assert.deepEqual(failureLines(run.stdout), [
          findingText({ kind: "server-key", served: key, trusted: other }),
        ]);
        assert.match(run.stdout, /keys registered {3}0\n/, "nothing else was read");
      });
      await t.step("no key: the report prints the key it trusted", async () => {
        const run = await audit(server.url);
        assert.equal(run.code, 0, run.stdout);
        assert.match(
          run.stdout,
          new RegExp(`^  server key        ${key} \\(not pinned: compare it out of band\\)$`, "m"),
        );
      });
      await t.step("a malformed key is a usage error: exit 2", async () => {
        for (const bad of ["abc", "zz".repeat(32), key + "00"]) {
          const run = await audit(server.url, "--key", bad);
          assert.equal(run.code, 2, run.stdout);
          assert.match(run.stderr, /--key must be the server's public key, 64 hex characters/);
          assert.equal(run.stdout, "");
        }
        const missing = await audit(server.url, "--key");
        assert.equal(missing.code, 2);
        assert.match(missing.stderr, /--key needs a value/);
      });
    } finally {
      await server.stop();
    }
  },
});

/** Two heads at height 3 with different hashes, both signed by `seed`: a fork. */
function evidenceBy(seed: Uint8Array) {
  const head = (hash: string): SignedHead => ({
    height: 3,
    hash,
    head_signature: signHead(seed, { height: 3, hash }),
  });
  return forkEvidence(serverPublicKey(seed), [head("aa".repeat(32)), head("bb".repeat(32))]);
}

Deno.test("deno task audit --evidence FILE: a fork proven, or why not", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-evidence-" });
  const write = async (name: string, value: unknown) => {
    const path = `${dir}/${name}`;
    await Deno.writeTextFile(path, typeof value === "string" ? value : JSON.stringify(value));
    return path;
  };
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const evidence = evidenceBy(seed);
  const key = evidence.key;
  const valid = await write("valid.json", evidence);
  try {
    await t.step("valid evidence: exit 0", async () => {
      const run = await audit("--evidence", valid);
      assert.equal(run.code, 0, run.stdout);
      assert.match(
        run.stdout,
        new RegExp(
          `^VERDICT: FORK PROVEN: key ${key} signed two different blocks at height 3$`,
          "m",
        ),
      );
      assert.match(run.stdout, /\(not pinned: compare it out of band\)/);
    });
    await t.step("valid evidence under the pinned key: exit 0", async () => {
      const run = await audit("--evidence", valid, "--key", key);
      assert.equal(run.code, 0, run.stdout);
      assert.match(run.stdout, new RegExp(`server key        ${key} \\(pinned\\)`));
    });
    await t.step("evidence under another key than --key: exit 1", async () => {
      const other = serverPublicKey(crypto.getRandomValues(new Uint8Array(32)));
      const run = await audit("--evidence", valid, "--key", other);
      assert.equal(run.code, 1, run.stdout);
      assert.match(
        run.stdout,
        new RegExp(
          `NO FORK PROVEN for this server: the heads are signed by ${key}, not by the ` +
            `pinned key ${other}`,
        ),
      );
    });
    await t.step("tampered evidence: exit 1 with the reason", async () => {
      const tampered = structuredClone(evidence);
      tampered.heads[1].hash = "cc".repeat(32);
      const run = await audit("--evidence", await write("tampered.json", tampered));
      assert.equal(run.code, 1, run.stdout);
      assert.match(
        run.stdout,
        new RegExp(`VERDICT: NO FORK PROVEN: Head 2 is not signed by key ${key}`),
      );
    });
    await t.step("one head twice, and a file that is not JSON: exit 1", async () => {
      const same = { ...evidence, heads: [evidence.heads[0], evidence.heads[0]] };
      const twice = await audit("--evidence", await write("same.json", same));
      assert.equal(twice.code, 1);
      assert.match(twice.stdout, /VERDICT: NO FORK PROVEN: The heads name the same hash/);
      const junk = await audit("--evidence", await write("junk.json", "{not json"));
      assert.equal(junk.code, 1);
      assert.match(junk.stdout, /VERDICT: NO FORK PROVEN: The file is not JSON/);
    });
    await t.step("usage errors: exit 2", async () => {
      const missing = await audit("--evidence", `${dir}/absent.json`);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /cannot read/);
      const withFile = await audit("other.json", "--evidence", valid);
      assert.equal(withFile.code, 2);
      assert.match(withFile.stderr, /--evidence checks one file/);
      const unknown = await audit("--keys", key);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /unknown option "--keys"/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** The failure lines of a printed report. */
const failureLines = (stdout: string) =>
  stdout.split("\n").filter((l) => l.startsWith("  - ")).map((l) => l.slice(4));

Deno.test({
  name: "deno task audit URL --witness VKEY [--quorum K]: the checkpoint's cosigners counted",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const server = await startServer();
    try {
      const voters = makeVoters(3);
      for (const v of voters) await call(server.url, "POST", "/api/pki/key", { key: v.key });
      await call(server.url, "POST", "/api/vote", signedVote(voters[0], voters, "Yes"));
      while ((await call(server.url, "GET", "/api/block/status")).body.height < 1) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const [a, b] = [makeWitness("witness.example/a"), makeWitness("witness.example/b")];
      const { timestamp } = await cosignServed(server.url, a);
      const cosigned = new Date(timestamp * 1000).toISOString();

      await t.step("its cosigner: exit 0, the witness and when it cosigned printed", async () => {
        const run = await audit(server.url, "--witness", a.vkey);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.ok(run.stdout.includes(`  witness           ${a.vkey}: cosigned at ${cosigned}\n`));
        assert.match(run.stdout, /^ {2}witnesses {9}1 of 1 cosigned, 1 needed$/m);
        assert.match(
          run.stdout,
          /^ {2}checkpoint {8}size 2 of log ringvote\.local\/log\/[0-9a-f]{16}, /m,
        );
      });
      await t.step("another witness: exit 1, naming it as not cosigning", async () => {
        const run = await audit(server.url, `--witness=${b.vkey}`);
        assert.equal(run.code, 1, run.stdout);
        assert.ok(run.stdout.includes(`  witness           ${b.vkey}: no valid cosignature\n`));
        assert.deepEqual(failureLines(run.stdout), [
          findingText({ kind: "witness-quorum", count: 0, trusted: 1, size: 2, quorum: 1 }),
        ]);
      });
      await t.step("both, --quorum 2 with one cosigner: exit 1; --quorum 1: exit 0", async () => {
        const two = await audit(
          server.url,
          "--witness",
          a.vkey,
          "--witness",
          b.vkey,
          "--quorum",
          "2",
        );
        assert.equal(two.code, 1, two.stdout);
        assert.deepEqual(failureLines(two.stdout), [
          findingText({ kind: "witness-quorum", count: 1, trusted: 2, size: 2, quorum: 2 }),
        ]);
        const both = await audit(server.url, "--witness", a.vkey, "--witness", b.vkey);
        assert.equal(both.code, 1, "the quorum is every witness given, by default");
        const one = await audit(server.url, "--witness", a.vkey, "--witness", b.vkey, "--quorum=1");
        assert.equal(one.code, 0, one.stdout);
        assert.match(one.stdout, /^ {2}witnesses {9}1 of 2 cosigned, 1 needed$/m);
      });
      await t.step("a wrong witness or quorum is a usage error: exit 2", async () => {
        const ed25519 = formatVerifierKey(
          signerKey({ name: "log.example", seed: a.seed }, ED25519_TYPE),
        );
        const cases: [string[], RegExp][] = [
          [["--witness", "not-a-vkey"], /--witness must be a vkey; "not-a-vkey" is not: /],
          [
            ["--witness", ed25519],
            /--witness must be a witness's cosignature\/v1 \(type 0x04\) vkey/,
          ],
          [["--witness", a.vkey, "--witness", a.vkey], /--witness ".*" is given twice/],
          [["--quorum", "1"], /--quorum counts witnesses: give --witness VKEY/],
          [["--witness", a.vkey, "--quorum", "0"], /--quorum must be a whole number from 1 to 1/],
          [["--witness", a.vkey, "--quorum", "2"], /--quorum must be a whole number from 1 to 1/],
          [["--witness", a.vkey, "--quorum", "x"], /--quorum must be a whole number from 1 to 1/],
          [["--witness", a.vkey, "--quorum", "1", "--quorum", "1"], /--quorum is given twice/],
        ];
        for (const [args, message] of cases) {
          const run = await audit(server.url, ...args);
          assert.equal(run.code, 2, `${args.join(" ")}: ${run.stdout}`);
          assert.match(run.stderr, message);
          assert.equal(run.stdout, "");
        }
        const evidence = await audit("--evidence", "e.json", "--witness", a.vkey);
        assert.equal(evidence.code, 2);
        assert.match(evidence.stderr, /--witness and --quorum check an audited checkpoint/);
      });
    } finally {
      await server.stop();
    }
  },
});

Deno.test({
  name: "deno task audit URL: a checkpoint that lies about the chain is an audit failure",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const kv = await Deno.openKv(":memory:");
    const store = await createStore(kv);
    await buildLedger(store, { votes: 3, perBlock: 2, ringSize: 3 });
    const { seed } = (await kv.get<ServerKeyRecord>(kvKeys.serverKey())).value!;
    const app = createApp({ store });
    const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
    const hashes = (await readPages(createApiClient({ fetch: app.request }).blocks)).items
      .map((b) => b.hash);
    // Signed with the server's own key over another last block: the proxy serves it as the log.
    const lied = [...hashes.slice(0, -1), "ab".repeat(32)];
    const lie = checkpointOver(seed, lied);
    const proxy = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
      const url = new URL(req.url);
      if (url.pathname === "/api/log/checkpoint") return new Response(lie);
      return await fetch(`http://127.0.0.1:${server.addr.port}${url.pathname}${url.search}`);
    });
    try {
      const honest = await audit(`http://127.0.0.1:${server.addr.port}`);
      assert.equal(honest.code, 0, honest.stdout);
      const lying = await audit(`http://127.0.0.1:${proxy.addr.port}`);
      assert.equal(lying.code, 1, lying.stdout);
      assert.match(lying.stdout, /^ {2}checkpoint {8}\(not verified\)$/m);
      const rootOf = (h: string[]) => bytesToBase64(rootOfSize(h.map(logLeafHash), h.length));
      assert.deepEqual(failureLines(lying.stdout), [
        findingText({ kind: "checkpoint-root", size: 3, root: rootOf(lied), made: rootOf(hashes) }),
      ]);
    } finally {
      await proxy.shutdown();
      await server.shutdown();
      kv.close();
    }
  },
});

Deno.test("deno task audit --evidence FILE: checkpoint evidence, its form, origin and sizes", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-log-evidence-" });
  const write = async (name: string, value: unknown) => {
    const path = `${dir}/${name}`;
    await Deno.writeTextFile(path, JSON.stringify(value));
    return path;
  };
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const key = serverPublicKey(seed);
  const origin = "vote.example.org/log";
  const tree = (tag: string) =>
    Array.from(
      { length: 6 },
      (_, i) => hashLeaf(new TextEncoder().encode(i < 2 ? `${i}` : tag + i)),
    );
  const [honest, forked] = [tree("a"), tree("b")];
  const checkpoint = (leaves: Uint8Array[], size: number) =>
    signCheckpoint({ origin, size, root: rootOfSize(leaves, size) }, seed);
  const proof = consistencyProof(honest, 2, 6).map(bytesToBase64);
  try {
    await t.step("two roots at one size: exit 0, form, origin and sizes printed", async () => {
      const file = await write(
        "same.json",
        logForkEvidence(key, [checkpoint(honest, 4), checkpoint(forked, 4)]),
      );
      const run = await audit("--evidence", file, "--key", key);
      assert.equal(run.code, 0, run.stdout);
      assert.match(run.stdout, /^ {2}form {14}two checkpoints of one size with two roots$/m);
      assert.match(run.stdout, /^ {2}origin {12}vote\.example\.org\/log$/m);
      assert.match(run.stdout, /^ {2}sizes {13}4 and 4$/m);
      assert.match(
        run.stdout,
        new RegExp(
          `^VERDICT: FORK PROVEN: key ${key} signed two different roots of log ` +
            `vote\\.example\\.org/log at size 4$`,
          "m",
        ),
      );
    });
    await t.step(
      "two sizes, the enclosed proof failing: not settled without the server",
      async () => {
        const file = await write(
          "failed.json",
          logForkEvidence(key, [checkpoint(honest, 2), checkpoint(forked, 6)], proof),
        );
        const run = await audit("--evidence", file);
        assert.equal(run.code, 1, run.stdout);
        assert.match(
          run.stdout,
          /^ {2}form {14}two checkpoints of two sizes and a consistency proof/m,
        );
        assert.match(run.stdout, /^ {2}sizes {13}2 and 6$/m);
        assert.match(
          run.stdout,
          /^VERDICT: NOT SETTLED: the proof in the file fails, but a proof carries no signature: .*from 2 to 6/m,
        );
        const unreachable = await audit("--evidence", file, "http://127.0.0.1:1/");
        assert.equal(unreachable.code, 1, unreachable.stdout);
        assert.match(
          unreachable.stdout,
          /^VERDICT: NOT SETTLED: the server.s checkpoint could not be read/m,
        );
      },
    );
    await t.step("the two heads form still prints its form", async () => {
      const run = await audit("--evidence", await write("heads.json", evidenceBy(seed)));
      assert.equal(run.code, 0, run.stdout);
      assert.match(run.stdout, /^ {2}form {14}two signed heads at one height$/m);
    });
    await t.step("under another key than --key: exit 1", async () => {
      const file = await write(
        "other.json",
        logForkEvidence(key, [checkpoint(honest, 4), checkpoint(forked, 4)]),
      );
      const other = serverPublicKey(crypto.getRandomValues(new Uint8Array(32)));
      const run = await audit("--evidence", file, "--key", other);
      assert.equal(run.code, 1, run.stdout);
      assert.match(
        run.stdout,
        new RegExp(
          `NO FORK PROVEN for this server: the checkpoints are signed by ${key}, not by the pinned key ${other}`,
        ),
      );
    });
    await t.step(
      "a proof that joins them, and an unsigned note: exit 1 with the reason",
      async () => {
        const joined = await write(
          "joined.json",
          logForkEvidence(key, [checkpoint(honest, 2), checkpoint(honest, 6)], proof),
        );
        const run = await audit("--evidence", joined);
        assert.equal(run.code, 1, run.stdout);
        assert.match(
          run.stdout,
          /^VERDICT: NO FORK PROVEN: The proof shows checkpoint 2 a prefix of checkpoint 6$/m,
        );
        const other = crypto.getRandomValues(new Uint8Array(32));
        const unsigned = await write(
          "unsigned.json",
          logForkEvidence(key, [
            checkpoint(honest, 4),
            signCheckpoint({ origin, size: 4, root: rootOfSize(forked, 4) }, other),
          ]),
        );
        const refused = await audit("--evidence", unsigned);
        assert.equal(refused.code, 1, refused.stdout);
        assert.match(
          refused.stdout,
          new RegExp(`^VERDICT: NO FORK PROVEN: Checkpoint 2 is not signed by key ${key}$`, "m"),
        );
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
