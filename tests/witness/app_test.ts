// The witness's add-checkpoint (server/witness/app.ts) over `app.request`, on a state directory of
// its own: every status of c2sp.org/tlog-witness@v1.0.0 with its exact body and content type, a
// log cosigned at 1, 5 and 12 with each cosignature verified under the witness's vkey, a stale
// old size, a fork at the same size refused with the record unchanged, and concurrent submissions
// from one old size of which exactly one is cosigned.
import assert from "node:assert/strict";
import { join } from "node:path";
import { bytesToBase64, bytesToHex, utf8 } from "../../lib/protocol/bytes.ts";
import { signCheckpoint } from "../../lib/protocol/checkpoint.ts";
import { sha256 } from "../../lib/protocol/hash.ts";
import { emptyRoot } from "../../lib/protocol/merkle.ts";
import {
  COSIGNATURE_V1_TYPE,
  ED25519_TYPE,
  formatNote,
  formatVerifierKey,
  type NoteSigner,
  parseNote,
  parseVerifierKey,
  signerKey,
  signNote,
  verifyCosignature,
  verifyNoteSignature,
} from "../../lib/protocol/note.ts";
import { createWitnessApp, MAX_REQUEST_BYTES } from "../../server/witness/app.ts";
import { MAX_PROOF_LINES } from "../../server/witness/add_checkpoint.ts";
import { openStateStore, type WitnessStateStore } from "../../server/witness/state.ts";
import { createTestLog, otherSignature, requestBody, type TestLog } from "./test_log.ts";

const TEXT = "text/plain; charset=utf-8";
const SIZE = "text/x.tlog.size";
/** The injected clock: 2026-01-01T00:00:00.999Z, cosignatures carry it in whole seconds. */
const NOW = 1_767_225_600_999;
const signer: NoteSigner = { name: "ringvote-witness/test", seed: new Uint8Array(32).fill(42) };
/** The witness's vkey as `deno task witness` prints it. */
const witnessVkey = formatVerifierKey(signerKey(signer, COSIGNATURE_V1_TYPE));

type Harness = {
  log: TestLog;
  store: WitnessStateStore;
  dir: string;
  post(body: string | Uint8Array<ArrayBuffer>): Promise<Response>;
};

