// `deno task witness` as an operator runs it: witness.ts in its own process, with the task's
// permissions, on a loopback port it picks. It prints its cosignature/v1 vkey and address and
// cosigns a log over HTTP under that vkey; killed with SIGKILL in the middle of a run of
// submissions and restarted on its state, it keeps its key and its record: a stale old size gets
// 409 with the size it cosigned, a fork 422. A second witness on the same state, and bad
// arguments, are refused with exit statuses 1 and 2.
import assert from "node:assert/strict";
import { join } from "node:path";
import { bytesToHex } from "../../lib/protocol/bytes.ts";
import {
  COSIGNATURE_V1_TYPE,
  formatVerifierKey,
  parseNote,
  parseVerifierKey,
  signerKey,
  verifyCosignature,
} from "../../lib/protocol/note.ts";
import { createTestLog, type TestLog } from "./test_log.ts";

const ROOT = new URL("../../", import.meta.url);
const WITNESS = new URL("witness.ts", ROOT).pathname;
const CONFIG = new URL("deno.json", ROOT).pathname;
/** The permissions of `deno task witness`. */
const PERMISSIONS = ["--allow-net", "--allow-read", "--allow-write"];

/** A running witness process. */
type WitnessProcess = {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** The vkey it printed. */
  vkey: string;
  stdout(): string;
  stderr(): string;
  /** Sends `signal` and waits for the process and its output to end. */
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
};

function command(args: string[]): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, "--config", CONFIG, WITNESS, ...args],
    cwd: ROOT.pathname,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/** Runs witness.ts with `args` to its end: exit status, stdout and stderr. */
