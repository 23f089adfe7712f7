// The log pushes to its witnesses (server/witness_push.ts, protocol §4.10) against the project's
// own witness (server/witness/app.ts) served over HTTP on 127.0.0.1: the first push from 0, the
// next from the size last cosigned with its consistency proof, a witness restarted ahead of what
// the log believed (409, then again from its size), a fork (422) and a witness ahead of the log
// (409 above its size) raising alarms that stop the pushes until the next start, answers a log
// cannot use, a witness that never answers while sealing and voting go on, a witness that does
// not know the log (an error, with a pause before the next try), and a push asked for while one is
// in flight.
import assert from "node:assert/strict";
import { hexToBytes } from "../../lib/protocol/bytes.ts";
import { openCheckpoint, parseCheckpoint, signCheckpoint } from "../../lib/protocol/checkpoint.ts";
import {
  COSIGNATURE_V1_TYPE,
  ED25519_TYPE,
  formatNote,
  formatVerifierKey,
  type NoteSigner,
  parseNote,
  signCosignature,
  signerKey,
  verifierKey,
  verifyCosignature,
} from "../../lib/protocol/note.ts";
import { type WitnessList, WitnessStatus } from "../../lib/protocol/schemas.ts";
import { createApp } from "../../server/app.ts";
import { sealNextBlock } from "../../server/sealer.ts";
import { createBlockLog } from "../../server/store/block_log.ts";
import { ledgerKeys } from "../../server/store/layout.ts";
import { createStore, type Store } from "../../server/store/mod.ts";
import { createWitnessApp } from "../../server/witness/app.ts";
import { openStateStore, type WitnessStateStore } from "../../server/witness/state.ts";
import { parseWitnessPolicy, type PolicyWitness } from "../../server/witness_policy.ts";
import {
  createWitnessPusher,
  FIRST_BACKOFF_MS,
  type WitnessPushOptions,
} from "../../server/witness_push.ts";
import { buildLedger } from "../helpers/ledger_builder.ts";
import { makeVoters, ringFor, signedVote } from "../helpers/ledger_fixtures.ts";

const ORIGIN = "vote.example.org/log";
/** The log's key seed, shared by the forked ledgers of the tests. */
const LOG_SEED = new Uint8Array(32).fill(7);
const witnessSigner: NoteSigner = { name: "witness.example/w1", seed: new Uint8Array(32).fill(42) };
const witnessKey = signerKey(witnessSigner, COSIGNATURE_V1_TYPE);
const logKey = signerKey({ name: ORIGIN, seed: LOG_SEED }, ED25519_TYPE);

/** A ledger over in-memory KV signing with {@link LOG_SEED}: several ledgers share one log key. */
async function ledger() {
  const kv = await Deno.openKv(":memory:");
  await kv.set(ledgerKeys().serverKey(), { seed: LOG_SEED });
  const store = await createStore(kv, { now: () => 1_700_000_000_000 });
  return { kv, store };
}

/** Seals `blocks` more blocks of two votes each, timestamps from `startAt` (which makes forks). */
async function seal(store: Store, blocks: number, startAt: number) {
  await buildLedger(store, { votes: 2 * blocks, perBlock: 2, ringSize: 2, startAt });
}

