// The log of protocol §4.10 proven by an independent implementation: tests/go/checkpoint_check,
// built here with Go and golang.org/x/mod's sumdb/note and sumdb/tlog, checks a real ledger's
// served checkpoint (with a witness cosignature added), consistency proofs between powers of two
// and between other sizes, and inclusion proofs, against the tree tlog computes itself from the
// served block hashes; then a tampered proof, a tampered root, a checkpoint signed by another key
// and a forged cosignature must each fail. Then the same program checks a real server process
// (main.ts) whose WITNESS_POLICY names the project's own witness (`deno task witness`, another
// process): once the checkpoint served carries that witness's cosignature, Go verifies the log's
// line, the witness's cosignature/v1 line, and proofs of that tree. Skipped, with the reason in its
// name, where Go or golang-golang-x-mod-dev is missing — except under CI=true, where that is a
// failure.
import assert from "node:assert/strict";
import { buildGoProgram, goMissing } from "./helpers/go_program.ts";
import { derivedOrigin } from "../lib/protocol/block_log.ts";
import { base64ToBytes, bytesToBase64, bytesToHex, hexToBytes } from "../lib/protocol/bytes.ts";
import { parseCheckpoint, signCheckpoint } from "../lib/protocol/checkpoint.ts";
import { serverPublicKey } from "../lib/protocol/head.ts";
import { hashLeaf, rootOfSize } from "../lib/protocol/merkle.ts";
import {
  COSIGNATURE_V1_TYPE,
  ED25519_TYPE,
  formatNote,
  formatVerifierKey,
  parseNote,
  parseVerifierKey,
  signCosignature,
  signerKey,
  verifierKey,
  verifyCosignature,
} from "../lib/protocol/note.ts";
import type { BlockRecord } from "../lib/protocol/schemas.ts";
import { createApp } from "../server/app.ts";
import { ledgerKeys } from "../server/store/layout.ts";
import { createStore } from "../server/store/mod.ts";
import { buildLedger } from "./helpers/ledger_builder.ts";
import { call, makeVoters, signedVote } from "./helpers/ledger_fixtures.ts";
import { type ServerProcess, startServer } from "./helpers/server_process.ts";
import { testVerifier } from "./helpers/test_verifier.ts";

const PROGRAM = new URL("./go/checkpoint_check/", import.meta.url);
const ROOT = new URL("../", import.meta.url);
const CONFIG = new URL("deno.json", ROOT).pathname;
const GO_NOTE = "/usr/share/gocode/src/golang.org/x/mod/sumdb/note";
const CI = Deno.env.get("CI") === "true";

const reason = await goMissing(GO_NOTE, "golang-golang-x-mod-dev");
if (reason !== null && !CI) console.warn(`go_interop_test skipped: ${reason}`);

type Request = {
  vkey: string;
  cosigners: string[];
  note: string;
  entries: string[];
  consistency: { old: number; new: number; oldRoot: string; newRoot: string; proof: string[] }[];
  inclusion: { index: number; size: number; leafHash: string; root: string; proof: string[] }[];
};

/** Runs the Go program on `request`: its exit code and its lines. */
async function check(binary: string, request: Request) {
  const child = new Deno.Command(binary, { stdin: "piped", stdout: "piped", stderr: "piped" })
    .spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(request)));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const lines = new TextDecoder().decode(stdout).trimEnd().split("\n");
  return { code, lines, stderr: new TextDecoder().decode(stderr) };
}

/** One base64 hash per line, as the log calls serve them. */
function lines(text: string): string[] {
  return text === "" ? [] : text.trimEnd().split("\n");
}

function tamper(b64: string): string {
  const bytes = base64ToBytes(b64);
  bytes[7] ^= 0x20;
  return bytesToBase64(bytes);
}