async function runWitness(args: string[]) {
  const out = await command(args).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** Starts witness.ts with `args` and resolves once it prints the address it listens on. */
async function startWitness(args: string[]): Promise<WitnessProcess> {
  const process = command(args).spawn();
  let out = "";
  let err = "";
  const decoder = () => new TextDecoder();
  const drain = (stream: ReadableStream<Uint8Array>, append: (s: string) => void) => {
    const d = decoder();
    return stream.pipeTo(
      new WritableStream({ write: (chunk) => append(d.decode(chunk, { stream: true })) }),
    )
      .catch(() => {});
  };
  const drained = Promise.all([
    drain(process.stdout, (s) => out += s),
    drain(process.stderr, (s) => err += s),
  ]);
  let exited = false;
  const status = process.status.then((s) => {
    exited = true;
    return s;
  });
  const stop = async (signal: Deno.Signal = "SIGTERM") => {
    if (!exited) {
      try {
        process.kill(signal);
      } catch {
        // Already gone.
      }
    }
    const s = await status;
    await drained;
    return s;
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const listening = /^listening on (http:\/\/\S+\/) /m.exec(out);
    const vkey = /^vkey (\S+)$/m.exec(out);
    if (listening && vkey) {
      return { url: listening[1], vkey: vkey[1], stdout: () => out, stderr: () => err, stop };
    }
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(`the witness did not start:\n${out}\n${err}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** POSTs `body` to the witness's add-checkpoint: status, content type and body. */
async function post(witness: WitnessProcess, body: string) {
  const res = await fetch(new URL("add-checkpoint", witness.url), { method: "POST", body });
  return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
}

/** Asserts that `log.request(oldSize, size)` is cosigned under the witness's printed vkey. */
async function assertCosigned(
  witness: WitnessProcess,
  log: TestLog,
  oldSize: number,
  size: number,
) {
  const answer = await post(witness, log.request(oldSize, size));
  assert.equal(answer.status, 200, answer.body);
  assert.equal(answer.type, "text/plain; charset=utf-8");
  const verified = verifyCosignature(
    parseNote(log.checkpoint(size) + answer.body),
    parseVerifierKey(witness.vkey),
  );
  assert.ok(verified, `the cosignature of size ${size} verifies under ${witness.vkey}`);
  assert.ok(Math.abs(verified.timestamp - Date.now() / 1000) < 60, "it carries the current time");
}

Deno.test({
  name: "deno task witness prints its vkey and address, cosigns 1 → 5 → 12, and keeps its key",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const state = await Deno.makeTempDir({ prefix: "ringvote-witness-cli-" });
    const log = createTestLog();
    try {
      const witness = await startWitness(["--log", log.vkey, "--port", "0", "--state", state]);
      const key = parseVerifierKey(witness.vkey);
      const name = `ringvote-witness/${bytesToHex(key.publicKey.subarray(0, 4))}`;
      assert.equal(key.type, COSIGNATURE_V1_TYPE, "a cosignature/v1 vkey: type 0x04");
      assert.equal(key.name, name, "named after its key by default");
      assert.equal(formatVerifierKey(key), witness.vkey);
      assert.match(
        witness.vkey,
        /^ringvote-witness\/[0-9a-f]{8}\+[0-9a-f]{8}\+B[A-P][A-Za-z0-9+/]{42}$/,
      );
      assert.match(witness.url, /^http:\/\/127\.0\.0\.1:[1-9][0-9]*\/$/);
      assert.match(witness.stdout(), new RegExp(`^witness ${name}$`, "m"));
      assert.match(witness.stdout(), new RegExp(`^log ${log.origin} ${escape(log.vkey)}$`, "m"));

      await assertCosigned(witness, log, 0, 1);
      await assertCosigned(witness, log, 1, 5);
      await assertCosigned(witness, log, 5, 12);
      assert.match(
        witness.stderr(),
        /^witness: cosigned vote\.example\.org\/witness-test at size 12$/m,
      );
      const status = await witness.stop("SIGTERM");
      assert.equal(status.code, 0, "SIGTERM stops it cleanly");

      const keyFile = join(state, "witness-key");
      assert.equal((await Deno.stat(keyFile)).mode! & 0o777, 0o600);
      const again = await startWitness([
        "--log",
        log.vkey,
        "--port",
        "0",
        "--state",
        state,
        "--name",
        "witness.example.org/w1",
      ]);
      try {
        assert.deepEqual(parseVerifierKey(again.vkey).publicKey, key.publicKey, "the same key");
        assert.equal(parseVerifierKey(again.vkey).name, "witness.example.org/w1");
        const stale = await post(again, log.request(5, 20));
        assert.deepEqual(stale, { status: 409, type: "text/x.tlog.size", body: "12\n" });
        await assertCosigned(again, log, 12, 20);
      } finally {
        await again.stop();
      }
    } finally {
      await Deno.remove(state, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "killed with SIGKILL mid-run and restarted, it answers 409 with the size it cosigned and refuses a fork",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const state = await Deno.makeTempDir({ prefix: "ringvote-witness-kill-" });
    const log = createTestLog();
    const fork = createTestLog({ salt: "fork " });
    const args = ["--log", log.vkey, "--port", "0", "--state", state];
    try {
      const witness = await startWitness(args);
      await assertCosigned(witness, log, 0, 12);
      // Sizes 13, 14, … one after another; SIGKILL as the eleventh is sent, without waiting.
      let acknowledged = 12;
      let killed: Promise<Deno.CommandStatus> | null = null;
      for (let size = 13; size < 64 && killed === null; size++) {
        const answer = post(witness, log.request(size - 1, size)).catch(() => null);
        if (size === 23) killed = witness.stop("SIGKILL");
        const settled = await answer;
        if (settled?.status === 200) acknowledged = size;
        else if (killed === null) assert.fail(`size ${size}: ${JSON.stringify(settled)}`);
      }
      const status = await killed!;
      assert.equal(status.signal, "SIGKILL");
      assert.ok(acknowledged >= 22, `sizes up to 22 were cosigned, got ${acknowledged}`);

      const restarted = await startWitness(args);
      try {
        assert.equal(restarted.vkey, witness.vkey, "the same key after SIGKILL");
        // The record is every acknowledged cosignature, and at most the one in flight after it.
        const probe = await post(restarted, log.request(0, 63));
        assert.equal(probe.status, 409);
        assert.equal(probe.type, "text/x.tlog.size");
        const size = Number(probe.body.trim());
        assert.equal(probe.body, `${size}\n`);
        assert.ok(size === acknowledged || size === acknowledged + 1, `record ${size}`);

        const stale = await post(restarted, log.request(12, 40));
        assert.deepEqual(stale, { status: 409, type: "text/x.tlog.size", body: `${size}\n` });
        const forked = await post(restarted, fork.request(size, size));
        assert.deepEqual(forked, {
          status: 422,
          type: "text/plain; charset=utf-8",
          body:
            `The checkpoint of size ${size} has another root than the one cosigned at that size\n`,
        });
        await assertCosigned(restarted, log, size, 63);
        assert.match(restarted.stderr(), new RegExp(`^witness: REFUSED .* at size ${size}: `, "m"));
        assert.deepEqual(
          [...Deno.readDirSync(join(state, "logs"))].filter((e) => e.name.endsWith(".tmp")),
          [],
          "a killed writer's temporary file is gone",
        );
      } finally {
        await restarted.stop();
      }
    } finally {
      await Deno.remove(state, { recursive: true });
    }
  },
});

Deno.test({
  name: "a second witness on the same state directory exits 1",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const state = await Deno.makeTempDir({ prefix: "ringvote-witness-lock-" });
    const log = createTestLog();
    try {
      const first = await startWitness(["--log", log.vkey, "--port", "0", "--state", state]);
      try {
        const second = await runWitness(["--log", log.vkey, "--port", "0", "--state", state]);
        assert.equal(second.code, 1, second.stderr);
        assert.equal(second.stderr, `witness: another witness is running on "${state}"\n`);
      } finally {
        await first.stop();
      }
    } finally {
      await Deno.remove(state, { recursive: true });
    }
  },
});

Deno.test("bad arguments exit 2 with the usage; --help exits 0", async (t) => {
  const log = createTestLog();
  const cosigner = formatVerifierKey(
    signerKey({ name: "witness.example.org/w1", seed: new Uint8Array(32) }, COSIGNATURE_V1_TYPE),
  );
  const cases = [
    { desc: "no --log", args: [], error: "give at least one --log" },
    { desc: "--log without a value", args: ["--log"], error: "--log needs a value" },
    {
      desc: "--log not a vkey",
      args: ["--log", "example.org/log"],
      error: 'vkey must be <name>+<key ID>+<base64 key>; got "example.org/log"',
    },
    {
      desc: "--log a cosignature vkey",
      args: ["--log", cosigner],
      error: "--log must be an Ed25519 (type 0x01) vkey, got type 4",
    },
    {
      desc: "--port out of range",
      args: ["--log", log.vkey, "--port", "65536"],
      error: '--port must be a port number, 0 to 65535; got "65536"',
    },
    {
      desc: "--port not a number",
      args: ["--log", log.vkey, "--port=http"],
      error: '--port must be a port number, 0 to 65535; got "http"',
    },
    {
      desc: "--name with a space",
      args: ["--log", log.vkey, "--name", "my witness"],
      error: '--name must be a key name, without spaces or "+"; got "my witness"',
    },
    {
      desc: "--name with a +",
      args: ["--log", log.vkey, "--name", "a+b"],
      error: '--name must be a key name, without spaces or "+"; got "a+b"',
    },
    {
      desc: "an unknown option",
      args: ["--log", log.vkey, "--verbose"],
      error: 'unknown option "--verbose"',
    },
    {
      desc: "an argument",
      args: ["--log", log.vkey, "extra"],
      error: 'unexpected argument "extra"',
    },
  ];
  for (const { desc, args, error } of cases) {
    await t.step(desc, async () => {
      const run = await runWitness(args);
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, "");
      const [first, second] = run.stderr.split("\n");
      assert.ok(first.startsWith("witness: ") && first.endsWith(error), first);
      assert.match(second, /^usage: deno task witness --log VKEY/);
    });
  }
  await t.step("--help", async () => {
    const run = await runWitness(["--help"]);
    assert.equal(run.code, 0);
    assert.match(run.stdout, /^usage: deno task witness --log VKEY/);
    assert.match(run.stdout, /set\s+0\.0\.0\.0 to serve logs on other machines/);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
