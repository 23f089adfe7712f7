// POST /api/vote: acceptance, and every verifier rejection of protocol §2 reached through HTTP,
// each leaving the ledger exactly as it was.
import assert from "node:assert/strict";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import { bytesToHex, hexToBytes } from "../../../lib/protocol/bytes.ts";
import { L } from "../../../lib/protocol/keys.ts";
import { createInProcessVerifier } from "../../../server/verifier/in_process.ts";
import type { Verifier } from "../../../server/verifier/types.ts";
import type { SignatureWire, VoteSubmission } from "../../../lib/protocol/schemas.ts";
import { createApp } from "../../../server/app.ts";
import { testVerifier } from "../../helpers/test_verifier.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { createStore } from "../../../server/store/mod.ts";
import { kvKeys } from "../../../server/store/layout.ts";
import {
  call,
  hostilePoints,
  makeVoters,
  ringFor,
  signedVote,
} from "../../helpers/ledger_fixtures.ts";

async function setup(voterCount = 6) {
  const kv = await Deno.openKv(":memory:");
  const store = await createStore(kv);
  const app = createApp({ store, verifier: testVerifier });
  const voters = makeVoters(voterCount);
  for (const v of voters) await store.registerKey(v.key);
  return { kv, store, app, voters };
}

async function dump(kv: Deno.Kv) {
  const out = [];
  for await (const e of kv.list({ prefix: [] })) out.push([e.key, e.value, e.versionstamp]);
  return out;
}

/** Re-encodes `vote` with its signature fields changed by `edit`, keeping publicKeys and tag in step. */
function tampered(vote: VoteSubmission, edit: (sig: SignatureWire) => void): VoteSubmission {
  const sig: SignatureWire = JSON.parse(vote.signature);
  edit(sig);
  const signature = JSON.stringify({ c0: sig.c0, r: sig.r, I: sig.I, ring: sig.ring });
  return { ...vote, signature, publicKeys: sig.ring, tag: sig.I };
}

function plusL(scalarHex: string): string {
  return bytesToHex(numberToBytesLE(bytesToNumberLE(hexToBytes(scalarHex)) + L, 32));
}

function plusOne(scalarHex: string): string {
  return bytesToHex(numberToBytesLE((bytesToNumberLE(hexToBytes(scalarHex)) + 1n) % L, 32));
}

