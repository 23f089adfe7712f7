// POST {base}/log/cosignature and the cosignatures on GET {base}/log/checkpoint (protocol §4.10)
// through createApp over in-memory Deno KV: a verified cosignature is kept and shown after the
// log's own line on the checkpoint of that very size, each refusal has its status and code, a
// cosignature for an older size is never shown on a newer checkpoint, at most 16 strangers' keys
// are kept (a newcomer pushes out only a smaller tree's, the policy's witnesses never), no stranger
// may sign under the log's name, every ledger takes them, and GET {base}/log/witnesses lists the
// policy's witnesses. Status, then content type, then body.
import assert from "node:assert/strict";
import { derivedOrigin } from "../../../lib/protocol/block_log.ts";
import { hexToBytes } from "../../../lib/protocol/bytes.ts";
import { openCheckpoint, parseCheckpoint } from "../../../lib/protocol/checkpoint.ts";
import {
  COSIGNATURE_V1_TYPE,
  ED25519_TYPE,
  formatNote,
  formatVerifierKey,
  type NoteSigner,
  parseNote,
  signCosignature,
  signerKey,
  signNote,
  verifierKey,
  verifyCosignature,
} from "../../../lib/protocol/note.ts";
import { CosignatureAccepted, WitnessList } from "../../../lib/protocol/schemas.ts";
import { type AppOptions, createApp } from "../../../server/app.ts";
import { MAX_FUTURE_SECONDS, MAX_WITNESS_KEYS } from "../../../server/store/cosignatures.ts";
import { createLabLedger } from "../../../server/store/lab.ts";
import { createStore, type Store } from "../../../server/store/mod.ts";
import { createRounds } from "../../../server/store/rounds.ts";
import { parseWitnessPolicy } from "../../../server/witness_policy.ts";
import { buildLedger } from "../../helpers/ledger_builder.ts";

const ADMIN_TOKEN = "presenter-token-0123456789";
const TEXT = "text/plain; charset=utf-8";
const JSON_TYPE = "application/json";

type App = ReturnType<typeof createApp>;

/** A witness of the test: its signer, its cosignature/v1 vkey and key. */
function witness(name: string, fill: number) {
  const signer: NoteSigner = { name, seed: new Uint8Array(32).fill(fill) };
  const key = signerKey(signer, COSIGNATURE_V1_TYPE);
  return { signer, key, vkey: formatVerifierKey(key) };
}
type Witness = ReturnType<typeof witness>;

const w1 = witness("witness.example/w1", 1);
const w2 = witness("witness.example/w2", 2);
/** Now, in POSIX seconds, a little in the past so that no cosignature of the test is "future". */
const nowSeconds = () => Math.floor(Date.now() / 1000) - 60;

async function setup(config: AppOptions["config"] = {}) {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv, { now: () => 1_700_000_000_000 });
  const lab = await createLabLedger(kv, { maxKeys: 50, maxVotes: 50 });
  const rounds = await createRounds(kv, {
    election: store,
    electionIntervalMs: 250,
    adminToken: ADMIN_TOKEN,
    currentTtlMs: 0,
  });
  const app = createApp({ store, lab, rounds, config });
  return { kv, store, lab, app };
}

/** Seals `blocks` more blocks of two votes each. */
async function seal(store: Store, blocks: number, startAt = 1_700_000_060_000) {
  await buildLedger(store, { votes: blocks * 2, perBlock: 2, ringSize: 2, startAt });
}

/** The checkpoint served at `base`: its note, parsed, and its text. */
async function served(app: App, base = "/api") {
  const res = await app.request(`${base}/log/checkpoint`);
  const body = await res.text();
  assert.equal(res.status, 200, body);
  assert.equal(res.headers.get("content-type"), TEXT);
  const note = parseNote(body);
  return { body, note, text: note.text, checkpoint: parseCheckpoint(note.text) };
}

/** `w`'s cosignature line over checkpoint `text` at `timestamp`, as add-checkpoint answers it. */
function cosignatureLine(text: string, w: Witness, timestamp = nowSeconds()): string {
  const line = signCosignature(text, w.signer, timestamp);
  return formatNote({ text, signatures: [line] }).slice(text.length + 1, -1);
}

