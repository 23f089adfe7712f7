// The log of protocol §4.10 proven by an independent implementation: tests/go/checkpoint_check,
// built here with Go and golang.org/x/mod's sumdb/note and sumdb/tlog, checks a real ledger's
// served checkpoint (with a witness cosignature added), consistency proofs between powers of two
// and between other sizes, and inclusion proofs, against the tree tlog computes itself from the
// served block hashes; then a tampered proof, a tampered root, a checkpoint signed by another key
// and a forged cosignature must each fail. Skipped, with the reason in its name, where Go or
// golang-golang-x-mod-dev is missing — except under CI=true, where that is a failure.
import assert from "node:assert/strict";
import { derivedOrigin } from "../lib/protocol/block_log.ts";
import { base64ToBytes, bytesToBase64, hexToBytes } from "../lib/protocol/bytes.ts";
import { parseCheckpoint, signCheckpoint } from "../lib/protocol/checkpoint.ts";
import { hashLeaf, rootOfSize } from "../lib/protocol/merkle.ts";
import {
  COSIGNATURE_V1_TYPE,
  ED25519_TYPE,
  formatNote,
  formatVerifierKey,
  parseNote,
  signCosignature,
  signerKey,
  verifierKey,
} from "../lib/protocol/note.ts";
import type { BlockRecord } from "../lib/protocol/schemas.ts";
import { createApp } from "../server/app.ts";
import { createStore } from "../server/store/mod.ts";
import { buildLedger } from "./helpers/ledger_builder.ts";
import { testVerifier } from "./helpers/test_verifier.ts";

const PROGRAM = new URL("./go/checkpoint_check/", import.meta.url);
const GO_NOTE = "/usr/share/gocode/src/golang.org/x/mod/sumdb/note";
const CI = Deno.env.get("CI") === "true";

/** Why the Go check cannot run here, or null when it can. */
async function missing(): Promise<string | null> {
  try {
    const { success } = await new Deno.Command("go", { args: ["version"], stdout: "null" })
      .output();
    if (!success) return "`go version` failed";
  } catch {
    return "go is not installed (apt-get install golang-go)";
  }
  try {
    await Deno.stat(GO_NOTE);
  } catch {
    return `${GO_NOTE} is missing (apt-get install golang-golang-x-mod-dev)`;
  }
  return null;
}

const reason = await missing();
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

/** Builds the program with Go in GOPATH mode, the Debian golang.org/x/mod on the GOPATH. */
async function build(dir: string): Promise<string> {
  const binary = `${dir}/checkpoint_check`;
  const { success, stderr } = await new Deno.Command("go", {
    args: ["build", "-o", binary, "."],
    cwd: PROGRAM.pathname,
    env: {
      GO111MODULE: "off",
      GOPATH: `${dir}/gopath:/usr/share/gocode`,
      GOCACHE: `${dir}/gocache`,
      GOFLAGS: "",
    },
  }).output();
  assert.ok(success, `go build failed:\n${new TextDecoder().decode(stderr)}`);
  return binary;
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
      const binary = await build(dir);
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
