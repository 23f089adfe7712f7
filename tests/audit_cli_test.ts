// `deno task audit` as a user runs it: a subprocess against the real server (main.ts in its own
// process), anchored in the key the auditor pins with --key; and `--evidence FILE`, which checks a
// fork-evidence file alone, against the pinned key when one is given.
import assert from "node:assert/strict";
import { forkEvidence, serverPublicKey, signHead } from "../lib/protocol/head.ts";
import type { SignedHead } from "../lib/protocol/schemas.ts";
import { call, makeVoters, signedVote } from "./helpers/ledger_fixtures.ts";
import { startServer } from "./helpers/server_process.ts";

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
        assert.match(
          run.stdout,
          new RegExp(
            `^  - server key: the server answers ${key}, but the trusted key is ${other}$`,
            "m",
          ),
        );
        assert.match(run.stdout, /VERDICT: INCONSISTENT: 1 failure\(s\)/);
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
      const withUrl = await audit("http://127.0.0.1:1/", "--evidence", valid);
      assert.equal(withUrl.code, 2);
      assert.match(withUrl.stderr, /--evidence checks a file alone/);
      const unknown = await audit("--keys", key);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /unknown option "--keys"/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