Deno.test("POST /api/vote refuses every verifier failure of protocol §2 and changes nothing", async (t) => {
  const { kv, app, voters } = await setup();
  const signer = voters[0];
  const ring = ringFor(signer, voters, 4);
  const good = signedVote(signer, ring, "Yes");
  const bad = hostilePoints();
  const badReason: Record<string, RegExp> = {
    nonCanonical: /is not a canonical curve point/,
    identity: /is the identity/,
    smallOrder: /has a small-order component/,
    torsioned: /has a small-order component/,
  };
  const cases: {
    desc: string;
    vote: VoteSubmission;
    status: number;
    code: string;
    reason: RegExp;
  }[] = [
    {
      desc: "a ring of one member",
      vote: tampered(good, (s) => {
        s.ring = s.ring.slice(0, 1);
        s.r = s.r.slice(0, 1);
      }),
      status: 400,
      code: "invalid_signature",
      reason: /ring size must be 2\.\.64, got 1/,
    },
    {
      desc: "a ring of 65 members",
      vote: tampered(good, (s) => {
        const many = makeVoters(65).map((v) => v.key);
        s.ring = many;
        s.r = many.map(() => s.r[0]);
      }),
      status: 400,
      code: "invalid_signature",
      reason: /more than 64/,
    },
    {
      desc: "a repeated ring member",
      vote: tampered(good, (s) => {
        s.ring[1] = s.ring[0];
      }),
      status: 400,
      code: "invalid_signature",
      reason: /ring member 1 is repeated/,
    },
    // A hostile point can never be registered, so the directory check refuses it before any
    // curve arithmetic; the verifier's own refusal is tested in tests/server/verifier/pool_test.ts.
    ...Object.entries(bad).map(([name, point]) => ({
      desc: `a ring member that is ${name}`,
      reason: new RegExp(`Ring member "${point.slice(0, 80)}…?" is not in the key directory`),
      vote: tampered(good, (s) => {
        s.ring[2] = point;
      }),
      status: 403,
      code: "unregistered_key",
    })),
    ...Object.entries(bad).map(([name, point]) => ({
      desc: `a tag that is ${name}`,
      reason: new RegExp(`tag ${badReason[name].source}`),
      vote: tampered(good, (s) => {
        s.I = point;
      }),
      status: 400,
      code: "invalid_signature",
    })),
    {
      desc: "c0 not a canonical scalar (c0 + L)",
      vote: tampered(good, (s) => {
        s.c0 = plusL(s.c0);
      }),
      status: 400,
      code: "invalid_signature",
      reason: /c0 is not a canonical scalar/,
    },
    {
      desc: "r[1] not a canonical scalar (r + L)",
      vote: tampered(good, (s) => {
        s.r[1] = plusL(s.r[1]);
      }),
      status: 400,
      code: "invalid_signature",
      reason: /r\[1\] is not a canonical scalar/,
    },
    {
      desc: "c0 changed by one: the ring does not close",
      vote: tampered(good, (s) => {
        s.c0 = plusOne(s.c0);
      }),
      status: 400,
      code: "invalid_signature",
      reason: /do not close/,
    },
    {
      desc: "r[3] changed by one",
      vote: tampered(good, (s) => {
        s.r[3] = plusOne(s.r[3]);
      }),
      status: 400,
      code: "invalid_signature",
      reason: /do not close/,
    },
    {
      desc: "the ring reordered after signing",
      vote: tampered(good, (s) => {
        s.ring = [s.ring[1], s.ring[0], ...s.ring.slice(2)];
        s.r = [s.r[1], s.r[0], ...s.r.slice(2)];
      }),
      status: 400,
      code: "invalid_signature",
      reason: /do not close/,
    },
    {
      desc: "another voter's tag",
      vote: tampered(good, (s) => {
        s.I = signedVote(voters[1], ring, "Yes").tag;
      }),
      status: 400,
      code: "invalid_signature",
      reason: /do not close/,
    },
    {
      desc: "fewer responses than ring members",
      vote: tampered(good, (s) => {
        s.r = s.r.slice(1);
      }),
      status: 400,
      code: "invalid_signature",
      reason: /same length/,
    },
    {
      desc: "a payload other than the signed one",
      vote: { ...good, payload: "No" },
      status: 400,
      code: "invalid_signature",
      reason: /do not close/,
    },
    {
      desc: "a signature that is not JSON",
      vote: { ...good, signature: "not json" },
      status: 400,
      code: "invalid_signature",
      reason: /malformed/,
    },
    {
      desc: "a signature not in its one canonical wire form",
      vote: { ...good, signature: JSON.stringify(JSON.parse(good.signature), null, 1) },
      status: 400,
      code: "invalid_signature",
      reason: /exactly JSON\.stringify/,
    },
    {
      desc: "publicKeys other than signature.ring",
      vote: { ...good, publicKeys: [...good.publicKeys].reverse() },
      status: 400,
      code: "invalid_request",
      reason: /signature\.ring/,
    },
    {
      desc: "a tag other than signature.I",
      vote: { ...good, tag: signedVote(voters[1], ring, "Yes").tag },
      status: 400,
      code: "invalid_request",
      reason: /signature\.I/,
    },
    {
      desc: "a payload of 1,001 code points",
      vote: signedVote(signer, ring, "é".repeat(1001)),
      status: 413,
      code: "payload_too_large",
      reason: /1001 characters/,
    },
  ];

  try {
    const before = await dump(kv);
    for (const { desc, vote, status, code, reason } of cases) {
      await t.step(`${status} ${code}: ${desc}`, async () => {
        const res = await call(app, "POST", "/api/vote", vote);
        assert.equal(res.status, status, JSON.stringify(res.body));
        assert.match(res.type ?? "", /^application\/json/);
        assert.equal(res.body.error.code, code, res.body.error.message);
        assert.match(res.body.error.message, reason);
        assert.deepEqual(await dump(kv), before);
      });
    }
    await t.step("the untampered vote is then accepted", async () => {
      const res = await call(app, "POST", "/api/vote", good);
      assert.equal(res.status, 202, JSON.stringify(res.body));
    });
  } finally {
    kv.close();
  }
});

