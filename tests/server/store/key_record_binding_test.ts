// A key's stored precomputation is bound to the key by its MAC (protocol §5.2): a record altered
// anywhere in KV, copied from another key or another database, or written before records carried
// a MAC is not used — its key is checked from its bytes, so the key's true tag still verifies and
// a tag that an altered Hp(P) comb would accept does not. An untouched record is used as stored.
import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { numberToBytesLE } from "@noble/curves/utils.js";
import { bytesToHex, hexToBytes } from "../../../lib/protocol/bytes.ts";
import { COMB_BYTES, combTable, combToBytes } from "../../../lib/protocol/comb_table.ts";
import type { KeyPrecomputation } from "../../../lib/protocol/key_precomputation.ts";
import { keyPairFromSeed, L, type Point } from "../../../lib/protocol/keys.ts";
import { hashToPoint, hashToScalar, transcript } from "../../../lib/protocol/ring_signature.ts";
import { encodeSignature } from "../../../lib/protocol/signature_wire.ts";
import type { VoteSubmission } from "../../../lib/protocol/schemas.ts";
import { createApp } from "../../../server/app.ts";
import { keyRecordMac, keyRecordSecret } from "../../../server/store/key_record_mac.ts";
import { type KeyIdRecord, kvKeys } from "../../../server/store/layout.ts";
import { createStore } from "../../../server/store/mod.ts";
import { createInProcessVerifier } from "../../../server/verifier/in_process.ts";
import type { Verifier } from "../../../server/verifier/types.ts";
import { call, makeVoters, signedVote, type TestVoter } from "../../helpers/ledger_fixtures.ts";

/** The in-process verifier, remembering the stored precomputations each vote was verified with. */
function spyingVerifier(): Verifier & { members: (KeyPrecomputation | null)[][]; keys: string[] } {
  const inner = createInProcessVerifier();
  const members: (KeyPrecomputation | null)[][] = [];
  const keys: string[] = [];
  return {
    members,
    keys,
    verify(signature, payload, given = []) {
      members.push(given);
      return inner.verify(signature, payload, given);
    },
    precompute(key) {
      keys.push(key);
      return inner.precompute(key);
    },
    memberStats: () => inner.memberStats(),
    ready: inner.ready,
    get queued() {
      return inner.queued;
    },
    close: () => inner.close(),
  };
}

/** `voters` registered through the API (checked and precomputed), on a fresh in-memory KV. */
async function registered(voters: TestVoter[]) {
  const kv = await Deno.openKv(":memory:");
  const verifier = createInProcessVerifier();
  const app = createApp({ store: await createStore(kv), verifier });
  for (const v of voters) {
    assert.equal((await call(app, "POST", "/api/pki/key", { key: v.key })).status, 201);
  }
  verifier.close();
  return kv;
}

/** A server started afresh on `kv`: nothing held in memory, every record read from KV. */
async function restarted(kv: Deno.Kv) {
  const store = await createStore(kv);
  const verifier = spyingVerifier();
  return { store, verifier, app: createApp({ store, verifier }) };
}

/** Rewrites the stored record of `key` with `edit`, on copies of its precomputation and MAC. */
async function alterRecord(
  kv: Deno.Kv,
  key: string,
  edit: (record: { pre: Uint8Array<ArrayBuffer>; mac: Uint8Array }) => void,
) {
  const record = (await kv.get<KeyIdRecord>(kvKeys.keyId(key))).value!;
  const altered = { pre: record.pre!.slice(), mac: record.mac!.slice() };
  edit(altered);
  await kv.set(kvKeys.keyId(key), { ...record, ...altered });
}

/**
 * A ring signature by `signer` in which the signer's Hp(P) is taken to be `hp` (protocol §2
 * "Sign" with that one point replaced), so its tag is x·hp: what a server using a comb of `hp` for
 * the signer's key would accept, and no honest verifier.
 */
function signedWithHp(signer: TestVoter, ring: TestVoter[], payload: string, hp: Point) {
  const keys = ring.map((v) => hexToBytes(v.key));
  const points = keys.map((k) => ed25519.Point.fromBytes(k));
  const { secret: x } = keyPairFromSeed(signer.seed);
  const pi = ring.indexOf(signer);
  const hps = keys.map((k, i) => (i === pi ? hp : hashToPoint(k)));
  const tag = hp.multiply(x);
  const t = transcript(keys, tag.toBytes(), payload);
  const challenge = (l: Point, r: Point) => hashToScalar([t, l.toBytes(), r.toBytes()]);
  const random = () =>
    1n + BigInt("0x" + bytesToHex(crypto.getRandomValues(new Uint8Array(40)))) % (L - 1n);
  const n = ring.length;
  const c = new Array<bigint>(n);
  const r = new Array<bigint>(n);
  const alpha = random();
  c[(pi + 1) % n] = challenge(ed25519.Point.BASE.multiply(alpha), hp.multiply(alpha));
  for (let k = 1; k < n; k++) {
    const i = (pi + k) % n;
    r[i] = random();
    const l = ed25519.Point.BASE.multiply(r[i]).add(points[i].multiply(c[i]));
    const ri = hps[i].multiply(r[i]).add(tag.multiply(c[i]));
    c[(i + 1) % n] = challenge(l, ri);
  }
  r[pi] = (((alpha - c[pi] * x) % L) + L) % L;
  const signature = encodeSignature({
    c0: numberToBytesLE(c[0], 32),
    r: r.map((s) => numberToBytesLE(s, 32)),
    tag: tag.toBytes(),
    ring: keys,
  });
  return {
    publicKeys: ring.map((v) => v.key),
    signature,
    tag: bytesToHex(tag.toBytes()),
    payload,
  } satisfies VoteSubmission;
}

