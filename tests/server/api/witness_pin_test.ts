// The room's witness (protocol §4.10): the presenter pins it with `POST {base}/log/witnesses/pin`,
// and strangers' cosignatures then never crowd it out, on the election's log or a round's; a
// stranger's line under the name and key ID of a kept key is refused, and a pin drops one kept
// before; `GET {base}/log/cosigned?key=` matches a witness by its whole vkey. Through createApp
// over in-memory Deno KV; a collision of key IDs (about 2^32 tries to make) is planted in KV.
import assert from "node:assert/strict";
import { bytesToHex } from "../../../lib/protocol/bytes.ts";
import { parseCheckpoint } from "../../../lib/protocol/checkpoint.ts";
import {
  COSIGNATURE_V1_TYPE,
  formatNote,
  formatVerifierKey,
  type NoteSigner,
  parseNote,
  signCosignature,
  signerKey,
  verifyCosignature,
} from "../../../lib/protocol/note.ts";
import { createApp } from "../../../server/app.ts";
import {
  type CosignatureSetRecord,
  MAX_PINNED_WITNESSES,
  MAX_WITNESS_KEYS,
} from "../../../server/store/cosignatures.ts";
import { createLabLedger } from "../../../server/store/lab.ts";
import { ledgerKeys } from "../../../server/store/layout.ts";
import { createStore, type Store } from "../../../server/store/mod.ts";
import { createRounds, roundPrefix } from "../../../server/store/rounds.ts";
import { buildLedger } from "../../helpers/ledger_builder.ts";

const ADMIN_TOKEN = "presenter-token-0123456789";

/** A witness of the test: its signer, key and vkey. */
function witness(name: string, fill: number) {
  const signer: NoteSigner = { name, seed: new Uint8Array(32).fill(fill) };
  const key = signerKey(signer, COSIGNATURE_V1_TYPE);
  return { signer, key, vkey: formatVerifierKey(key) };
}
type Witness = ReturnType<typeof witness>;

const projector = witness("witness.ringvote.local/0a1b2c3d", 200);
const strangers = Array.from(
  { length: MAX_WITNESS_KEYS + 1 },
  (_, i) => witness(`stranger.example/${i}`, 10 + i),
);
const nowSeconds = () => Math.floor(Date.now() / 1000) - 60;

async function setup() {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv, { now: () => 1_700_000_000_000 });
  const lab = await createLabLedger(kv, { maxKeys: 50, maxVotes: 50 });
  const rounds = await createRounds(kv, {
    election: store,
    electionIntervalMs: 250,
    adminToken: ADMIN_TOKEN,
    currentTtlMs: 0,
  });
  const app = createApp({ store, lab, rounds });
  return { kv, store, rounds, app };
}
type App = ReturnType<typeof createApp>;

async function seal(store: Store, blocks: number, startAt = 1_700_000_060_000) {
  await buildLedger(store, { votes: blocks * 2, perBlock: 2, ringSize: 2, startAt });
}

/** The checkpoint text served at `base`. */
async function checkpointText(app: App, base: string): Promise<string> {
  const res = await app.request(`${base}/log/checkpoint`);
  assert.equal(res.status, 200);
  return parseNote(await res.text()).text;
}

/** Submits `w`'s cosignature of `base`'s current checkpoint; answers `stored`. */
async function cosign(app: App, base: string, w: Witness, at = nowSeconds()): Promise<boolean> {
  const text = await checkpointText(app, base);
  const size = Number(text.split("\n")[1]);
  const line = signCosignature(text, w.signer, at);
  const res = await app.request(`${base}/log/cosignature`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      vkey: w.vkey,
      size,
      cosignature: formatNote({ text, signatures: [line] }).slice(text.length + 1, -1),
    }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.stored;
}

/** `POST {base}/log/witnesses/pin` with `vkey` and the `Authorization` given. */
function pin(app: App, vkey: string, authorization = `Bearer ${ADMIN_TOKEN}`, base = "/api") {
  return app.request(`${base}/log/witnesses/pin`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization },
    body: JSON.stringify({ vkey }),
  });
}

/** The sizes `base`'s newest checkpoint cosigned by `w` has, via `?key=` (0 when none). */
async function cosignedBy(app: App, base: string, key: string, min = 1): Promise<number> {
  const res = await app.request(`${base}/log/cosigned?min=${min}&key=${encodeURIComponent(key)}`);
  if (res.status === 404) return 0;
  const body = await res.text();
  assert.equal(res.status, 200, body);
  return Number(parseNote(body).text.split("\n")[1]);
}

Deno.test("a pinned room witness one size behind is never crowded out by strangers, in any round", async () => {
  const { kv, store, app } = await setup();
  try {
    await seal(store, 1);
    assert.equal(await cosign(app, "/api", projector), true);
    const pinned = await pin(app, projector.vkey);
    assert.equal(pinned.status, 200);
    assert.deepEqual(await pinned.json(), { pinned: [projector.vkey] });
    for (const base of ["/api", "/api/rounds/1"]) {
      const list = await (await app.request(`${base}/log/witnesses`)).json();
      assert.deepEqual(list, { witnesses: [], pinned: [projector.vkey] }, base);
    }
    // The log grows; free strangers cosign the new size before the projector's next poll.
    await seal(store, 1, 1_700_000_120_000);
    for (const [i, s] of strangers.entries()) {
      assert.equal(await cosign(app, "/api", s), i < MAX_WITNESS_KEYS, s.signer.name);
    }
    assert.equal(await cosignedBy(app, "/api", projector.vkey), 2, "its cosignature stays");
    assert.equal(await cosign(app, "/api", projector), true, "and its next one is kept");
    assert.equal(await cosignedBy(app, "/api", projector.vkey), 3);

    // A round's log: the room's pin holds there too.
    const started = await app.request("/api/rounds", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ question: "Which colour?", choices: [] }),
    });
    assert.equal(started.status, 201);
    // The round's ledger written as votes that committed while it was open for votes would be.
    const round = await createStore(kv, { prefix: roundPrefix(2) });
    await seal(round, 1);
    assert.equal(await cosign(app, "/api/rounds/2", projector), true);
    await seal(round, 1, 1_700_000_120_000);
    for (const s of strangers) await cosign(app, "/api/rounds/2", s);
    assert.equal(await cosign(app, "/api/rounds/2", projector), true);
    assert.equal(await cosignedBy(app, "/api/rounds/2", projector.vkey), 3);
  } finally {
    kv.close();
  }
});