Deno.test("POST /api/vote: malformed bodies are 400 invalid_request", async () => {
  const { kv, app, voters } = await setup(3);
  try {
    const good = signedVote(voters[0], voters, "Yes");
    const before = await dump(kv);
    const bodies: unknown[] = [
      "{",
      "null",
      { ...good, tag: good.tag.toUpperCase() },
      { ...good, publicKeys: "abc" },
      { ...good, payload: 5 },
      { publicKeys: good.publicKeys, signature: good.signature, tag: good.tag },
      { ...good, signature: "" },
    ];
    for (const body of bodies) {
      const res = await call(app, "POST", "/api/vote", body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.code, "invalid_request");
    }
    assert.deepEqual(await dump(kv), before);
  } finally {
    kv.close();
  }
});

Deno.test("POST /api/vote: 403 unregistered_key when a ring member is not in the directory", async () => {
  const { kv, app, voters } = await setup(3);
  try {
    const [stranger] = makeVoters(1);
    const before = await dump(kv);
    for (const signer of [voters[0], stranger]) {
      const res = await call(
        app,
        "POST",
        "/api/vote",
        signedVote(signer, [...voters, stranger], "Yes"),
      );
      assert.equal(res.status, 403);
      assert.equal(res.body.error.code, "unregistered_key");
      assert.ok(res.body.error.message.includes(stranger.key));
    }
    assert.deepEqual(await dump(kv), before);
  } finally {
    kv.close();
  }
});

Deno.test("POST /api/vote: a payload of exactly 1,000 code points is accepted", async () => {
  const { kv, app, voters } = await setup(2);
  try {
    // 1,000 astral code points are 2,000 UTF-16 units: the limit counts code points.
    const payload = "🗳".repeat(1000);
    const res = await call(app, "POST", "/api/vote", signedVote(voters[0], voters, payload));
    assert.equal(res.status, 202, JSON.stringify(res.body));
  } finally {
    kv.close();
  }
});

Deno.test("POST /api/vote: a payload that is not well-formed Unicode is 400 invalid_request", async (t) => {
  const { kv, app, voters } = await setup(3);
  try {
    // UTF-8 turns a lone surrogate into U+FFFD, so a signature over "\uFFFD" also covers "\uD800".
    const lookalikes = ["\uD800", "Yes \uDC00", "\uDBFF\uD800x", "a\uD83D"];
    const before = await dump(kv);
    for (const [i, payload] of lookalikes.entries()) {
      await t.step(JSON.stringify(payload), async () => {
        const signer = voters[i % voters.length];
        const overReplacement = signedVote(signer, voters, payload.toWellFormed());
        const res = await call(app, "POST", "/api/vote", { ...overReplacement, payload });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.match(res.type ?? "", /^application\/json/);
        assert.equal(res.body.error.code, "invalid_request");
        assert.match(res.body.error.message, /payload: must be well-formed Unicode/);
      });
    }
    assert.deepEqual(await dump(kv), before, "nothing stored");
  } finally {
    kv.close();
  }
});

Deno.test("POST /api/vote: well-formed astral text, accents and combining marks get a 202", async () => {
  const { kv, app, voters } = await setup(3);
  try {
    const payloads = ["🗳️ Ja 👍🏽", "Élection à Zürich", "e\u0301 n\u0303 \u{1F1EB}\u{1F1F7}"];
    for (const [i, payload] of payloads.entries()) {
      const res = await call(app, "POST", "/api/vote", signedVote(voters[i], voters, payload));
      assert.equal(res.status, 202, `${payload}: ${JSON.stringify(res.body)}`);
      assert.match(res.type ?? "", /^application\/json/);
      assert.equal(typeof res.body.voteId, "string");
    }
  } finally {
    kv.close();
  }
});

