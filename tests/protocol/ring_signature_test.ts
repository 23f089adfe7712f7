import assert from "node:assert/strict";
import fc from "fast-check";
import { ed25519, ed25519_hasher, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { bytesToHex, hexToBytes, utf8 } from "../../lib/protocol/bytes.ts";
import { keyPairFromSeed, L } from "../../lib/protocol/keys.ts";
import { createMemberCache } from "../../lib/protocol/member_cache.ts";
import {
  type KeyPrecomputation,
  memberFromPrecomputation,
  precomputeKey,
} from "../../lib/protocol/key_precomputation.ts";
import {
  checkRing,
  hashToPoint,
  hashToScalar,
  KEY_IMAGE_DST,
  type Member,
  type RingSignature,
  signRing,
  tagOf,
  transcript,
  verifyRing,
} from "../../lib/protocol/ring_signature.ts";
import { traceRing } from "../../lib/protocol/ring_trace.ts";
import { decodeSignature, encodeSignature } from "../../lib/protocol/signature_wire.ts";
import { drbg } from "../helpers/drbg.ts";
import rfc9380 from "../vectors/rfc9380_edwards25519_ro.json" with { type: "json" };
import lsag from "../vectors/lsag_v1.json" with { type: "json" };
import hsVectors from "../vectors/hash_to_scalar.json" with { type: "json" };

const Point = ed25519.Point;
const seedsFor = (label: string, n: number) => {
  const next = drbg(label);
  return Array.from({ length: n }, () => next(32));
};
const ringOf = (seeds: Uint8Array[]) => seeds.map((s) => keyPairFromSeed(s).publicKey);

// One ring of 8 reused by the corpus below: signing costs milliseconds.
const seeds = seedsFor("ring-8", 9);
const ring = ringOf(seeds.slice(0, 8));
const message = "candidate A";
const good = signRing({ ring, seed: seeds[3], message });
const order8 = Point.fromBytes(hexToBytes(ED25519_TORSION_SUBGROUP[1]));
const identity = hexToBytes("01".padEnd(64, "0"));

const scalarHex = (s: bigint) => bytesToHex(numberToBytesLE(s, 32));
const addPoint = (bytes: Uint8Array, q: typeof order8) => Point.fromBytes(bytes).add(q).toBytes();
const clone = (s: RingSignature): RingSignature => ({
  c0: s.c0.slice(),
  r: s.r.map((x) => x.slice()),
  tag: s.tag.slice(),
  ring: s.ring.map((x) => x.slice()),
});

Deno.test("Hp implements RFC 9380 edwards25519_XMD:SHA-512_ELL2_RO_ (J.5.1 vectors)", () => {
  for (const v of rfc9380.vectors) {
    const point = ed25519_hasher.hashToCurve(utf8(v.msg), { DST: rfc9380.dst });
    const { x, y } = point.toAffine();
    assert.equal(x.toString(16).padStart(64, "0"), v.x, `x for msg "${v.msg.slice(0, 8)}"`);
    assert.equal(y.toString(16).padStart(64, "0"), v.y, `y for msg "${v.msg.slice(0, 8)}"`);
  }
  // Our Hp is that suite with our DST, and lands in the prime-order subgroup.
  const pk = ring[0];
  assert.ok(hashToPoint(pk).equals(ed25519_hasher.hashToCurve(pk, { DST: KEY_IMAGE_DST })));
  assert.ok(hashToPoint(pk).isTorsionFree());
});

Deno.test("Hs gives the independently computed known answers, whole or in parts", async (t) => {
  for (const v of hsVectors.vectors) {
    await t.step(v.desc, () => {
      const input = hexToBytes(v.input);
      const expected = bytesToNumberLE(hexToBytes(v.scalar, 32));
      assert.ok(expected < L);
      assert.equal(hashToScalar([input]), expected);
      const cut = input.length >> 1;
      const [head, tail] = [input.subarray(0, cut), input.subarray(cut)];
      assert.equal(hashToScalar([head, tail]), expected, "the same bytes in two parts");
      const absorbed = sha512.create().update(head);
      assert.equal(hashToScalar([tail], absorbed), expected, "after a state holding the head");
      assert.equal(hashToScalar([tail], absorbed), expected, "the state is not consumed");
    });
  }
  assert.throws(() => hashToScalar(["abc" as unknown as Uint8Array]), TypeError);
});

Deno.test("every challenge of a signature is Hs(T ‖ L_i ‖ R_i), the one Hs", () => {
  // The ring equations of protocol §2 written out with noble's points and hashToScalar alone.
  const t = transcript(good.ring, good.tag, message);
  const tag = Point.fromBytes(good.tag);
  const c0 = bytesToNumberLE(good.c0);
  let c = c0;
  good.ring.forEach((member, i) => {
    const r = bytesToNumberLE(good.r[i]);
    const li = Point.BASE.multiplyUnsafe(r).add(Point.fromBytes(member).multiplyUnsafe(c));
    const ri = hashToPoint(member).multiplyUnsafe(r).add(tag.multiplyUnsafe(c));
    c = hashToScalar([t, li.toBytes(), ri.toBytes()]);
  });
  assert.equal(c, c0);
});

Deno.test("transcript layout follows protocol §2", () => {
  const t = transcript(ring.slice(0, 2), good.tag, "hé");
  const label = utf8("ringvote/v1/lsag");
  assert.deepEqual(t.slice(0, label.length), label);
  assert.deepEqual([...t.slice(label.length, label.length + 4)], [0, 0, 0, 2]);
  assert.equal(t.length, label.length + 4 + 32 * 3 + 4 + 3);
  assert.deepEqual([...t.slice(-7, -3)], [0, 0, 0, 3]);
});

Deno.test("frozen LSAG v1 vectors are reproduced byte for byte and verify", () => {
  for (const v of lsag.vectors) {
    const vSeeds = v.seeds.map((h) => hexToBytes(h));
    const sig = signRing(
      { ring: ringOf(vSeeds), seed: vSeeds[v.signer], message: v.message },
      drbg(v.randomLabel),
    );
    assert.equal(encodeSignature(sig), v.signature);
    assert.ok(verifyRing(decodeSignature(v.signature), v.message));
    assert.equal(bytesToHex(sig.tag), bytesToHex(tagOf(vSeeds[v.signer])));
  }
});

Deno.test("a fresh signature verifies and its tag is x·Hp(P)", () => {
  assert.deepEqual(checkRing(good, message), { ok: true });
  const { secret, publicKey } = keyPairFromSeed(seeds[3]);
  assert.equal(bytesToHex(good.tag), hashToPoint(publicKey).multiply(secret).toHex());
});

type Case = { desc: string; make: () => [RingSignature, string]; reason: RegExp };
const mutate = (f: (s: RingSignature) => void, msg = message): [RingSignature, string] => {
  const s = clone(good);
  f(s);
  return [s, msg];
};
const otherSeeds = seedsFor("other", 70);

const corpus: Case[] = [
  {
    desc: "tag plus an order-8 point (2017 CryptoNote key-image flaw)",
    make: () => mutate((s) => (s.tag = addPoint(s.tag, order8))),
    reason: /tag has a small-order component/,
  },
  {
    desc: "identity tag",
    make: () => mutate((s) => (s.tag = identity)),
    reason: /tag is the identity/,
  },
  {
    desc: "small-order tag",
    make: () => mutate((s) => (s.tag = order8.toBytes())),
    reason: /tag has a small-order component/,
  },
  {
    desc: "identity ring member",
    make: () => mutate((s) => (s.ring[1] = identity)),
    reason: /ring member 1 is the identity/,
  },
  {
    desc: "small-order ring member",
    make: () => mutate((s) => (s.ring[2] = order8.toBytes())),
    reason: /ring member 2 has a small-order component/,
  },
  {
    desc: "torsioned ring member (key plus an order-8 point)",
    make: () => mutate((s) => (s.ring[4] = addPoint(s.ring[4], order8))),
    reason: /ring member 4 has a small-order component/,
  },
  {
    desc: "non-canonical ring member (y >= p)",
    make: () => mutate((s) => (s.ring[0] = hexToBytes("ee" + "ff".repeat(30) + "7f"))),
    reason: /ring member 0 is not a canonical curve point/,
  },
  {
    desc: "response r_0 + L (congruent but not canonical)",
    make: () =>
      mutate((s) => {
        const r0 = BigInt("0x" + bytesToHex(s.r[0].slice().reverse()));
        s.r[0] = hexToBytes(scalarHex(r0 + L));
      }),
    reason: /r\[0\] is not a canonical scalar/,
  },
  {
    desc: "c0 = L",
    make: () => mutate((s) => (s.c0 = hexToBytes(scalarHex(L)))),
    reason: /c0 is not a canonical scalar/,
  },
  {
    desc: "duplicate ring member",
    make: () => mutate((s) => (s.ring[7] = s.ring[6].slice())),
    reason: /ring member 7 is repeated/,
  },
  {
    desc: "ring of one",
    make: () => mutate((s) => ((s.ring = s.ring.slice(0, 1)), (s.r = s.r.slice(0, 1)))),
    reason: /ring size must be 2\.\.64, got 1/,
  },
  {
    desc: "ring of 65",
    make: () =>
      mutate((s) => {
        s.ring = ringOf(otherSeeds.slice(0, 65));
        s.r = s.ring.map(() => s.r[0]);
      }),
    reason: /ring size must be 2\.\.64, got 65/,
  },
  {
    desc: "fewer responses than members",
    make: () => mutate((s) => (s.r = s.r.slice(0, 7))),
    reason: /expected 8 responses/,
  },
  {
    desc: "a lone surrogate in the message",
    make: () => mutate(() => {}, message + "\uD800"),
    reason: /message is not well-formed Unicode: it holds a lone surrogate/,
  },
  { desc: "changed message", make: () => mutate(() => {}, message + "!"), reason: /do not close/ },
  {
    desc: "swapped responses",
    make: () => mutate((s) => ([s.r[0], s.r[1]] = [s.r[1], s.r[0]])),
    reason: /do not close/,
  },
  {
    desc: "altered c0",
    make: () => mutate((s) => (s.c0[0] ^= 1)),
    reason: /do not close/,
  },
  {
    desc: "reordered ring",
    make: () => mutate((s) => ([s.ring[0], s.ring[1]] = [s.ring[1], s.ring[0]])),
    reason: /do not close/,
  },
  {
    desc: "tag of another key",
    make: () => mutate((s) => (s.tag = tagOf(seeds[8]))),
    reason: /do not close/,
  },
  {
    desc: "another member's tag",
    make: () => mutate((s) => (s.tag = tagOf(seeds[0]))),
    reason: /do not close/,
  },
];

Deno.test("checkRing refuses the negative corpus, each for its reason", async (t) => {
  for (const c of corpus) {
    await t.step(c.desc, () => {
      const [sig, msg] = c.make();
      const result = checkRing(sig, msg);
      assert.equal(result.ok, false);
      assert.match(result.ok ? "" : result.reason, c.reason);
      assert.equal(verifyRing(sig, msg), false);
    });
  }
});

Deno.test("traceRing gives checkRing's verdict on every case of the negative corpus", async (t) => {
  for (const c of corpus) {
    await t.step(c.desc, () => {
      const [sig, msg] = c.make();
      const trace = traceRing(sig, msg);
      assert.deepEqual(trace.verdict, checkRing(sig, msg));
      // Ring arithmetic is shown only when every earlier check passed, and then it does not close.
      const arithmetic = c.reason.test("the ring equations do not close");
      assert.equal(trace.closing?.closes ?? null, arithmetic ? false : null);
      assert.equal(trace.steps.length, arithmetic ? sig.ring.length : 0);
    });
  }
});

Deno.test("traceRing of a valid signature walks n steps from c_0 back to c_0", () => {
  const trace = traceRing(good, message);
  assert.deepEqual(trace.verdict, { ok: true });
  assert.equal(trace.steps.length, 8);
  assert.equal(trace.steps[0].c, bytesToHex(good.c0));
  trace.steps.forEach((step, i) => {
    assert.equal(step.r, bytesToHex(good.r[i]));
    // Each step starts from the challenge the previous one produced.
    if (i > 0) assert.equal(step.c, trace.steps[i - 1].next);
    // L_i = r_i·G + c_i·P_i, recomputed here with noble's own arithmetic.
    const ci = BigInt("0x" + step.c.match(/../g)!.reverse().join(""));
    const ri = BigInt("0x" + step.r.match(/../g)!.reverse().join(""));
    const li = Point.BASE.multiply(ri).add(Point.fromBytes(ring[i]).multiply(ci));
    assert.equal(step.L, bytesToHex(li.toBytes()));
  });
  assert.deepEqual(trace.closing, {
    cn: bytesToHex(good.c0),
    c0: bytesToHex(good.c0),
    closes: true,
  });
  for (const m of [...trace.members, trace.tag]) {
    assert.deepEqual([m.canonical, m.notIdentity, m.torsionFree], ["pass", "pass", "pass"]);
  }
});

Deno.test("traceRing lists every member's checks, not only the first failure", () => {
  const [sig] = mutate((s) => {
    s.ring[1] = identity;
    s.ring[4] = addPoint(s.ring[4], order8);
  });
  const trace = traceRing(sig, message);
  assert.deepEqual(trace.verdict, { ok: false, reason: "ring member 1 is the identity" });
  const outcomes = trace.members.map((m) => [m.canonical, m.notIdentity, m.torsionFree]);
  assert.deepEqual(outcomes[1], ["pass", "fail", "not run"]);
  assert.deepEqual(outcomes[4], ["pass", "pass", "fail"]);
  assert.deepEqual(outcomes[0], ["pass", "pass", "pass"]);
  assert.equal(trace.steps.length, 0);
});

Deno.test("checkRing and decodeSignature throw for malformed input", () => {
  assert.throws(() => checkRing({ ...good, c0: new Uint8Array(31) }, message), RangeError);
  assert.throws(
    () => checkRing({ ...good, ring: "x" as unknown as Uint8Array[] }, message),
    TypeError,
  );
  assert.throws(() => checkRing(good, 5 as unknown as string), TypeError);
  const wire = encodeSignature(good);
  assert.throws(() => decodeSignature("{"), SyntaxError);
  assert.throws(() => decodeSignature("[]"), TypeError);
  assert.throws(
    () => decodeSignature(wire.replace(/[0-9a-f]{64}/, (h) => h.toUpperCase())),
    RangeError,
  );
  assert.throws(() => decodeSignature(wire.replace(`"c0"`, ` "c0"`)), RangeError);
  assert.throws(() => decodeSignature(wire.slice(0, -1) + `,"x":1}`), RangeError);
  const o = JSON.parse(wire);
  assert.throws(() => decodeSignature(JSON.stringify({ ...o, r: o.r.slice(1) })), RangeError);
  assert.throws(() => decodeSignature(JSON.stringify({ ...o, I: o.I.slice(2) })), RangeError);
  assert.deepEqual(decodeSignature(wire), good);
});

Deno.test("signRing refuses a ring without the signer or outside 2..64", () => {
  assert.throws(() => signRing({ ring, seed: seeds[8], message }), RangeError);
  assert.throws(() => signRing({ ring: ring.slice(0, 1), seed: seeds[0], message }), RangeError);
  assert.throws(
    () => signRing({ ring: [ring[0], ring[0], ring[1]], seed: seeds[0], message }),
    RangeError,
  );
});

Deno.test("signRing refuses a message that is not well-formed Unicode, naming it", () => {
  for (const bad of ["\uD800", "ok\uDFFF", "\uDC00\uD800"]) {
    assert.throws(
      () => signRing({ ring, seed: seeds[3], message: bad }),
      (e: Error) => e instanceof RangeError && /message is not well-formed Unicode/.test(e.message),
      JSON.stringify(bad),
    );
  }
  // Surrogate pairs are well-formed: astral text signs and verifies.
  const astral = "🗳️ e\u0301 \u{1F1EB}\u{1F1F7}";
  assert.equal(verifyRing(signRing({ ring, seed: seeds[3], message: astral }), astral), true);
});

Deno.test("checkRing refuses a lone surrogate even where its UTF-8 bytes match the signed text", () => {
  const overReplacement = signRing({ ring, seed: seeds[3], message: "\uFFFD" });
  assert.equal(verifyRing(overReplacement, "\uFFFD"), true);
  const check = checkRing(overReplacement, "\uD800");
  assert.equal(check.ok, false);
  assert.match((check as { reason: string }).reason, /message is not well-formed Unicode/);
});

Deno.test("property: sign then verify holds; any single-byte change fails", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 2, max: 6 }),
      fc.nat(),
      fc.string({ maxLength: 40 }),
      fc.nat(),
      fc.integer({ min: 1, max: 255 }),
      (n, signerPick, msg, bytePick, flip) => {
        const members = otherSeeds.slice(0, n);
        const signer = signerPick % n;
        const sig = signRing({ ring: ringOf(members), seed: members[signer], message: msg });
        assert.ok(verifyRing(sig, msg));
        // Flip one byte of the signature's binary fields (c0, r, I, ring) and re-verify.
        const fields = [sig.c0, ...sig.r, sig.tag, ...sig.ring];
        const field = fields[bytePick % fields.length];
        const at = (bytePick >> 4) % 32;
        field[at] ^= flip;
        assert.equal(verifyRing(sig, msg), false);
      },
    ),
    { numRuns: 25 },
  );
});