async function submit(app: App, body: unknown, base = "/api"): Promise<Response> {
  return await app.request(`${base}/log/cosignature`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Asserts status, then content type, then error code; answers the body. */
async function assertRefused(res: Response, status: number, code: string) {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(res.headers.get("content-type"), JSON_TYPE);
  assert.equal(body.error.code, code, JSON.stringify(body));
  assert.doesNotMatch(body.error.message, /\.$/);
  return body;
}

async function assertAccepted(res: Response, expected: CosignatureAccepted) {
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(res.headers.get("content-type"), JSON_TYPE);
  assert.ok(CosignatureAccepted.safeParse(body).success);
  assert.deepEqual(body, expected);
}

Deno.test("a verified cosignature is shown after the log's line; two of them each verify", async () => {
  const { kv, app, store } = await setup();
  try {
    await seal(store, 3);
    const { text, checkpoint } = await served(app);
    assert.equal(checkpoint.size, 4);
    const t = nowSeconds();
    await assertAccepted(
      await submit(app, { vkey: w1.vkey, size: 4, cosignature: cosignatureLine(text, w1, t) }),
      { size: 4, timestamp: t, stored: true },
    );
    await assertAccepted(
      await submit(app, { vkey: w2.vkey, size: 4, cosignature: cosignatureLine(text, w2, t + 1) }),
      { size: 4, timestamp: t + 1, stored: true },
    );

    const { body, note } = await served(app);
    assert.equal(note.text, text, "the same checkpoint text");
    assert.equal(note.signatures.length, 3, "the log's line, then two cosignatures");
    const { key } = await (await app.request("/api/server-key")).json();
    const origin = derivedOrigin(key);
    assert.equal(note.signatures[0].name, origin, "the log's own line comes first");
    assert.ok(openCheckpoint(body, verifierKey(origin, ED25519_TYPE, hexToBytes(key))));
    assert.deepEqual(verifyCosignature(note, w1.key), { timestamp: t });
    assert.deepEqual(verifyCosignature(note, w2.key), { timestamp: t + 1 });

    // The same cosignature again, or an older one for the same size: verified, kept as it was.
    await assertAccepted(
      await submit(app, { vkey: w1.vkey, size: 4, cosignature: cosignatureLine(text, w1, t) }),
      { size: 4, timestamp: t, stored: false },
    );
    await assertAccepted(
      await submit(app, { vkey: w1.vkey, size: 4, cosignature: cosignatureLine(text, w1, t - 5) }),
      { size: 4, timestamp: t - 5, stored: false },
    );
    assert.equal((await served(app)).body, body, "nothing changed");
  } finally {
    kv.close();
  }
});

Deno.test("a cosignature of an older size is kept but never shown on a newer checkpoint", async () => {
  const { kv, app, store } = await setup();
  try {
    await seal(store, 2);
    const older = await served(app);
    assert.equal(older.checkpoint.size, 3);
    await seal(store, 1, 1_700_001_000_000);
    const newer = await served(app);
    assert.equal(newer.checkpoint.size, 4);

    const t = nowSeconds();
    await assertAccepted(
      await submit(app, {
        vkey: w1.vkey,
        size: 3,
        cosignature: cosignatureLine(older.text, w1, t),
      }),
      { size: 3, timestamp: t, stored: true },
    );
    let shown = await served(app);
    assert.equal(shown.note.signatures.length, 1, "size 3's cosignature is not on size 4");
    assert.equal(verifyCosignature(shown.note, w1.key), false);

    // Cosigning size 4 replaces it; a later cosignature of size 3 does not bring it back.
    await assertAccepted(
      await submit(app, {
        vkey: w1.vkey,
        size: 4,
        cosignature: cosignatureLine(newer.text, w1, t),
      }),
      { size: 4, timestamp: t, stored: true },
    );
    await assertAccepted(
      await submit(app, {
        vkey: w1.vkey,
        size: 3,
        cosignature: cosignatureLine(older.text, w1, t + 9),
      }),
      { size: 3, timestamp: t + 9, stored: false },
    );
    shown = await served(app);
    assert.equal(shown.note.signatures.length, 2);
    assert.deepEqual(verifyCosignature(shown.note, w1.key), { timestamp: t });

    // The log grows: the cosignature of size 4 stays off the checkpoint of size 5.
    await seal(store, 1, 1_700_002_000_000);
    shown = await served(app);
    assert.equal(shown.checkpoint.size, 5);
    assert.equal(shown.note.signatures.length, 1);
  } finally {
    kv.close();
  }
});

Deno.test("POST /log/cosignature refuses each malformed or unverifiable submission", async (t) => {
  const { kv, app, store } = await setup();
  try {
    await seal(store, 2);
    const { text } = await served(app);
    const good = { vkey: w1.vkey, size: 3, cosignature: cosignatureLine(text, w1) };
    const ed25519Vkey = formatVerifierKey(signerKey(w1.signer, ED25519_TYPE));
    const noteLine = formatNote({ text, signatures: [signNote(text, w1.signer)] })
      .slice(text.length + 1, -1);

    await t.step("400 invalid_request: the body's shape", async () => {
      const cases: [string, unknown][] = [
        ["not JSON", "{"],
        ["no vkey", { size: 3, cosignature: good.cosignature }],
        ["size not an integer", { ...good, size: 2.5 }],
        ["size negative", { ...good, size: -1 }],
        ["size a string", { ...good, size: "3" }],
        ["two lines", { ...good, cosignature: `${good.cosignature}\n${good.cosignature}` }],
        ["a line too long", { ...good, cosignature: `${good.cosignature}${"A".repeat(700)}` }],
        ["a vkey too long", { ...good, vkey: `${w1.vkey}${"A".repeat(500)}` }],
      ];
      for (const [desc, body] of cases) {
        await assertRefused(await submit(app, body), 400, "invalid_request").catch((e) => {
          throw new Error(`${desc}: ${e.message}`);
        });
      }
    });

    await t.step("400 invalid_request: the vkey or the line", async () => {
      const cases: [string, unknown, RegExp][] = [
        ["not a vkey", { ...good, vkey: "witness.example/w1" }, /vkey/],
        ["a vkey with a wrong key ID", { ...good, vkey: w1.vkey.replace(/\+..../, "+0000") }, /ID/],
        ["an Ed25519 (0x01) vkey", { ...good, vkey: ed25519Vkey }, /type 0x04/],
        ["no em dash", { ...good, cosignature: good.cosignature.slice(2) }, /em dash/],
        ["no signature", { ...good, cosignature: "— witness.example/w1" }, /signature/],
        ["not base64", { ...good, cosignature: `${good.cosignature.slice(0, -4)}@@@@` }, /base64/],
        ["empty", { ...good, cosignature: "" }, /signature line/],
      ];
      for (const [desc, body, message] of cases) {
        const refused = await assertRefused(await submit(app, body), 400, "invalid_request");
        assert.match(refused.error.message, message, desc);
      }
    });

    await t.step("404 unknown_tree: a size the log has not reached", async () => {
      const refused = await assertRefused(
        await submit(app, { ...good, size: 4 }),
        404,
        "unknown_tree",
      );
      assert.match(refused.error.message, /size 4.*size is 3/);
    });

    await t.step("422 bad_cosignature: it does not verify, or is from the future", async () => {
      const future = nowSeconds() + 60 + MAX_FUTURE_SECONDS + 60;
      const older = cosignatureLine(
        text.replace(/^(.*)\n3\n.*\n$/, (_, origin) => `${origin}\n2\nAAAA\n`),
        w1,
      );
      const cases: [string, unknown, RegExp][] = [
        ["a cosignature of size 3 sent as size 2", { ...good, size: 2 }, /size 2/],
        ["over another text", { ...good, cosignature: older }, /does not verify/],
        ["by another key than the vkey", { ...good, vkey: w2.vkey }, /not by the key/],
        [
          "a plain note signature (0x01) line",
          { ...good, cosignature: noteLine },
          /not by the key/,
        ],
        [
          "a timestamp too far ahead",
          { ...good, cosignature: cosignatureLine(text, w1, future) },
          /in the future/,
        ],
      ];
      for (const [desc, body, message] of cases) {
        const refused = await assertRefused(await submit(app, body), 422, "bad_cosignature");
        assert.match(refused.error.message, message, desc);
      }
      assert.equal((await served(app)).note.signatures.length, 1, "nothing was kept");
    });

    await t.step("200: a timestamp a minute ahead is a clock, not a lie", async () => {
      const ahead = nowSeconds() + 120;
      await assertAccepted(
        await submit(app, { ...good, cosignature: cosignatureLine(text, w1, ahead) }),
        { size: 3, timestamp: ahead, stored: true },
      );
    });
  } finally {
    kv.close();
  }
});

Deno.test(`at most ${MAX_WITNESS_KEYS} strangers' keys: a new one never pushes out a tree as large as its own, the policy's never`, async () => {
  const pinnedWitness = witness("witness.example/pinned", 99);
  const policy = parseWitnessPolicy(
    `witness pinned ${pinnedWitness.vkey} http://127.0.0.1:9/\n`,
  );
  const { kv, app, store } = await setup({ witnessPolicy: { path: "policy", ...policy } });
  try {
    await seal(store, 1);
    const { text } = await served(app);
    const t0 = nowSeconds() - 10_000;
    // The policy's witness cosigned first, so it is the oldest of all.
    await assertAccepted(
      await submit(app, {
        vkey: pinnedWitness.vkey,
        size: 2,
        cosignature: cosignatureLine(text, pinnedWitness, t0),
      }),
      { size: 2, timestamp: t0, stored: true },
    );
    const strangers = Array.from(
      { length: MAX_WITNESS_KEYS + 1 },
      (_, i) => witness(`stranger.example/${i}`, 10 + i),
    );
    for (const [i, s] of strangers.entries()) {
      const timestamp = t0 + 1 + i;
      // Fresh keys cost nothing: one more at the same size is not kept, and evicts no one.
      await assertAccepted(
        await submit(app, {
          vkey: s.vkey,
          size: 2,
          cosignature: cosignatureLine(text, s, timestamp),
        }),
        { size: 2, timestamp, stored: i < MAX_WITNESS_KEYS },
      );
    }
    const { note } = await served(app);
    assert.equal(note.signatures.length, 1 + 1 + MAX_WITNESS_KEYS);
    assert.ok(verifyCosignature(note, pinnedWitness.key), "the policy's witness stays");
    for (const s of strangers.slice(0, MAX_WITNESS_KEYS)) {
      assert.ok(verifyCosignature(note, s.key), s.signer.name);
    }
    assert.equal(verifyCosignature(note, strangers[MAX_WITNESS_KEYS].key), false);

    // Over a larger tree, the newcomer takes the place of the smallest, oldest stranger.
    await seal(store, 1);
    const larger = (await served(app)).text;
    const last = strangers[MAX_WITNESS_KEYS];
    await assertAccepted(
      await submit(app, {
        vkey: last.vkey,
        size: 3,
        cosignature: cosignatureLine(larger, last, t0 + 50),
      }),
      { size: 3, timestamp: t0 + 50, stored: true },
    );
    // strangers[0] is gone: a newer cosignature of it at size 2 comes as a new key, and is not kept.
    await assertAccepted(
      await submit(app, {
        vkey: strangers[0].vkey,
        size: 2,
        cosignature: cosignatureLine(text, strangers[0], t0 + 100),
      }),
      { size: 2, timestamp: t0 + 100, stored: false },
    );
    const after = (await served(app)).note;
    assert.ok(verifyCosignature(after, last.key));
  } finally {
    kv.close();
  }
});

Deno.test("a stranger signing under the log's name, or a policy witness's name and key ID, is refused", async () => {
  const pinnedWitness = witness("witness.example/pinned", 99);
  const policy = parseWitnessPolicy(`witness pinned ${pinnedWitness.vkey} http://127.0.0.1:9/\n`);
  const { kv, app, store } = await setup({ witnessPolicy: { path: "policy", ...policy } });
  try {
    await seal(store, 1);
    const { text } = await served(app);
    const origin = text.slice(0, text.indexOf("\n"));
    const posing = witness(origin, 7);
    const res = await submit(app, {
      vkey: posing.vkey,
      size: 2,
      cosignature: cosignatureLine(text, posing, nowSeconds() - 10),
    });
    assert.equal(res.status, 422);
    assert.equal((await res.json()).error.code, "bad_cosignature");
    assert.equal((await served(app)).note.signatures.length, 1);
  } finally {
    kv.close();
  }
});

Deno.test("every ledger takes cosignatures over its own checkpoints: the lab and a round", async () => {
  const { kv, app, store, lab } = await setup();
  try {
    await seal(store, 2);
    await seal(await lab.current(), 2);
    /** Cosigns `base`'s checkpoint by `w` through `base`'s call; answers the body sent. */
    const cosign = async (base: string, w: Witness) => {
      const { text, checkpoint } = await served(app, base);
      const t = nowSeconds();
      const body = {
        vkey: w.vkey,
        size: checkpoint.size,
        cosignature: cosignatureLine(text, w, t),
      };
      await assertAccepted(await submit(app, body, base), {
        size: checkpoint.size,
        timestamp: t,
        stored: true,
      });
      assert.deepEqual(verifyCosignature((await served(app, base)).note, w.key), { timestamp: t });
      return body;
    };
    // Round 1 is the election: a cosignature sent there is on /api's checkpoint.
    await cosign("/api/rounds/1", w2);
    assert.ok(verifyCosignature((await served(app)).note, w2.key));
    const started = await app.request("/api/rounds", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ question: "Which colour?", choices: [] }),
    });
    assert.equal(started.status, 201);
    await cosign("/api/rounds/2", w1);
    const labBody = await cosign("/api/lab", w1);
    assert.equal(verifyCosignature((await served(app)).note, w1.key), false, "not on /api");
    // The lab's log and the election's have one size, 3, and other origins and roots: a
    // cosignature of one does not verify over the other.
    assert.equal((await served(app, "/api/lab")).checkpoint.size, 3);
    assert.equal((await served(app)).checkpoint.size, 3);
    await assertRefused(await submit(app, labBody), 422, "bad_cosignature");
  } finally {
    kv.close();
  }
});