Deno.test("POST /api/vote: one key votes once, before and after sealing (409 duplicate_tag)", async () => {
  const { kv, store, app, voters } = await setup(4);
  try {
    const first = await call(app, "POST", "/api/vote", signedVote(voters[1], voters, "Yes"));
    assert.equal(first.status, 202);
    const again = signedVote(voters[1], voters.slice(0, 3), "No");
    const res = await call(app, "POST", "/api/vote", again);
    assert.equal(res.status, 409);
    assert.match(res.type ?? "", /^application\/json/);
    assert.equal(res.body.error.code, "duplicate_tag");
    await sealNextBlock(store, Date.now());
    const before = await dump(kv);
    const later = await call(app, "POST", "/api/vote", signedVote(voters[1], voters, "Maybe"));
    assert.equal(later.status, 409);
    assert.equal(later.body.error.code, "duplicate_tag");
    assert.deepEqual(await dump(kv), before);
  } finally {
    kv.close();
  }
});

/** The in-process verifier, counting the verifications it is asked for. */
function countingVerifier(): Verifier & { verifications: string[] } {
  const inner = createInProcessVerifier();
  const verifications: string[] = [];
  return {
    verifications,
    verify(signature, payload, members) {
      verifications.push(payload);
      return inner.verify(signature, payload, members);
    },
    precompute: (key) => inner.precompute(key),
    memberStats: () => inner.memberStats(),
    ready: inner.ready,
    get queued() {
      return inner.queued;
    },
    close: () => inner.close(),
  };
}

Deno.test("the vote verifier is a seam: createApp takes another implementation", async () => {
  const { kv, store, voters } = await setup(2);
  try {
    const verifier = countingVerifier();
    verifier.verify = () => Promise.resolve({ ok: false, reason: "refused by the test verifier" });
    const app = createApp({ store, verifier });
    const res = await call(app, "POST", "/api/vote", signedVote(voters[0], voters, "Yes"));
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, "invalid_signature");
    assert.match(res.body.error.message, /refused by the test verifier/);
  } finally {
    kv.close();
  }
});

Deno.test("cheap refusals come before the ring verification: a stranger in the ring, a replayed tag", async () => {
  const { kv, store, voters } = await setup(4);
  try {
    const verifier = countingVerifier();
    const app = createApp({ store, verifier });
    const [stranger] = makeVoters(1);
    const withStranger = signedVote(voters[0], [voters[0], voters[1], stranger], "Yes");
    const refused = await call(app, "POST", "/api/vote", withStranger);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, "unregistered_key");
    assert.deepEqual(verifier.verifications, []);

    const vote = signedVote(voters[1], voters.slice(0, 3), "No");
    assert.equal((await call(app, "POST", "/api/vote", vote)).status, 202);
    assert.deepEqual(verifier.verifications, ["No"]);
    const replay = await call(app, "POST", "/api/vote", vote);
    assert.equal(replay.status, 409);
    assert.equal(replay.body.error.code, "duplicate_tag");
    assert.deepEqual(verifier.verifications, ["No"], "the replay cost no verification");
  } finally {
    kv.close();
  }
});

Deno.test("a key record holding an earlier form of precomputation is not used: the key is checked from its bytes", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const voters = makeVoters(3);
    const setup = await createStore(kv);
    for (const v of voters) await setup.registerKey(v.key);
    // An earlier release kept the combs as lists of bigint coordinates; one here is nonsense.
    await kv.set(kvKeys.keyId(voters[1].key), { id: 2, pre: { point: [1n, 2n], hp: [3n] } });
    const app = createApp({ store: await createStore(kv), verifier: testVerifier });
    const res = await call(app, "POST", "/api/vote", signedVote(voters[1], voters, "Yes"));
    assert.equal(res.status, 202, JSON.stringify(res.body));
  } finally {
    kv.close();
  }
});

Deno.test("a key registered without a stored precomputation still votes: it is checked from its bytes", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = await createStore(kv);
    const app = createApp({ store, verifier: testVerifier });
    const voters = makeVoters(3);
    // The first key as an older server stored it (no precomputation), the others through the API.
    await store.registerKey(voters[0].key);
    for (const v of voters.slice(1)) {
      assert.equal((await call(app, "POST", "/api/pki/key", { key: v.key })).status, 201);
    }
    const [old, fresh] = await store.lookupKeys([voters[0].key, voters[1].key]);
    assert.equal(old?.pre, undefined);
    assert.ok(fresh?.pre);
    const res = await call(app, "POST", "/api/vote", signedVote(voters[0], voters, "Yes"));
    assert.equal(res.status, 202, JSON.stringify(res.body));
  } finally {
    kv.close();
  }
});