Deno.test("property: one key signing in two rings gives one tag; two keys give two tags", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 60 }), (a, b) => {
      const ringA = ringOf([otherSeeds[a], otherSeeds[61], otherSeeds[62]]);
      const ringB = ringOf([otherSeeds[63], otherSeeds[a], otherSeeds[64], otherSeeds[65]]);
      const sA = signRing({ ring: ringA, seed: otherSeeds[a], message: "one" });
      const sB = signRing({ ring: ringB, seed: otherSeeds[a], message: "two" });
      assert.deepEqual(sA.tag, sB.tag);
      assert.equal(bytesToHex(tagOf(otherSeeds[a])) === bytesToHex(tagOf(otherSeeds[b])), a === b);
    }),
    { numRuns: 15 },
  );
});

Deno.test("members with stored combs change no verdict of the negative corpus", async (t) => {
  const known = new Map<string, Member>(
    ring.map((
      p,
    ) => [bytesToHex(p), memberFromPrecomputation(precomputeKey(p) as KeyPrecomputation)]),
  );
  assert.ok(verifyRing(good, message, { members: known }));
  for (const c of corpus) {
    await t.step(c.desc, () => {
      const [sig, msg] = c.make();
      const result = checkRing(sig, msg, { members: known });
      assert.equal(result.ok, false);
      assert.match(result.ok ? "" : result.reason, c.reason);
    });
  }
});

Deno.test("a member cache remembers only members that passed every check", () => {
  const members = createMemberCache();
  assert.ok(verifyRing(good, message, { members }));
  assert.equal(members.size, 8);
  for (const c of corpus) checkRing(...c.make(), { members });
  assert.equal(members.get(bytesToHex(order8.toBytes())), undefined);
  assert.equal(members.get(bytesToHex(identity)), undefined);
  assert.ok(verifyRing(good, message, { members }));
});