Deno.test("pinning is the presenter's: 401 without the token, 400 for no witness key, 404 on the lab", async () => {
  const { kv, app } = await setup();
  try {
    for (const authorization of ["", "Bearer wrong-token-0123456789"]) {
      const res = await pin(app, projector.vkey, authorization);
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "unauthorized");
    }
    const logKey = "vote.example.org/log+01234567+AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB";
    for (const vkey of ["not a vkey", logKey]) {
      const res = await pin(app, vkey);
      assert.equal(res.status, 400, vkey);
      assert.equal((await res.json()).error.code, "invalid_request");
    }
    const lab = await pin(app, projector.vkey, undefined, "/api/lab");
    assert.equal(lab.status, 404);
    await lab.body?.cancel();
    // Beyond the most pins, the oldest goes.
    const many = Array.from(
      { length: MAX_PINNED_WITNESSES + 1 },
      (_, i) => witness(`p/${i}`, i + 1),
    );
    let last: { pinned: string[] } = { pinned: [] };
    for (const w of many) last = await (await pin(app, w.vkey)).json();
    assert.deepEqual(last.pinned, many.slice(1).map((w) => w.vkey));
  } finally {
    kv.close();
  }
});

/**
 * Writes into the election's kept cosignatures one of `vkey` over its current checkpoint whose line
 * carries `like`'s name and key ID: a collision of key IDs, as if found by about 2^32 tries.
 */
async function plantCollision(app: App, kv: Deno.Kv, vkey: string, like: Witness) {
  const { size, root } = parseCheckpoint(await checkpointText(app, "/api"));
  const key = ledgerKeys().cosignatures();
  const entry = await kv.get<CosignatureSetRecord>(key);
  const record: CosignatureSetRecord = entry.value ?? { cosignatures: [] };
  record.cosignatures.push({
    vkey,
    size,
    root,
    timestamp: nowSeconds(),
    line: { name: like.signer.name, keyId: like.key.keyId, signature: new Uint8Array(72) },
  });
  record.cosignatures.sort((a, b) => a.vkey < b.vkey ? -1 : 1);
  await kv.set(key, record);
}

Deno.test("a stranger under the name and key ID of a kept key is refused; a pin drops one kept", async () => {
  const { kv, store, app } = await setup();
  try {
    await seal(store, 1);
    // Kept: a cosignature whose line carries strangers[0]'s name and key ID under another vkey.
    await plantCollision(app, kv, strangers[1].vkey, strangers[0]);
    const text = await checkpointText(app, "/api");
    const line = signCosignature(text, strangers[0].signer, nowSeconds());
    const res = await app.request("/api/log/cosignature", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        vkey: strangers[0].vkey,
        size: 2,
        cosignature: formatNote({ text, signatures: [line] }).slice(text.length + 1, -1),
      }),
    });
    assert.equal(res.status, 422);
    assert.match((await res.json()).error.message, /name and key ID of .* a witness it keeps/);

    // A stranger's line under the projector's name and key ID was kept first: pinning the
    // projector drops it, and the projector's own line is then the only one of that name.
    await plantCollision(app, kv, strangers[2].vkey, projector);
    assert.equal((await pin(app, projector.vkey)).status, 200);
    assert.equal(await cosign(app, "/api", projector), true);
    const note = parseNote(await (await app.request("/api/log/checkpoint")).text());
    const named = note.signatures.filter((s) => s.name === projector.signer.name);
    assert.equal(named.length, 1);
    assert.ok(verifyCosignature(note, projector.key));
  } finally {
    kv.close();
  }
});

Deno.test("GET /log/cosigned?key= matches a witness by its whole vkey, not its 4-byte key ID", async () => {
  const { kv, store, app } = await setup();
  try {
    await seal(store, 1);
    const [w1, w2] = strangers;
    await cosign(app, "/api", w1);
    await cosign(app, "/api", w2);
    assert.equal(await cosignedBy(app, "/api", w1.vkey), 2);
    assert.equal(await cosignedBy(app, "/api", w1.vkey, 2), 0, "one of the quorum of 2");
    const both = await app.request(
      `/api/log/cosigned?min=2&key=${encodeURIComponent(w1.vkey)}&key=${
        encodeURIComponent(w2.vkey)
      }`,
    );
    assert.equal(both.status, 200);
    await both.body?.cancel();
    // A stranger's cosignature sharing w1's key ID counts for that key ID, never for w1's vkey.
    await plantCollision(app, kv, strangers[5].vkey, w1);
    assert.equal(await cosignedBy(app, "/api", bytesToHex(w1.key.keyId), 2), 2);
    assert.equal(await cosignedBy(app, "/api", w1.vkey, 2), 0);
    const bad = await app.request("/api/log/cosigned?key=vote.example.org%2Blog");
    assert.equal(bad.status, 400);
    await bad.body?.cancel();
  } finally {
    kv.close();
  }
});