Deno.test("a record whose Hp(P) comb is altered in KV is not used: the true tag votes, a tag the altered comb accepts is refused", async () => {
  const voters = makeVoters(4);
  const kv = await registered(voters);
  const { store, verifier, app } = await restarted(kv);
  try {
    const [signer] = voters;
    // The comb of 2·Hp(P) in place of Hp(P)'s, P's comb untouched: its first entry still names P.
    const crafted = hashToPoint(hexToBytes(signer.key)).double();
    await alterRecord(kv, signer.key, ({ pre }) => {
      combToBytes(combTable(crafted), pre, COMB_BYTES);
    });

    const craftedVote = signedWithHp(signer, voters, "Yes", crafted);
    const refused = await call(app, "POST", "/api/vote", craftedVote);
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, "invalid_signature");
    const [record] = await store.lookupKeys([signer.key]);
    assert.deepEqual(record, { id: 1 }, "the altered precomputation is dropped");

    const res = await call(app, "POST", "/api/vote", signedVote(signer, voters, "Yes"));
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(verifier.members[1][0], null, "the key is checked from its bytes");
    assert.ok(verifier.members[1].slice(1).every((m) => m instanceof Uint8Array));
  } finally {
    verifier.close();
    kv.close();
  }
});

Deno.test("a record with a later comb entry or its MAC altered is not used: votes naming the key still verify", async (t) => {
  const voters = makeVoters(3);
  // Entry 7 of P's comb, the last entry of Hp(P)'s comb, one byte of the MAC.
  const edits: [string, (record: { pre: Uint8Array<ArrayBuffer>; mac: Uint8Array }) => void][] = [
    ["an entry of P's comb", ({ pre }) => (pre[6 * 64 + 5] ^= 1)],
    ["the last entry of Hp(P)'s comb", ({ pre }) => (pre[pre.length - 40] ^= 0x10)],
    ["the MAC", ({ mac }) => (mac[31] ^= 1)],
  ];
  for (const [name, edit] of edits) {
    await t.step(name, async () => {
      const kv = await registered(voters);
      const { store, verifier, app } = await restarted(kv);
      try {
        await alterRecord(kv, voters[1].key, edit);
        const res = await call(app, "POST", "/api/vote", signedVote(voters[0], voters, "No"));
        assert.equal(res.status, 202, JSON.stringify(res.body));
        assert.equal(verifier.members[0][1], null, "the key is checked from its bytes");
        assert.deepEqual((await store.lookupKeys([voters[1].key]))[0], { id: 2 });
      } finally {
        verifier.close();
        kv.close();
      }
    });
  }
});

Deno.test("a record copied from another key, or from another server's database, is refused", async () => {
  const voters = makeVoters(3);
  const kv = await registered(voters);
  const elsewhere = await registered(voters);
  const { store, verifier, app } = await restarted(kv);
  try {
    const [a, b, c] = voters;
    // B's whole record, precomputation and MAC, under A's key (A keeps its id).
    const ofB = (await kv.get<KeyIdRecord>(kvKeys.keyId(b.key))).value!;
    await kv.set(kvKeys.keyId(a.key), { ...ofB, id: 1 });
    // C's own record as another server (another secret) stored it.
    const cElsewhere = (await elsewhere.get<KeyIdRecord>(kvKeys.keyId(c.key))).value!;
    await kv.set(kvKeys.keyId(c.key), cElsewhere);
    const [recordA, recordB, recordC] = await store.lookupKeys([a.key, b.key, c.key]);
    assert.deepEqual(recordA, { id: 1 });
    assert.deepEqual(recordB, { id: 2, pre: ofB.pre });
    assert.deepEqual(recordC, { id: 3 });
    const res = await call(app, "POST", "/api/vote", signedVote(a, voters, "Yes"));
    assert.equal(res.status, 202, JSON.stringify(res.body));
  } finally {
    verifier.close();
    kv.close();
    elsewhere.close();
  }
});

Deno.test("an untouched record carries its MAC and is used as stored after a restart, nothing recomputed", async () => {
  const voters = makeVoters(3);
  const kv = await registered(voters);
  const { store, verifier, app } = await restarted(kv);
  try {
    const secret = keyRecordSecret(store.serverSeed());
    const stored = await Promise.all(
      voters.map(async (v) => (await kv.get<KeyIdRecord>(kvKeys.keyId(v.key))).value!),
    );
    for (const [i, record] of stored.entries()) {
      const key = hexToBytes(voters[i].key);
      assert.deepEqual(record.mac, keyRecordMac(record.pre!, { key, secret }));
    }
    const res = await call(app, "POST", "/api/vote", signedVote(voters[2], voters, "Yes"));
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.deepEqual(verifier.members, [stored.map((r) => r.pre)]);
    assert.deepEqual(verifier.keys, [], "no key was precomputed again");
  } finally {
    verifier.close();
    kv.close();
  }
});

Deno.test("a record written before records carried a MAC is read as the id alone, and its key still votes", async () => {
  const voters = makeVoters(3);
  const kv = await registered(voters);
  const { store, verifier, app } = await restarted(kv);
  try {
    const { id, pre } = (await kv.get<KeyIdRecord>(kvKeys.keyId(voters[0].key))).value!;
    await kv.set(kvKeys.keyId(voters[0].key), { id, pre });
    assert.deepEqual(await store.lookupKeys([voters[0].key]), [{ id }]);
    const res = await call(app, "POST", "/api/vote", signedVote(voters[0], voters, "Yes"));
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(verifier.members[0][0], null);
  } finally {
    verifier.close();
    kv.close();
  }
});