Deno.test("GET /log/witnesses lists the policy's witnesses, empty without one", async () => {
  const policy = parseWitnessPolicy(
    `# two witnesses\nwitness one ${w1.vkey} http://127.0.0.1:9/\n` +
      `witness two ${w2.vkey} http://127.0.0.1:9/w2/\n`,
  );
  const { kv, app, store } = await setup({ witnessPolicy: { path: "policy", ...policy } });
  try {
    await seal(store, 1);
    const list = async (base: string) => {
      const res = await app.request(`${base}/log/witnesses`);
      const body = await res.json();
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), JSON_TYPE);
      assert.ok(WitnessList.safeParse(body).success, JSON.stringify(body));
      return body as WitnessList;
    };
    assert.deepEqual(await list("/api"), {
      witnesses: [
        {
          name: "one",
          vkey: w1.vkey,
          lastSize: null,
          lastCosignedAt: null,
          alarm: null,
          error: null,
        },
        {
          name: "two",
          vkey: w2.vkey,
          lastSize: null,
          lastCosignedAt: null,
          alarm: null,
          error: null,
        },
      ],
      pinned: [],
    });
    const { text } = await served(app);
    const t = nowSeconds();
    await submit(app, { vkey: w2.vkey, size: 2, cosignature: cosignatureLine(text, w2, t) });
    const [one, two] = (await list("/api/rounds/1")).witnesses;
    assert.equal(one.lastCosignedAt, null);
    assert.deepEqual(two, {
      name: "two",
      vkey: w2.vkey,
      lastSize: 2,
      lastCosignedAt: t * 1000,
      alarm: null,
      error: null,
    });
    assert.deepEqual(
      await list("/api/lab"),
      { witnesses: [], pinned: [] },
      "the lab pushes to no witness",
    );
  } finally {
    kv.close();
  }
});