/** The project's witness over a state directory, served on 127.0.0.1; its app can be replaced. */
async function startWitness() {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-push-" });
  let state: WitnessStateStore = await openStateStore(dir);
  const appOver = (s: WitnessStateStore) =>
    createWitnessApp({ signer: witnessSigner, logs: [logKey], store: s });
  let app = appOver(state);
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => app.fetch(req),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    state: () => state,
    /** Stops the witness, lets `change` edit its state, and starts it again on the same address. */
    async restart(change: (state: WitnessStateStore) => Promise<void>) {
      state.close();
      state = await openStateStore(dir);
      await change(state);
      app = appOver(state);
    },
    async stop() {
      await server.shutdown();
      state.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The policy naming the witness at `url`. */
function policyFor(url: string): PolicyWitness[] {
  return parseWitnessPolicy(`witness w1 ${formatVerifierKey(witnessKey)} ${url}\n`).witnesses;
}

/** A pusher recording every request body it sends and every error it logs. */
function recordingPusher(
  store: Store,
  witnesses: PolicyWitness[],
  options: Partial<WitnessPushOptions> = {},
) {
  const sent: string[] = [];
  const errors: string[] = [];
  const send = options.fetch ?? fetch;
  const pusher = createWitnessPusher({
    store,
    witnesses,
    origin: ORIGIN,
    logger: { error: (...args: unknown[]) => errors.push(args.map(String).join(" ")) },
    ...options,
    fetch: (input, init) => {
      sent.push(String(init?.body));
      return send(input, init);
    },
  });
  return { pusher, sent, errors };
}

/** The first line of each request body: `old <size>`. */
const oldLines = (sent: string[]) => sent.map((body) => body.split("\n", 1)[0]);

/** The served checkpoint of `store`'s app: opens under the log key; the witness's timestamp. */
async function servedCheckpoint(store: Store, witnesses: PolicyWitness[] = []) {
  const app = createApp({
    store,
    config: { logOrigin: ORIGIN, witnessPolicy: { path: "p", witnesses, notes: [] } },
  });
  const res = await app.request("/api/log/checkpoint");
  const body = await res.text();
  assert.equal(res.status, 200, body);
  const opened = openCheckpoint(body, logKey);
  assert.ok(opened, "the checkpoint opens under the log's key");
  const list = await (await app.request("/api/log/witnesses")).json() as WitnessList;
  return {
    size: opened.size,
    body,
    cosigned: verifyCosignature(parseNote(body), witnessKey),
    status: list.witnesses[0],
    /** The push record as kept, with the reasons the public is not shown. */
    record: await store.cosignatures.pushRecord(formatVerifierKey(witnessKey)),
  };
}

Deno.test("pushes to the project's witness: from 0, from the last size, after a restart ahead", async () => {
  const witness = await startWitness();
  const { kv, store } = await ledger();
  try {
    const witnesses = policyFor(witness.url);
    const { pusher, sent, errors } = recordingPusher(store, witnesses);
    await seal(store, 2, 1_700_000_060_000);

    // The first push: old 0, no proof; the cosignature comes back, verified, and is served.
    await pusher.push();
    assert.deepEqual(oldLines(sent), ["old 0"]);
    assert.equal(sent[0].split("\n")[1], "", "no proof from size 0");
    let served = await servedCheckpoint(store, witnesses);
    assert.equal(served.size, 3);
    assert.ok(served.cosigned, "the witness's cosignature is on the checkpoint and verifies");
    assert.ok(WitnessStatus.safeParse(served.status).success);
    assert.equal(served.status.lastSize, 3);
    assert.equal(served.status.lastCosignedAt, served.cosigned.timestamp * 1000);
    assert.equal(served.status.alarm, null);
    assert.equal((await witness.state().latest(ORIGIN))?.size, 3);

    // Nothing sealed: nothing to push; a refresh pushes the same size again, from it.
    await pusher.push();
    assert.equal(sent.length, 1);
    await pusher.push({ refresh: true });
    assert.deepEqual(oldLines(sent), ["old 0", "old 3"]);

    // A second seal: the push carries the consistency proof from 3 to 4.
    await seal(store, 1, 1_700_001_000_000);
    await pusher.push();
    assert.deepEqual(oldLines(sent), ["old 0", "old 3", "old 3"]);
    const tree = await createBlockLog(store).current();
    const proofLines = sent[2].split("\n\n")[0].split("\n").slice(1);
    assert.equal(proofLines.length, tree.consistencyProof(3, 4).length);
    assert.ok(proofLines.length > 0);
    served = await servedCheckpoint(store, witnesses);
    assert.equal(served.size, 4);
    assert.ok(served.cosigned);

    // The witness restarts holding size 5 (say, from another process of this log), while this
    // process believes 4: a 409 names 5, and the push is sent again from there, once.
    await seal(store, 2, 1_700_002_000_000);
    const six = await createBlockLog(store).current();
    assert.equal(six.size, 6);
    await witness.restart(async (state) => {
      const note = signCheckpoint({ origin: ORIGIN, size: 5, root: six.root(5) }, LOG_SEED);
      await state.update(ORIGIN, () => ({
        result: null,
        next: { origin: ORIGIN, size: 5, root: six.root(5), note },
      }));
    });
    await pusher.push();
    assert.deepEqual(oldLines(sent).slice(3), ["old 4", "old 5"]);
    served = await servedCheckpoint(store, witnesses);
    assert.equal(served.size, 6);
    assert.ok(served.cosigned);
    assert.equal(served.status.lastSize, 6);
    assert.equal((await witness.state().latest(ORIGIN))?.size, 6);
    assert.deepEqual(errors, [], "nothing went wrong");

    // Another process of this log, over the same KV, starts from the size recorded there.
    const other = recordingPusher(store, witnesses);
    await other.pusher.push({ refresh: true });
    assert.deepEqual(oldLines(other.sent), ["old 6"]);
  } finally {
    kv.close();
    await witness.stop();
  }
});

Deno.test("a fork is refused (422) and a witness ahead of the log (409): alarms, never retried", async () => {
  const witness = await startWitness();
  const honest = await ledger();
  const forked = await ledger();
  const behind = await ledger();
  try {
    const witnesses = policyFor(witness.url);
    await seal(honest.store, 5, 1_700_000_060_000);
    await recordingPusher(honest.store, witnesses).pusher.push();
    assert.equal((await witness.state().latest(ORIGIN))?.size, 6);

    // Same origin, same key, other blocks, further on: the witness asks for a proof from 6 (409)
    // and finds it does not verify (422).
    await seal(forked.store, 7, 1_800_000_000_000);
    const fork = recordingPusher(forked.store, witnesses);
    await fork.pusher.push();
    assert.deepEqual(oldLines(fork.sent), ["old 0", "old 6"]);
    const alarm = (await servedCheckpoint(forked.store, witnesses)).status;
    assert.equal(alarm.alarm?.kind, "inconsistent");
    assert.equal(alarm.alarm?.status, 422);
    assert.match(
      (await servedCheckpoint(forked.store, witnesses)).record!.alarm!.reason,
      /consistency proof from size 6 to 8 does not verify/,
    );
    assert.equal(alarm.lastSize, 6);
    assert.equal(fork.errors.length, 1);
    assert.match(fork.errors[0], /Witness "w1" ALARM \(422\)/);
    assert.equal((await servedCheckpoint(forked.store, witnesses)).cosigned, false);
    // Stopped: neither a seal nor the steady pace sends it again.
    await seal(forked.store, 1, 1_800_001_000_000);
    await fork.pusher.push();
    await fork.pusher.push({ refresh: true });
    assert.equal(fork.sent.length, 2);
    assert.equal(
      (await witness.state().latest(ORIGIN))?.size,
      6,
      "the witness kept the honest log",
    );

    // Same key, a shorter log: the witness holds a size above the log's own.
    await seal(behind.store, 2, 1_900_000_000_000);
    const ahead = recordingPusher(behind.store, witnesses);
    await ahead.pusher.push();
    assert.deepEqual(oldLines(ahead.sent), ["old 0"]);
    const status = (await servedCheckpoint(behind.store, witnesses)).status;
    assert.equal(status.alarm?.kind, "witness-ahead");
    assert.equal(status.alarm?.status, 409);
    assert.match(
      (await servedCheckpoint(behind.store, witnesses)).record!.alarm!.reason,
      /holds size 6, above the log's size 3/,
    );
    await ahead.pusher.push({ refresh: true });
    assert.equal(ahead.sent.length, 1, "not retried");

    // The next start pushes again; a success clears the alarm shown.
    const restarted = recordingPusher(behind.store, witnesses);
    await seal(behind.store, 4, 1_900_001_000_000);
    assert.equal((await createBlockLog(behind.store).current()).size, 7);
    await restarted.pusher.push();
    assert.deepEqual(oldLines(restarted.sent), ["old 0", "old 6"], "from the size the 409 named");
    // Still a fork of the honest log: 422 this time.
    assert.equal((await servedCheckpoint(behind.store, witnesses)).status.alarm?.status, 422);
  } finally {
    for (const { kv } of [honest, forked, behind]) kv.close();
    await witness.stop();
  }
});

Deno.test("an alarm is cleared by the next start's successful push", async () => {
  const witness = await startWitness();
  const { kv, store } = await ledger();
  try {
    const witnesses = policyFor(witness.url);
    await seal(store, 2, 1_700_000_060_000);
    // A witness that answers 422 once: the alarm is raised and shown.
    const refusing = recordingPusher(store, witnesses, {
      fetch: () => Promise.resolve(new Response("No\n", { status: 422 })),
    });
    await refusing.pusher.push();
    assert.equal((await servedCheckpoint(store, witnesses)).status.alarm?.status, 422);
    // The next start reaches the real witness: cosigned, and the alarm is gone.
    await recordingPusher(store, witnesses).pusher.push();
    const { status, cosigned } = await servedCheckpoint(store, witnesses);
    assert.ok(cosigned);
    assert.deepEqual([status.alarm, status.error, status.lastSize], [null, null, 3]);
  } finally {
    kv.close();
    await witness.stop();
  }
});

Deno.test("answers a log cannot use raise alarms: an unverifiable 200, v1.0.0's fork 409", async (t) => {
  const { kv, store } = await ledger();
  try {
    await seal(store, 2, 1_700_000_060_000);
    const witnesses = policyFor("http://127.0.0.1:9");
    const stranger: NoteSigner = { name: witnessSigner.name, seed: new Uint8Array(32).fill(5) };
    const answer = (body: string, status = 200, type = "text/plain; charset=utf-8") => () =>
      Promise.resolve(new Response(body, { status, headers: { "content-type": type } }));
    const text = parseNote((await servedCheckpoint(store)).body).text;
    const lineOf = (signer: NoteSigner, timestamp: number) =>
      formatNote({ text, signatures: [signCosignature(text, signer, timestamp)] })
        .slice(text.length + 1);
    const now = Math.floor(Date.now() / 1000);
    const cases: {
      desc: string;
      fetch: typeof fetch;
      kind: "bad-cosignature" | "fork";
      status: number;
      reason: RegExp;
    }[] = [
      {
        desc: "a line of the witness's name by another key",
        fetch: answer(lineOf(stranger, now)),
        kind: "bad-cosignature",
        status: 200,
        reason: /not by the key/,
      },
      {
        desc: "a line that is no signature line",
        fetch: answer("ok\n"),
        kind: "bad-cosignature",
        status: 200,
        reason: /not signature lines/,
      },
      {
        desc: "no line of its name",
        fetch: answer(""),
        kind: "bad-cosignature",
        status: 200,
        reason: /not signature/,
      },
      {
        desc: "409 naming the size sent: v1.0.0's answer to a fork",
        fetch: answer("0\n", 409, "text/x.tlog.size"),
        kind: "fork",
        status: 409,
        reason: /a fork/,
      },
    ];
    for (const { desc, fetch, kind, status, reason } of cases) {
      await t.step(desc, async () => {
        const { pusher, sent } = recordingPusher(store, witnesses, { fetch });
        await pusher.push();
        const served = await servedCheckpoint(store, witnesses);
        assert.deepEqual(served.status.alarm, { kind, status });
        assert.match(served.record!.alarm!.reason, reason);
        assert.equal((await servedCheckpoint(store, witnesses)).cosigned, false, "nothing kept");
        await pusher.push({ refresh: true });
        assert.equal(sent.length, 1, "stopped");
      });
    }
  } finally {
    kv.close();
  }
});

Deno.test("a cosignature an hour ahead is a witness whose clock runs fast: an error, no alarm", async () => {
  const { kv, store } = await ledger();
  try {
    await seal(store, 2, 1_700_000_060_000);
    const witnesses = policyFor("http://127.0.0.1:9");
    const text = parseNote((await servedCheckpoint(store)).body).text;
    const ahead = Math.floor(Date.now() / 1000) + 3600;
    const line = formatNote({ text, signatures: [signCosignature(text, witnessSigner, ahead)] })
      .slice(text.length + 1);
    const fetch = () =>
      Promise.resolve(new Response(line, { headers: { "content-type": "text/plain" } }));
    const { pusher } = recordingPusher(store, witnesses, { fetch });
    await pusher.push();
    const served = await servedCheckpoint(store, witnesses);
    assert.equal(served.status.alarm, null, "a valid cosignature from a fast clock is no alarm");
    assert.equal(served.status.error?.kind, "refused");
    assert.match(served.record!.error!.reason, /in the future/);
    assert.equal(served.cosigned, false, "nothing kept");
  } finally {
    kv.close();
  }
});

Deno.test("a witness that never answers holds up neither sealing nor voting", async () => {
  const { kv, store } = await ledger();
  try {
    const app = createApp({ store, config: { logOrigin: ORIGIN } });
    const voters = makeVoters(2);
    for (const v of voters) {
      const res = await app.request("/api/pki/key", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ key: v.key }),
      });
      assert.equal(res.status, 201);
    }
    // A witness that takes every request and answers none: only the deadline ends it.
    let clock = Date.now();
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(init.signal!.reason));
      });
    const { pusher, sent, errors } = recordingPusher(store, policyFor("http://127.0.0.1:9"), {
      fetch: hanging,
      timeoutMs: 1_500,
      now: () => clock,
    });
    const started = performance.now();
    let settled = false;
    const push = pusher.push().then(() => settled = true);

    const vote = signedVote(voters[0], ringFor(voters[0], voters, 2), "Yes");
    const accepted = await app.request("/api/vote", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(vote),
    });
    assert.equal(accepted.status, 202);
    const sealed = await sealNextBlock(store, Date.now());
    assert.equal(sealed.length, 1);
    assert.ok(performance.now() - started < 1_500, "voted and sealed before the deadline");
    assert.equal(settled, false, "the push is still waiting for its witness");
    pusher.push(); // asked again while in flight: no second request in parallel
    assert.equal(sent.length, 1);

    await push;
    assert.ok(performance.now() - started >= 1_500, "ended by the deadline");
    assert.equal(errors.length, 1);
    assert.match(errors[0], /Witness "w1" push failed \(no answer\): no answer within 1500 ms/);
    const served = await servedCheckpoint(store, policyFor("http://127.0.0.1:9"));
    assert.equal(served.status.alarm, null, "no answer is no alarm");
    assert.deepEqual(served.status.error, { kind: "no-answer", status: 0 });
    assert.deepEqual(served.record!.error, {
      kind: "no-answer",
      status: 0,
      reason: "no answer within 1500 ms",
      at: clock,
    });
    // Not retried blindly: nothing before the pause is over, then one more try.
    await pusher.push({ refresh: true });
    assert.equal(sent.length, 1);
    clock += FIRST_BACKOFF_MS;
    const again = pusher.push();
    // The retry reads the checkpoint first (a round trip on a remote database) before it sends.
    for (let i = 0; i < 500 && sent.length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(sent.length, 2);
    await again;
  } finally {
    kv.close();
  }
});