Deno.test({
  name: reason === null || CI
    ? "Go's sumdb/note and sumdb/tlog accept the served checkpoint and proofs, and refuse tampering"
    : `Go's sumdb/note and sumdb/tlog check the log (skipped: ${reason})`,
  ignore: reason !== null && !CI,
  sanitizeResources: false,
  async fn() {
    assert.equal(reason, null, `CI=true and the Go check cannot run: ${reason}`);
    const dir = await Deno.makeTempDir({ prefix: "ringvote-go-" });
    const kv = await Deno.openKv(":memory:");
    const store = await createStore(kv);
    const app = createApp({ store, verifier: testVerifier });
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
    const base = `http://127.0.0.1:${server.addr.port}`;
    const read = async (path: string) => {
      const res = await fetch(`${base}${path}`);
      assert.equal(res.status, 200, path);
      return await res.text();
    };
    try {
      const binary = await buildGoProgram(PROGRAM, dir, "checkpoint_check");
      // Genesis and 11 sealed blocks: a log of 12 entries.
      await buildLedger(store, { votes: 22, perBlock: 2, ringSize: 2 });
      const { key } = JSON.parse(await read("/api/server-key"));
      const origin = derivedOrigin(key);
      const note = await read("/api/log/checkpoint");
      const checkpoint = parseCheckpoint(parseNote(note).text);
      assert.equal(checkpoint.size, 12);
      const { blocks } = JSON.parse(await read("/api/blocks?from=0&limit=100")) as {
        blocks: BlockRecord[];
      };
      const entries = blocks.map((b) => bytesToBase64(hexToBytes(b.hash)));

      // A witness cosigns the checkpoint as served; its line follows the log's.
      const witness = { name: "witness.example.org/w1", seed: new Uint8Array(32).fill(5) };
      const cosignature = signCosignature(parseNote(note).text, witness, 1_767_225_600);
      const cosigned = formatNote({
        text: parseNote(note).text,
        signatures: [...parseNote(note).signatures, cosignature],
      });

      // Roots of past sizes as our lib computes them; the Go program recomputes each from entries.
      const leaves = blocks.map((b) => hashLeaf(hexToBytes(b.hash)));
      const rootOf = (size: number) => bytesToBase64(rootOfSize(leaves, size));
      const pairs = [[1, 12], [2, 12], [4, 12], [8, 12], [3, 7], [5, 11], [6, 9], [4, 8], [7, 12]];
      const consistency = [];
      for (const [m, n] of [...pairs, [12, 12], [0, 12], [1, 2]]) {
        consistency.push({
          old: m,
          new: n,
          oldRoot: rootOf(m),
          newRoot: rootOf(n),
          proof: lines(await read(`/api/log/consistency/${m}/${n}`)),
        });
      }
      const inclusion = [];
      for (const [index, size] of [[0, 1], [0, 12], [5, 12], [11, 12], [3, 4], [2, 7], [8, 9]]) {
        inclusion.push({
          index,
          size,
          leafHash: bytesToBase64(leaves[index]),
          root: rootOf(size),
          proof: lines(await read(`/api/log/inclusion/${index}/${size}`)),
        });
      }
      const request: Request = {
        vkey: formatVerifierKey(verifierKey(origin, ED25519_TYPE, hexToBytes(key))),
        cosigners: [formatVerifierKey(signerKey(witness, COSIGNATURE_V1_TYPE))],
        note: cosigned,
        entries,
        consistency,
        inclusion,
      };

      const honest = await check(binary, request);
      assert.equal(honest.code, 0, `${honest.lines.join("\n")}\n${honest.stderr}`);
      assert.ok(honest.lines.every((line) => line.startsWith("ok ")), honest.lines.join("\n"));
      assert.ok(honest.lines.some((l) => l.startsWith(`ok signature by ${origin}+`)));
      assert.ok(honest.lines.some((l) => l.startsWith(`ok signature by ${witness.name}+`)));
      assert.ok(honest.lines.some((l) => l.startsWith("ok checkpoint root is tlog's root")));
      assert.equal(honest.lines.filter((l) => l.includes("tlog.CheckTree")).length, 11);
      assert.equal(honest.lines.filter((l) => l.includes("tlog.CheckRecord")).length, 7);
      assert.equal(
        honest.lines.filter((l) => l.includes("RecordHash of the entry is the leaf hash")).length,
        7,
        "tlog's leaf hash of a block hash is our hashLeaf of its 32 bytes",
      );

      const otherSeed = new Uint8Array(32).fill(6);
      const otherNote = signCheckpoint(checkpoint, otherSeed);
      const forgedCosignature = cosigned.replace(
        /(\u2014 witness\.example\.org\/w1 )(\S+)/,
        (_, prefix, sig) => prefix + tamper(sig),
      );
      const cases: [string, (r: Request) => Request, RegExp][] = [
        ["a consistency proof hash changed", (r) => {
          const c = structuredClone(r);
          c.consistency[0].proof[1] = tamper(c.consistency[0].proof[1]);
          return c;
        }, /^FAIL consistency 1 -> 12: tlog.CheckTree/m],
        ["a new root changed", (r) => {
          const c = structuredClone(r);
          c.consistency[5].newRoot = tamper(c.consistency[5].newRoot);
          return c;
        }, /^FAIL consistency 5 -> 11: tlog.CheckTree/m],
        ["an inclusion proof hash changed", (r) => {
          const c = structuredClone(r);
          c.inclusion[2].proof[0] = tamper(c.inclusion[2].proof[0]);
          return c;
        }, /^FAIL inclusion 5 in 12: tlog.CheckRecord/m],
        ["an entry changed: the checkpoint's root is no longer tlog's", (r) => {
          const c = structuredClone(r);
          c.entries[3] = tamper(c.entries[3]);
          return c;
        }, /^FAIL checkpoint root is tlog's root/m],
        ["the checkpoint signed by another key under the same origin", (r) => ({
          ...r,
          cosigners: [],
          note: otherNote,
        }), /^FAIL note.Open: note has no verifiable signatures/m],
        [
          "a forged cosignature",
          (r) => ({ ...r, note: forgedCosignature }),
          /^FAIL note.Open: invalid signature for key witness/m,
        ],
      ];
      for (const [desc, change, expected] of cases) {
        const result = await check(binary, change(request));
        assert.equal(result.code, 1, `${desc}:\n${result.lines.join("\n")}`);
        assert.match(result.lines.join("\n"), expected, desc);
      }
    } finally {
      await server.shutdown();
      kv.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** A running witness process: its address, its printed vkey, what it printed, and how to stop it. */
type WitnessProcess = {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  vkey: string;
  output(): string;
  /** SIGTERM, then waits for the process and its output to end. */
  stop(): Promise<void>;
};

/**
 * Starts `deno task witness` with `args`: the task's own `deno run` line from deno.json, run
 * directly, so that the one process the test stops is the witness. Resolves once it prints its
 * vkey and address; throws, the process stopped, when it does not within 60 s.
 */
async function startWitness(args: string[]): Promise<WitnessProcess> {
  const task: string = JSON.parse(await Deno.readTextFile(CONFIG)).tasks.witness;
  const [deno, run, ...rest] = task.split(" ");
  assert.ok(deno === "deno" && run === "run", `the witness task is a deno run: ${task}`);
  const process = new Deno.Command(Deno.execPath(), {
    args: ["run", "--config", CONFIG, ...rest, ...args],
    cwd: ROOT.pathname,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const drain = (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    return stream.pipeTo(
      new WritableStream({
        write: (chunk) => void (out += decoder.decode(chunk, { stream: true })),
      }),
    ).catch(() => {});
  };
  const drained = Promise.all([drain(process.stdout), drain(process.stderr)]);
  let exited = false;
  const status = process.status.then((s) => {
    exited = true;
    return s;
  });
  const stop = async () => {
    if (!exited) {
      try {
        process.kill("SIGTERM");
      } catch {
        // Already gone.
      }
    }
    await status;
    await drained;
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const listening = /^listening on (http:\/\/\S+\/) /m.exec(out);
    const vkey = /^vkey (\S+)$/m.exec(out);
    if (listening && vkey) return { url: listening[1], vkey: vkey[1], output: () => out, stop };
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(`the witness did not start:\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Polls `probe` every 100 ms until it answers a value; throws `failure()` after `ms`. */
async function waitFor<T>(
  probe: () => Promise<T | null>,
  { ms, failure }: { ms: number; failure: () => Promise<string> },
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(await failure());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

Deno.test({
  name: reason === null || CI
    ? "Go's sumdb/note verifies a real server's checkpoint as cosigned by deno task witness"
    : `Go's sumdb/note checks the cosignature of deno task witness (skipped: ${reason})`,
  ignore: reason !== null && !CI,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    assert.equal(reason, null, `CI=true and the Go check cannot run: ${reason}`);
    const dir = await Deno.makeTempDir({ prefix: "ringvote-go-witness-" });
    let witness: WitnessProcess | null = null;
    let server: ServerProcess | null = null;
    try {
      const binary = await buildGoProgram(PROGRAM, dir, "checkpoint_check");
      // The server makes its key at its first start; made here first instead, the log's vkey is
      // known before the server starts, so the witness can be told it (`--log`) and the server
      // the witness (WITNESS_POLICY).
      const seed = crypto.getRandomValues(new Uint8Array(32));
      const key = serverPublicKey(seed);
      const origin = derivedOrigin(key);
      const logVkey = formatVerifierKey(verifierKey(origin, ED25519_TYPE, hexToBytes(key)));
      const kvPath = `${dir}/ledger.sqlite3`;
      const kv = await Deno.openKv(kvPath);
      await kv.set(ledgerKeys().serverKey(), { seed });
      kv.close();

      witness = await startWitness(["--log", logVkey, "--port", "0", "--state", `${dir}/witness`]);
      const witnessKey = parseVerifierKey(witness.vkey);
      const policy = `${dir}/witness-policy.txt`;
      await Deno.writeTextFile(
        policy,
        `witness w1 ${witness.vkey} ${witness.url.replace(/\/$/, "")}\n`,
      );
      server = await startServer({ env: { KV_PATH: kvPath, WITNESS_POLICY: policy } });
      const url = server.url;
      assert.equal((await call(url, "GET", "/api/server-key")).body.key, key);
      const diagnostics = async () =>
        `witnesses: ${JSON.stringify((await call(url, "GET", "/api/log/witnesses")).body)}\n` +
        `witness output:\n${witness?.output()}\nserver output:\n${server?.output()}`;

      // Three blocks of one vote each, sealed one after another: the witness sees the log grow.
      const voters = makeVoters(3);
      for (const v of voters) {
        assert.equal((await call(url, "POST", "/api/pki/key", { key: v.key })).status, 201);
      }
      for (const [i, voter] of voters.entries()) {
        const vote = await call(url, "POST", "/api/vote", signedVote(voter, voters, "Yes"));
        assert.equal(vote.status, 202, JSON.stringify(vote.body));
        await waitFor(
          async () => (await call(url, "GET", "/api/block/status")).body.height > i || null,
          {
            ms: 30_000,
            failure: async () =>
              `block ${i + 1} was not sealed within 30 s\n${await diagnostics()}`,
          },
        );
      }
      const size = (await call(url, "GET", "/api/block/status")).body.height + 1;
      assert.equal(size, 4, "genesis and three blocks");

      let served = "";
      const note = await waitFor(async () => {
        const res = await fetch(new URL("api/log/checkpoint", url));
        served = await res.text();
        assert.equal(res.status, 200, served);
        const parsed = parseNote(served);
        return parseCheckpoint(parsed.text).size === size && verifyCosignature(parsed, witnessKey)
          ? served
          : null;
      }, {
        ms: 30_000,
        failure: async () =>
          `the checkpoint of size ${size} did not carry the cosignature of ${witness?.vkey} ` +
          `within 30 s; last served:\n${served}\n${await diagnostics()}`,
      });
      assert.match(witness.output(), new RegExp(`^witness: cosigned \\S+ at size ${size}$`, "m"));
      console.log(`the checkpoint as served, cosigned by deno task witness:\n${note}`);

      const { blocks } = (await call(url, "GET", `/api/blocks?from=0&limit=${size}`)).body as {
        blocks: BlockRecord[];
      };
      assert.equal(blocks.length, size);
      const leaves = blocks.map((b) => hashLeaf(hexToBytes(b.hash)));
      const rootOf = (n: number) => bytesToBase64(rootOfSize(leaves, n));
      const text = async (path: string) => {
        const res = await fetch(new URL(path.slice(1), url));
        const body = await res.text();
        assert.equal(res.status, 200, `${path}: ${body}`);
        return body;
      };
      const consistency = [];
      for (const [m, n] of [[0, 4], [1, 4], [2, 4], [3, 4], [4, 4], [1, 2], [1, 3], [2, 3]]) {
        consistency.push({
          old: m,
          new: n,
          oldRoot: rootOf(m),
          newRoot: rootOf(n),
          proof: lines(await text(`/api/log/consistency/${m}/${n}`)),
        });
      }
      const inclusion = [];
      for (const [index, n] of [[0, 4], [1, 4], [2, 4], [3, 4], [0, 1], [1, 3]]) {
        inclusion.push({
          index,
          size: n,
          leafHash: bytesToBase64(leaves[index]),
          root: rootOf(n),
          proof: lines(await text(`/api/log/inclusion/${index}/${n}`)),
        });
      }
      const request: Request = {
        vkey: logVkey,
        cosigners: [witness.vkey],
        note,
        entries: blocks.map((b) => bytesToBase64(hexToBytes(b.hash))),
        consistency,
        inclusion,
      };

      const result = await check(binary, request);
      const report = `${result.lines.join("\n")}\n${result.stderr}`;
      assert.equal(result.code, 0, report);
      assert.ok(result.lines.every((line) => line.startsWith("ok ")), report);
      const id = (k: typeof witnessKey) => `${k.name}+${bytesToHex(k.keyId)}`;
      assert.ok(result.lines.includes(`ok signature by ${id(parseVerifierKey(logVkey))}`), report);
      assert.ok(result.lines.includes(`ok signature by ${id(witnessKey)}`), report);
      const time = result.lines.map((l) =>
        new RegExp(`^ok cosignature/v1 by ${escape(id(witnessKey))} at time (\\d+)$`).exec(l)
      ).find((m) => m !== null);
      assert.ok(time, `Go read the witness's cosignature/v1 timestamp:\n${report}`);
      assert.ok(Math.abs(Number(time[1]) - Date.now() / 1000) < 300, `a recent time: ${time[1]}`);
      assert.ok(result.lines.some((l) => l.startsWith("ok checkpoint root is tlog's root")));
      assert.equal(result.lines.filter((l) => l.includes("tlog.CheckTree")).length, 7);
      assert.equal(result.lines.filter((l) => l.includes("tlog.CheckRecord")).length, 6);

      // The witness's line with one bit of its signature changed: Go refuses the whole note.
      const forged = note.replace(
        new RegExp(`(\u2014 ${escape(witnessKey.name)} )(\\S+)`),
        (_, prefix, sig) => prefix + tamper(sig),
      );
      assert.notEqual(forged, note);
      const refused = await check(binary, { ...request, note: forged });
      assert.equal(refused.code, 1, refused.lines.join("\n"));
      assert.match(refused.lines.join("\n"), /^FAIL note.Open: invalid signature for key/m);
    } finally {
      await server?.stop();
      await witness?.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