/** Runs `fn` with a witness for `log` (and `extraLogs`) on a fresh temporary state directory. */
async function withWitness(
  fn: (h: Harness) => Promise<void>,
  { log = createTestLog(), extraLogs = [] as string[] } = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-witness-" });
  const store = await openStateStore(dir);
  try {
    const logs = [log.vkey, ...extraLogs].map(parseVerifierKey);
    const app = createWitnessApp({ signer, logs, store, now: () => NOW });
    const post = async (body: string | Uint8Array<ArrayBuffer>) =>
      await app.request("/add-checkpoint", { method: "POST", body });
    await fn({ log, store, dir, post });
  } finally {
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Asserts status, then content type, then the exact body. */
async function assertAnswer(
  res: Response,
  status: number,
  contentType: string,
  body: string | RegExp,
): Promise<string> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  assert.equal(res.headers.get("content-type"), contentType);
  if (typeof body === "string") assert.equal(text, body);
  else assert.match(text, body);
  return text;
}

/** Asserts a 200 with one cosignature line, verifying under the witness's vkey; its timestamp. */
async function assertCosigned(res: Response, note: string): Promise<number> {
  const lines = await assertAnswer(
    res,
    200,
    TEXT,
    /^\u2014 ringvote-witness\/test [A-Za-z0-9+/]{102}==\n$/,
  );
  // The spec's way to read it: append the lines to the checkpoint and open it as a note.
  const cosigned = parseNote(note + lines);
  const verified = verifyCosignature(cosigned, parseVerifierKey(witnessVkey));
  assert.ok(verified, "the cosignature verifies under the witness's vkey");
  return verified.timestamp;
}

Deno.test("cosigns a log at 1, 5 and 12, each cosignature verifying under the witness's vkey", async () => {
  await withWitness(async ({ log, store, dir, post }) => {
    let old = 0;
    for (const size of [1, 5, 12]) {
      const note = log.checkpoint(size);
      const body = requestBody(old, log.proof(old, size), note);
      assert.equal(await assertCosigned(await post(body), note), Math.floor(NOW / 1000));
      const latest = await store.latest(log.origin);
      assert.equal(latest?.size, size);
      assert.deepEqual(latest?.root, log.root(size));
      old = size;
    }
    // The record: one file per origin, named by the origin's hash, holding the cosigned note.
    const file = join(dir, "logs", `${bytesToHex(sha256(utf8(log.origin)))}.json`);
    const record = JSON.parse(await Deno.readTextFile(file));
    assert.deepEqual(Object.keys(record), ["origin", "size", "root", "note"]);
    assert.equal(record.origin, log.origin);
    assert.equal(record.size, 12);
    assert.equal(record.root, bytesToBase64(log.root(12)));
    const kept = parseNote(record.note);
    assert.ok(verifyNoteSignature(kept, log.key));
    assert.ok(verifyCosignature(kept, parseVerifierKey(witnessVkey)));
    assert.deepEqual(
      [...Deno.readDirSync(join(dir, "logs"))].map((e) => e.name),
      [`${bytesToHex(sha256(utf8(log.origin)))}.json`],
      "no temporary file is left",
    );
  });
});

Deno.test("the checkpoint last cosigned is cosigned again, and the record stays", async () => {
  await withWitness(async ({ log, store, post }) => {
    await assertCosigned(await post(log.request(0, 5)), log.checkpoint(5));
    const before = await store.latest(log.origin);
    await assertCosigned(await post(log.request(5, 5)), log.checkpoint(5));
    assert.deepEqual(await store.latest(log.origin), before);
  });
});

Deno.test("answers a stale old size 409 text/x.tlog.size with the size it last cosigned", async () => {
  await withWitness(async ({ log, store, post }) => {
    await t409(post(log.request(3, 5)), "0\n", "nothing cosigned yet: its size is 0");
    await assertCosigned(await post(log.request(0, 5)), log.checkpoint(5));
    await t409(post(log.request(1, 12)), "5\n", "an old size below the latest");
    await t409(post(log.request(0, 12)), "5\n", "old 0, to learn the latest size");
    await t409(post(log.request(7, 12)), "5\n", "an old size above the latest");
    assert.equal((await store.latest(log.origin))?.size, 5);
  });

  async function t409(res: Promise<Response>, body: string, desc: string) {
    const answer = await res;
    assert.equal(answer.status, 409, desc);
    await assertAnswer(answer, 409, SIZE, body);
  }
});

Deno.test("refuses a fork at the size it cosigned 422, and keeps its record", async () => {
  const fork = createTestLog({ salt: "fork " });
  await withWitness(async ({ log, store, dir, post }) => {
    await assertCosigned(await post(log.request(0, 12)), log.checkpoint(12));
    const before = await store.latest(log.origin);
    const file = join(dir, "logs", `${bytesToHex(sha256(utf8(log.origin)))}.json`);
    const bytes = await Deno.readFile(file);

    await assertAnswer(
      await post(fork.request(12, 12)),
      422,
      TEXT,
      "The checkpoint of size 12 has another root than the one cosigned at that size\n",
    );
    await assertAnswer(
      await post(requestBody(12, fork.proof(12, 20), fork.checkpoint(20))),
      422,
      TEXT,
      "The consistency proof from size 12 to 20 does not verify\n",
    );
    assert.deepEqual(await store.latest(log.origin), before);
    assert.deepEqual(await Deno.readFile(file), bytes, "the record's bytes are unchanged");
    // The honest log goes on from the record.
    await assertCosigned(await post(log.request(12, 20)), log.checkpoint(20));
  }, { log: createTestLog() });
});

Deno.test("answers 422 to a consistency proof that does not verify", async (t) => {
  await withWitness(async ({ log, store, post }) => {
    await assertCosigned(await post(log.request(0, 5)), log.checkpoint(5));
    const proof = log.proof(5, 12);
    const flipped = proof.map((h, i) => i === 1 ? h.map((b, j) => j === 0 ? b ^ 1 : b) : h);
    const cases = [
      { desc: "a hash of the proof changed", proof: flipped },
      { desc: "the proof's last hash dropped", proof: proof.slice(0, -1) },
      { desc: "a hash added to the proof", proof: [...proof, proof[0]] },
      { desc: "the proof of other sizes", proof: log.proof(4, 12) },
      { desc: "no proof", proof: [] },
    ];
    for (const { desc, proof } of cases) {
      await t.step(desc, async () => {
        await assertAnswer(
          await post(requestBody(5, proof, log.checkpoint(12))),
          422,
          TEXT,
          "The consistency proof from size 5 to 12 does not verify\n",
        );
      });
    }
    await t.step("old size 0 with a proof, once 5 is cosigned: 409 comes first", async () => {
      await assertAnswer(
        await post(requestBody(0, log.proof(1, 12), log.checkpoint(12))),
        409,
        SIZE,
        "5\n",
      );
    });
    assert.equal((await store.latest(log.origin))?.size, 5);
  });
  await withWitness(async ({ log, store, post }) => {
    await t.step("a proof from old size 0, with nothing cosigned yet", async () => {
      await assertAnswer(
        await post(requestBody(0, [log.root(1)], log.checkpoint(5))),
        422,
        TEXT,
        "The consistency proof from size 0 to 5 must be empty\n",
      );
    });
    await t.step("a proof between equal sizes", async () => {
      await assertCosigned(await post(log.request(0, 5)), log.checkpoint(5));
      await assertAnswer(
        await post(requestBody(5, [log.root(5)], log.checkpoint(5))),
        422,
        TEXT,
        "The consistency proof from size 5 to 5 must be empty\n",
      );
    });
    await t.step("a checkpoint of size 0 with another root than the empty tree's", async () => {
      const other = createTestLog();
      await withWitness(async ({ post }) => {
        await assertAnswer(
          await post(requestBody(0, [], other.checkpoint(0, other.root(1)))),
          422,
          TEXT,
          "A checkpoint of size 0 must have the empty tree's root\n",
        );
        await assertCosigned(
          await post(requestBody(0, [], other.checkpoint(0, emptyRoot()))),
          other.checkpoint(0),
        );
      }, { log: other });
    });
    assert.equal((await store.latest(log.origin))?.size, 5);
  });
});

Deno.test("answers 404 to a checkpoint of a log it does not witness", async () => {
  await withWitness(async ({ post }) => {
    const stranger = createTestLog({ origin: "elsewhere.example/log" });
    await assertAnswer(
      await post(stranger.request(0, 5)),
      404,
      TEXT,
      'Unknown log "elsewhere.example/log"\n',
    );
  });
});

Deno.test("answers 403 unless a trusted key of the log signs the checkpoint", async (t) => {
  const log = createTestLog();
  const impostor = createTestLog({ seed: new Uint8Array(32).fill(12) });
  const refused = 'No valid signature by a key of log "vote.example.org/witness-test"\n';
  await withWitness(async ({ store, post }) => {
    await t.step("signed by another key under the log's name", async () => {
      await assertAnswer(await post(impostor.request(0, 5)), 403, TEXT, refused);
    });
    await t.step("a line of the log's key that does not verify", async () => {
      const note = parseNote(log.checkpoint(5));
      const signature = note.signatures[0].signature.map((b, i) => i === 0 ? b ^ 1 : b);
      const bad = formatNote({
        text: note.text,
        signatures: [{ ...note.signatures[0], signature }],
      });
      await assertAnswer(await post(requestBody(0, [], bad)), 403, TEXT, refused);
    });
    await t.step("a good line of the log's key and a bad one of it", async () => {
      const note = parseNote(log.checkpoint(5));
      const bad = { ...note.signatures[0], signature: new Uint8Array(64) };
      const twice = formatNote({ text: note.text, signatures: [note.signatures[0], bad] });
      await assertAnswer(await post(requestBody(0, [], twice)), 403, TEXT, refused);
    });
    await t.step("two different lines of the log's key, each valid on its own", async () => {
      const note = parseNote(log.checkpoint(5));
      const other = { ...note.signatures[0], signature: otherSignature(log.seed, note.text) };
      assert.ok(
        verifyNoteSignature({ text: note.text, signatures: [other] }, log.key),
        "the second line verifies alone",
      );
      const two = formatNote({ text: note.text, signatures: [note.signatures[0], other] });
      await assertAnswer(await post(requestBody(0, [], two)), 403, TEXT, refused);
    });
    await t.step("lines of unknown keys are ignored", async () => {
      const note = parseNote(log.checkpoint(5));
      const other = signNote(note.text, { name: "someone.example/else", seed: impostor.seed });
      const mixed = formatNote({ text: note.text, signatures: [other, note.signatures[0]] });
      await assertCosigned(await post(requestBody(0, [], mixed)), mixed);
    });
    assert.equal((await store.latest(log.origin))?.size, 5);
  }, { log });
  await t.step("one line of the log's key a hundred times: cosigned", async () => {
    await withWitness(async ({ post }) => {
      const note = parseNote(log.checkpoint(3));
      const copies = formatNote({
        text: note.text,
        signatures: Array(99).fill(note.signatures[0]),
      });
      await assertCosigned(await post(requestBody(0, [], copies)), copies);
    }, { log });
  });
  await t.step("a second key of the log (--log given twice) is trusted too", async () => {
    const next = createTestLog({ seed: new Uint8Array(32).fill(13) });
    await withWitness(async ({ post }) => {
      await assertCosigned(await post(next.request(0, 5)), next.checkpoint(5));
      await assertCosigned(await post(log.request(5, 12)), log.checkpoint(12));
    }, { log, extraLogs: [next.vkey] });
  });
});

Deno.test("answers 400 to an old size above the checkpoint's size", async () => {
  await withWitness(async ({ log, store, post }) => {
    await assertAnswer(
      await post(requestBody(6, [], log.checkpoint(5))),
      400,
      TEXT,
      "Old size 6 is above the checkpoint's size 5\n",
    );
    assert.equal(await store.latest(log.origin), null);
  });
});

Deno.test("answers 400 to a malformed request", async (t) => {
  const log = createTestLog();
  const note = log.checkpoint(5);
  const hash = bytesToBase64(log.root(3));
  const { text } = parseNote(note);
  const lineOf = (s: string) => `${s}\n`;
  const cases: { desc: string; body: string | Uint8Array<ArrayBuffer>; reason: string }[] = [
    { desc: "empty body", body: "", reason: "the body has no empty line before the checkpoint" },
    {
      desc: "no empty line",
      body: "old 0\n" + text,
      reason: "the body has no empty line before the checkpoint",
    },
    {
      desc: "no old size line",
      body: `\n${note}`,
      reason: 'the first line must be "old <size>", in decimal without leading zeroes',
    },
    ...["old 05", "old -1", "old 1.0", "Old 1", "old  1", "old 1 ", "old 0x1", "old"].map((s) => ({
      desc: `old size line "${s}"`,
      body: `${lineOf(s)}\n${note}`,
      reason: 'the first line must be "old <size>", in decimal without leading zeroes',
    })),
    {
      desc: "old size over 2^53 - 1",
      body: requestBody("9007199254740992", [], note),
      reason: "the old size is over 2^53 - 1",
    },
    {
      desc: "CRLF line endings",
      body: `old 0\r\n\r\n${note}`,
      reason: 'the first line must be "old <size>", in decimal without leading zeroes',
    },
    {
      desc: "a proof line that is not base64",
      body: `old 0\n${hash.slice(0, -2)}!=\n\n${note}`,
      reason: "proof line 1 is not padded standard base64",
    },
    {
      desc: "a proof line without padding",
      body: `old 0\n${hash.slice(0, -1)}\n\n${note}`,
      reason: "proof line 1 is not padded standard base64",
    },
    {
      desc: "a proof line of 31 bytes",
      body: `old 0\n${bytesToBase64(new Uint8Array(31))}\n\n${note}`,
      reason: "proof line 1 must be 32 bytes, got 31",
    },
    {
      desc: `${MAX_PROOF_LINES + 1} proof lines`,
      body: `old 0\n${lineOf(hash).repeat(MAX_PROOF_LINES + 1)}\n${note}`,
      reason: `the proof has ${MAX_PROOF_LINES + 1} lines, over ${MAX_PROOF_LINES}`,
    },
    {
      desc: "a checkpoint without signatures",
      body: `old 0\n\n${text}`,
      reason: "note has no blank line before its signatures",
    },
    {
      desc: "a checkpoint body of two lines",
      body: requestBody(0, [], signBody("vote.example.org/witness-test\n5\n")),
      reason: "checkpoint must have an origin, a size and a root",
    },
    {
      desc: "a checkpoint size with a leading zero",
      body: requestBody(0, [], signBody(text.replace("\n5\n", "\n05\n"))),
      reason: "checkpoint size must be a decimal without leading zeroes",
    },
    {
      desc: "a note that is not UTF-8",
      body: Uint8Array.from([...utf8("old 0\n\n"), 0xff, ...utf8(note)]),
      reason: "note is not valid UTF-8",
    },
  ];
  await withWitness(async ({ store, post }) => {
    for (const { desc, body, reason } of cases) {
      await t.step(desc, async () => {
        await assertAnswer(await post(body), 400, TEXT, `Malformed request: ${reason}\n`);
      });
    }
    assert.equal(await store.latest(log.origin), null, "nothing was recorded");
  }, { log });

  function signBody(body: string): string {
    return formatNote({
      text: body,
      signatures: [signNote(body, { name: log.origin, seed: log.seed })],
    });
  }
});

Deno.test("of concurrent submissions from one old size, exactly one is cosigned", async (t) => {
  await withWitness(async ({ log, store, post }) => {
    await assertCosigned(await post(log.request(0, 5)), log.checkpoint(5));
    await t.step("twenty checkpoints of sizes 6 to 25, all from old size 5", async () => {
      const sizes = Array.from({ length: 20 }, (_, i) => 6 + i);
      const answers = await Promise.all(sizes.map((size) => post(log.request(5, size))));
      const ok = answers.flatMap((res, i) => res.status === 200 ? [sizes[i]] : []);
      assert.equal(ok.length, 1, `exactly one 200, got ${ok.length}`);
      const [winner] = ok;
      for (const [i, res] of answers.entries()) {
        if (sizes[i] === winner) await assertCosigned(res, log.checkpoint(winner));
        else await assertAnswer(res, 409, SIZE, `${winner}\n`);
      }
      assert.equal((await store.latest(log.origin))?.size, winner);
    });
    await t.step("the same checkpoint submitted twenty times at once", async () => {
      const from = (await store.latest(log.origin))!.size;
      const body = log.request(from, 40);
      const answers = await Promise.all(Array.from({ length: 20 }, () => post(body)));
      const statuses = answers.map((res) => res.status);
      assert.equal(statuses.filter((s) => s === 200).length, 1, String(statuses));
      for (const res of answers) {
        if (res.status === 200) await assertCosigned(res, log.checkpoint(40));
        else await assertAnswer(res, 409, SIZE, "40\n");
      }
    });
  });
});

Deno.test("answers other methods 405, other paths 404 and oversized bodies 413", async () => {
  await withWitness(async ({ log, store, post }) => {
    const dir = await Deno.makeTempDir({ prefix: "ringvote-witness-" });
    const other = await openStateStore(dir);
    try {
      const app = createWitnessApp({ signer, logs: [log.key], store: other });
      const get = await app.request("/add-checkpoint");
      assert.equal(get.headers.get("allow"), "POST");
      await assertAnswer(get, 405, TEXT, "add-checkpoint takes POST\n");
      await assertAnswer(
        await app.request("/checkpoint", { method: "POST", body: log.request(0, 5) }),
        404,
        TEXT,
        'No such path "/checkpoint"\n',
      );
    } finally {
      other.close();
      await Deno.remove(dir, { recursive: true });
    }
    const huge = `old 0\n\n${log.checkpoint(5)}`.padEnd(MAX_REQUEST_BYTES + 1, "x");
    await assertAnswer(
      await post(huge),
      413,
      TEXT,
      `Request body is larger than ${MAX_REQUEST_BYTES} bytes\n`,
    );
    assert.equal(await store.latest(log.origin), null);
  });
});

Deno.test("a record it cannot read fails closed: 500, nothing cosigned", async () => {
  await withWitness(async ({ log, dir, post }) => {
    await assertCosigned(await post(log.request(0, 5)), log.checkpoint(5));
    const file = join(dir, "logs", `${bytesToHex(sha256(utf8(log.origin)))}.json`);
    await Deno.writeTextFile(file, '{"origin": "vote.example.org/witness-test", "size": 0}');
    const errors: unknown[] = [];
    const quiet = console.error;
    console.error = (...args: unknown[]) => errors.push(args);
    try {
      await assertAnswer(await post(log.request(0, 12)), 500, TEXT, "Internal error\n");
    } finally {
      console.error = quiet;
    }
    assert.equal(errors.length, 1, "the cause is logged");
  });
});

Deno.test("createWitnessApp refuses a log key that is not Ed25519", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-witness-" });
  const store = await openStateStore(dir);
  try {
    const cosigner = signerKey(
      { name: "vote.example.org/log", seed: signer.seed },
      COSIGNATURE_V1_TYPE,
    );
    assert.throws(() => createWitnessApp({ signer, logs: [cosigner], store }), RangeError);
    const ok = signerKey({ name: "vote.example.org/log", seed: signer.seed }, ED25519_TYPE);
    createWitnessApp({ signer, logs: [ok, ok], store });
  } finally {
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a checkpoint with extension lines is cosigned over its whole text", async () => {
  const log = createTestLog();
  await withWitness(async ({ post }) => {
    const note = signCheckpoint(
      { origin: log.origin, size: 5, root: log.root(5), extensions: ["x-ringvote height 4"] },
      log.seed,
    );
    await assertCosigned(await post(requestBody(0, [], note)), note);
  }, { log });
});