Deno.test("a witness that does not know the log: an error, retried after a pause that doubles", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-push-" });
  const state = await openStateStore(dir);
  const { kv, store } = await ledger();
  try {
    await seal(store, 1, 1_700_000_060_000);
    // The witness trusts another log's key only: 404 to this one.
    const otherLog = verifierKey(ORIGIN + "/other", ED25519_TYPE, hexToBytes("11".repeat(32)));
    const app = createWitnessApp({ signer: witnessSigner, logs: [otherLog], store: state });
    let clock = 1_000_000;
    const { pusher, sent, errors } = recordingPusher(store, policyFor("http://witness.test"), {
      fetch: async (input, init) => await app.request(String(input), init),
      now: () => clock,
    });
    await pusher.push();
    assert.equal(sent.length, 1);
    assert.match(errors[0], /push failed \(404\): Unknown log "vote\.example\.org\/log"/);
    const { status } = await servedCheckpoint(store, policyFor("http://witness.test"));
    assert.equal(status.alarm, null);
    assert.equal(status.error?.kind, "refused");
    assert.equal(status.error?.status, 404);
    let tries = 1;
    for (const pause of [FIRST_BACKOFF_MS, 2 * FIRST_BACKOFF_MS]) {
      clock += pause - 1;
      await pusher.push({ refresh: true });
      assert.equal(sent.length, tries, `still pausing ${pause} ms`);
      clock += 1;
      await pusher.push();
      assert.equal(sent.length, ++tries, `tried again after ${pause} ms`);
    }
    assert.equal(errors.length, 3);
  } finally {
    kv.close();
    state.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a push asked for while one is in flight follows it, with the newer checkpoint", async () => {
  const witness = await startWitness();
  const { kv, store } = await ledger();
  try {
    await seal(store, 1, 1_700_000_060_000);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => release = resolve);
    const { pusher, sent } = recordingPusher(store, policyFor(witness.url), {
      fetch: async (input, init) => {
        await gate;
        return await fetch(input, init);
      },
    });
    const first = pusher.push();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await seal(store, 1, 1_700_001_000_000);
    const second = pusher.push();
    release();
    await Promise.all([first, second]);
    assert.deepEqual(oldLines(sent), ["old 0", "old 2"]);
    const sizes = sent.map((body) =>
      parseCheckpoint(parseNote(body.split("\n\n").slice(1).join("\n\n")).text).size
    );
    assert.deepEqual(sizes, [2, 3]);
    assert.equal((await witness.state().latest(ORIGIN))?.size, 3);
  } finally {
    kv.close();
    await witness.stop();
  }
});

Deno.test("GET /log/witnesses shows a problem's kind and status, never the address or the error", async () => {
  const { kv, store } = await ledger();
  try {
    await seal(store, 1, 1_700_000_060_000);
    const url = "http://witness.internal.example:7380/secret-path";
    const witnesses = policyFor(url);
    // A network failure whose message names the witness's address, as fetch's own errors do.
    const fetch = (input: string | URL | Request) =>
      Promise.reject(new TypeError(`error sending request for url (${input}): refused`));
    const { pusher, errors } = recordingPusher(store, witnesses, { fetch });
    await pusher.push();
    const app = createApp({
      store,
      config: { logOrigin: ORIGIN, witnessPolicy: { path: "p", witnesses, notes: [] } },
    });
    const text = await (await app.request("/api/log/witnesses")).text();
    assert.doesNotMatch(text, /witness\.internal|secret-path|refused|7380/);
    const { witnesses: [shown] } = JSON.parse(text) as WitnessList;
    assert.deepEqual(shown.error, { kind: "no-answer", status: 0 });
    // The operator still reads the whole story in the server's log.
    assert.match(errors.join("\n"), /secret-path/);
  } finally {
    kv.close();
  }
});
