// `deno task audit URL --resume FILE` as a user runs it, on the real server in its own process:
// a record saved earlier is taken up once the server sealed more votes, and written again byte for
// byte as a fresh `--save` writes it, saying how many votes it verified and how many the record
// held; a server whose chain does not extend the record (a rewritten head, a rewritten older block,
// another key), a record that does not check and a failing vote leave the file as it was; and a
// --save whose audit fails never writes FILE (which --resume would take up without verifying its
// signatures), keeping what it read in FILE.failed.
import assert from "node:assert/strict";
import { call, makeVoters, signedVote, type TestVoter } from "./helpers/ledger_fixtures.ts";
import { startServer } from "./helpers/server_process.ts";
import { startTamperingProxy } from "./helpers/tampering_proxy.ts";

const AUDIT = new URL("../audit.ts", import.meta.url).pathname;
/** `deno task audit`'s permissions. */
const TASK = ["--allow-net", "--allow-read", "--allow-write"];

/** Runs `deno run {TASK} audit.ts ...args`: exit status, stdout and stderr. */
async function audit(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...TASK, AUDIT, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** The counts a resumed audit prints: votes verified now and votes the record answered for. */
function resumedCounts(stdout: string): { now: number; remembered: number } | null {
  const m = /^Resumed from .* at height \d+: (\d+) votes verified now, (\d+) from the record/m
    .exec(stdout);
  return m === null ? null : { now: Number(m[1]), remembered: Number(m[2]) };
}

/** Casts one vote of each of `payloads` (voters `from` on) and waits until all are sealed. */
async function castSealed(
  url: string,
  { voters, from, payloads }: { voters: TestVoter[]; from: number; payloads: string[] },
) {
  for (const [i, payload] of payloads.entries()) {
    const res = await call(url, "POST", "/api/vote", signedVote(voters[from + i], voters, payload));
    assert.equal(res.status, 202, JSON.stringify(res.body));
  }
  const total = from + payloads.length;
  while ((await call(url, "GET", "/api/tally")).body.total < total) {
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The files in `dir`, sorted: a failed resume leaves no file of its own behind. */
async function filesIn(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

Deno.test({
  name: "deno task audit URL --resume FILE: only the new votes verified, the --save bytes written",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "ringvote-resume-cli-" });
    const record = `${dir}/record.ndjson`;
    const server = await startServer();
    try {
      const voters = makeVoters(8);
      for (const v of voters) await call(server.url, "POST", "/api/pki/key", { key: v.key });
      await castSealed(server.url, { voters, from: 0, payloads: ["Yes", "No", "Yes"] });
      const saved = await audit(server.url, "--save", record);
      assert.equal(saved.code, 0, saved.stdout + saved.stderr);
      const before = await Deno.readFile(record);
      const head = JSON.parse(new TextDecoder().decode(before).split("\n")[0]);

      await t.step("nothing new: 0 verified, 3 from the record, the same bytes", async () => {
        const run = await audit(server.url, "--resume", record);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.deepEqual(resumedCounts(run.stdout), { now: 0, remembered: 3 });
        assert.match(run.stdout, /VERDICT: the record is consistent: every check holds/);
        assert.deepEqual(await Deno.readFile(record), before);
        assert.deepEqual(await filesIn(dir), ["record.ndjson"]);
      });

      await castSealed(server.url, { voters, from: 3, payloads: ["No", "No"] });
      await t.step("two votes later: 2 verified now, 3 from the record", async () => {
        // The record written again keeps the mode of the file it replaces.
        await Deno.chmod(record, 0o640);
        const run = await audit(server.url, "--resume", record);
        assert.equal((await Deno.stat(record)).mode! & 0o777, 0o640);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.deepEqual(resumedCounts(run.stdout), { now: 2, remembered: 3 });
        assert.match(run.stdout, /^ {2}votes verified {4}5$/m);
        assert.match(run.stdout, /saved to .*record\.ndjson: 8 keys, \d+ blocks, 5 votes$/m);
      });
      await t.step("the file is byte for byte what a fresh --save writes", async () => {
        const fresh = `${dir}/fresh.ndjson`;
        const run = await audit(server.url, "--save", fresh);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.deepEqual(await Deno.readFile(record), await Deno.readFile(fresh));
        // A record is for anyone to read: a new file is a plain file, not a temporary one (0600).
        assert.equal((await Deno.stat(fresh)).mode! & 0o777, 0o644);
        await Deno.remove(fresh);
      });

      const resumed = await Deno.readFile(record);
      const current = JSON.parse(new TextDecoder().decode(resumed).split("\n")[0]);
      await t.step("a server that rewrote the record's head: exit 1, nothing changed", async () => {
        const liar = startTamperingProxy(server.url, (path, body) => {
          if (path !== "/api/blocks") return;
          for (const b of body.blocks) if (b.height === current.height) b.hash = "ab".repeat(32);
        });
        try {
          const run = await audit(liar.url, "--resume", record);
          assert.equal(run.code, 1, run.stdout + run.stderr);
          assert.match(
            run.stdout,
            new RegExp(
              `^VERDICT: INCONSISTENT: block ${current.height}: the server serves hash ` +
                `${"ab".repeat(32)}, but the remembered head at this height has hash ` +
                `${current.hash}: the server's chain does not extend it$`,
              "m",
            ),
          );
          assert.match(run.stderr, /record\.ndjson was left as it was/);
          assert.deepEqual(await Deno.readFile(record), resumed);
          assert.deepEqual(await filesIn(dir), ["record.ndjson"]);
        } finally {
          await liar.close();
        }
      });
      await t.step("a server that rewrote an older block: exit 1, nothing changed", async () => {
        const liar = startTamperingProxy(server.url, (path, body) => {
          if (path !== "/api/blocks") return;
          for (const b of body.blocks) if (b.height === 1) b.merkle_root = "cd".repeat(32);
        });
        try {
          const run = await audit(liar.url, "--resume", record);
          assert.equal(run.code, 1, run.stdout + run.stderr);
          assert.match(
            run.stdout,
            /^ {2}- audit stopped: block 1: the server's \(hash [0-9a-f]{64}\) is not the saved record's \(hash [0-9a-f]{64}\): the server's chain does not extend the saved record's$/m,
          );
          assert.match(run.stdout, /record\.ndjson was left as it was/);
          assert.deepEqual(await Deno.readFile(record), resumed);
          assert.deepEqual(await filesIn(dir), ["record.ndjson"]);
        } finally {
          await liar.close();
        }
      });
      await t.step("a failing new vote: exit 1, nothing changed", async () => {
        const liar = startTamperingProxy(server.url, (path, body) => {
          if (path !== `/api/block/id/${current.height}/votes`) return;
          body.votes[0].vote.payload = "Maybe";
        });
        try {
          // The record of the first save, whose head is below the changed block.
          const old = `${dir}/old.ndjson`;
          await Deno.writeFile(old, before);
          const run = await audit(liar.url, "--resume", old);
          assert.equal(run.code, 1, run.stdout + run.stderr);
          assert.match(run.stdout, /invalid signature/);
          assert.match(run.stdout, /old\.ndjson was left as it was/);
          assert.deepEqual(await Deno.readFile(old), before);
          await Deno.remove(old);
          assert.deepEqual(await filesIn(dir), ["record.ndjson"]);
        } finally {
          await liar.close();
        }
      });
      await t.step("a record that does not check: exit 1, nothing changed", async () => {
        const text = new TextDecoder().decode(before);
        const changed = text.replace('"payload":"Yes"', '"payload":"No"');
        const copy = `${dir}/changed.ndjson`;
        await Deno.writeTextFile(copy, changed);
        const run = await audit(server.url, "--resume", copy);
        assert.equal(run.code, 1, run.stdout + run.stderr);
        assert.match(run.stdout, /Merkle root does not match/);
        assert.match(run.stderr, /does not check, so the audit cannot resume from it/);
        assert.equal(await Deno.readTextFile(copy), changed);
        await Deno.remove(copy);
      });
      await t.step(
        "a failing --save leaves FILE as it was, what it read in FILE.failed",
        async () => {
          const liar = startTamperingProxy(server.url, (path, body) => {
            if (path !== "/api/block/id/1/votes") return;
            body.votes[0].vote.payload = "Maybe";
          });
          const kept = `${dir}/kept.ndjson`;
          try {
            // An earlier good record under the name: a failing save must not replace it.
            await Deno.writeFile(kept, before);
            const run = await audit(liar.url, "--save", kept);
            assert.equal(run.code, 1, run.stdout + run.stderr);
            assert.match(run.stdout, /invalid signature/);
            assert.match(
              run.stdout,
              /^The audit failed, so .*kept\.ndjson was not written; the election record of what was audited is saved to .*kept\.ndjson\.failed: 8 keys, \d+ blocks, 5 votes$/m,
            );
            assert.deepEqual(await Deno.readFile(kept), before);
            // What the server served is kept, and fails offline as it failed live.
            const offline = await audit(`${kept}.failed`);
            assert.equal(offline.code, 1, offline.stdout + offline.stderr);
            assert.match(offline.stdout, /invalid signature/);
            // Saved afresh with nothing to replace, the name stays free.
            await Deno.remove(kept);
            assert.equal((await audit(liar.url, "--save", kept)).code, 1);
            assert.deepEqual(await filesIn(dir), ["kept.ndjson.failed", "record.ndjson"]);
          } finally {
            await liar.close();
            await Deno.remove(`${kept}.failed`).catch(() => {});
          }
          assert.deepEqual(await filesIn(dir), ["record.ndjson"]);
        },
      );
      await t.step("--key pins the record's key too", async () => {
        const other = "11".repeat(32);
        const run = await audit(server.url, "--resume", record, "--key", other);
        assert.equal(run.code, 1, run.stdout + run.stderr);
        assert.match(
          run.stdout,
          new RegExp(`server key: the server answers ${head.key}, but the trusted key is ${other}`),
        );
        assert.deepEqual(await Deno.readFile(record), resumed);
      });
    } finally {
      await server.stop();
    }

    try {
      await t.step("another server, another key: exit 1, nothing changed", async () => {
        const another = await startServer();
        try {
          const run = await audit(another.url, "--resume", record);
          assert.equal(run.code, 1, run.stdout + run.stderr);
          assert.match(run.stdout, /^VERDICT: INCONSISTENT: the server answers key [0-9a-f]{64}/m);
          assert.deepEqual(await filesIn(dir), ["record.ndjson"]);
        } finally {
          await another.stop();
        }
      });
      await t.step("usage errors: exit 2", async () => {
        const both = await audit("http://127.0.0.1:9/", "--resume", record, "--save", record);
        assert.equal(both.code, 2);
        assert.match(both.stderr, /give --save or --resume, not both/);
        const file = await audit(record, "--resume", record);
        assert.equal(file.code, 2);
        assert.match(file.stderr, /--resume takes up the record of a URL: give a URL as well/);
        const missing = await audit("http://127.0.0.1:9/", "--resume", `${dir}/absent.ndjson`);
        assert.equal(missing.code, 2);
        assert.match(missing.stderr, /cannot read ".*absent\.ndjson"/);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
