import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import {
  createPrivateKey,
  createPublicKey,
  sign as nodeSign,
  verify as nodeVerify,
} from "node:crypto";
import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import { sha512 } from "@noble/hashes/sha2.js";
import fc from "fast-check";
import { bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import {
  checkForkEvidence,
  forkEvidence,
  headMessage,
  serverPublicKey,
  signHead,
  verifyHead,
} from "../../lib/protocol/head.ts";
import { FORK_EVIDENCE_KIND, type SignedHead } from "../../lib/protocol/schemas.ts";
import { hostilePoints } from "../helpers/ledger_fixtures.ts";

// PKCS#8 wrapping of a raw Ed25519 seed (RFC 8410 §7), so node:crypto signs with the same key.
const PKCS8_PREFIX = "302e020100300506032b657004220420";

/** The head message built byte by byte, independently of lib/protocol/head.ts. */
function handMadeMessage(height: number, hash: string): Uint8Array {
  const label = new TextEncoder().encode("ringvote/v1/head");
  const out = new Uint8Array(label.length + 8 + 32);
  out.set(label, 0);
  new DataView(out.buffer).setBigUint64(label.length, BigInt(height), false);
  out.set(hexToBytes(hash, 32), label.length + 8);
  return out;
}

/** node:crypto's RFC 8032 signature and public key for `seed`. */
function nodeSignature(seed: Uint8Array, message: Uint8Array): { sig: string; key: string } {
  const privateKey = createPrivateKey({
    key: Buffer.from(PKCS8_PREFIX + bytesToHex(seed), "hex"),
    format: "der",
    type: "pkcs8",
  });
  const spki = createPublicKey(privateKey).export({ format: "der", type: "spki" });
  return {
    sig: bytesToHex(new Uint8Array(nodeSign(null, message, privateKey))),
    key: bytesToHex(new Uint8Array(spki).slice(-32)),
  };
}

const seed = hexToBytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
const hashA = "aa".repeat(32);
const hashB = "bb".repeat(32);

function head(height: number, hash: string, by = seed): SignedHead {
  return { height, hash, head_signature: signHead(by, { height, hash }) };
}

Deno.test("the head message is label ‖ u64be(height) ‖ hash, byte for byte", () => {
  for (const height of [0, 1, 255, 256, 2 ** 32, Number.MAX_SAFE_INTEGER]) {
    assert.deepEqual(headMessage(height, hexToBytes(hashA)), handMadeMessage(height, hashA));
  }
});

Deno.test("signHead agrees with node:crypto's Ed25519 over hand-built bytes", () => {
  for (const [height, hash] of [[0, hashA], [7, hashB], [123456789, "0f".repeat(32)]] as const) {
    const expected = nodeSignature(seed, handMadeMessage(height, hash));
    assert.equal(serverPublicKey(seed), expected.key);
    assert.equal(signHead(seed, { height, hash }), expected.sig);
    assert.equal(verifyHead(expected.key, { height, hash, head_signature: expected.sig }), true);
  }
});

Deno.test("verifyHead accepts node:crypto signatures for random seeds and heads", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.nat(),
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      (s, height, hashBytes) => {
        const hash = bytesToHex(hashBytes);
        const { sig, key } = nodeSignature(s, handMadeMessage(height, hash));
        return verifyHead(key, { height, hash, head_signature: sig });
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("verifyHead is false for a well-formed head that another key, height or hash signed", () => {
  const key = serverPublicKey(seed);
  const other = hexToBytes("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb");
  const good = head(5, hashA);
  const cases: { desc: string; key: string; head: SignedHead }[] = [
    { desc: "another key", key: serverPublicKey(other), head: good },
    { desc: "signed by another key", key, head: head(5, hashA, other) },
    { desc: "another height", key, head: { ...good, height: 6 } },
    { desc: "another hash", key, head: { ...good, hash: hashB } },
    {
      desc: "one signature bit flipped",
      key,
      head: { ...good, head_signature: flipLast(good.head_signature) },
    },
    {
      desc: "s + L (non-canonical scalar)",
      key,
      head: { ...good, head_signature: withScalarPlusL(good.head_signature) },
    },
    { desc: "a small-order key", key: hostilePoints().smallOrder, head: good },
    { desc: "a non-canonical key", key: hostilePoints().nonCanonical, head: good },
  ];
  assert.equal(verifyHead(key, good), true);
  for (const c of cases) assert.equal(verifyHead(c.key, c.head), false, c.desc);
});

Deno.test("verifyHead throws for malformed input: wrong type, wrong length, bad height", () => {
  const key = serverPublicKey(seed);
  const good = head(1, hashA);
  const cases: { desc: string; run: () => unknown; error: ErrorConstructor }[] = [
    { desc: "key of 31 bytes", run: () => verifyHead(key.slice(2), good), error: RangeError },
    { desc: "key not hex", run: () => verifyHead("zz".repeat(32), good), error: RangeError },
    {
      desc: "key not a string",
      run: () => verifyHead(42 as unknown as string, good),
      error: TypeError,
    },
    {
      desc: "signature of 63 bytes",
      run: () => verifyHead(key, { ...good, head_signature: good.head_signature.slice(2) }),
      error: RangeError,
    },
    {
      desc: "hash of 33 bytes",
      run: () => verifyHead(key, { ...good, hash: hashA + "00" }),
      error: RangeError,
    },
    { desc: "height -1", run: () => verifyHead(key, { ...good, height: -1 }), error: RangeError },
    { desc: "height 1.5", run: () => verifyHead(key, { ...good, height: 1.5 }), error: RangeError },
    {
      desc: "height as a string",
      run: () => verifyHead(key, { ...good, height: "1" as unknown as number }),
      error: TypeError,
    },
    {
      desc: "seed of 31 bytes",
      run: () => signHead(seed.slice(1), { height: 1, hash: hashA }),
      error: RangeError,
    },
    {
      desc: "hash as bytes to headMessage of 31",
      run: () => headMessage(1, new Uint8Array(31)),
      error: RangeError,
    },
  ];
  for (const c of cases) assert.throws(c.run, c.error, c.desc);
});

Deno.test("checkForkEvidence proves a fork from two signed heads at one height", () => {
  const evidence = forkEvidence(serverPublicKey(seed), [head(3, hashB), head(3, hashA)]);
  assert.equal(evidence.kind, FORK_EVIDENCE_KIND);
  assert.deepEqual(evidence.heads.map((h) => h.hash), [hashB, hashA], "in the order seen");
  assert.deepEqual(checkForkEvidence(evidence), { ok: true, height: 3 });
  // It survives the round trip through a downloaded JSON file.
  assert.deepEqual(checkForkEvidence(JSON.parse(JSON.stringify(evidence))), {
    ok: true,
    height: 3,
  });
});

Deno.test("checkForkEvidence refuses evidence that proves nothing, never throwing", () => {
  const key = serverPublicKey(seed);
  const other = hexToBytes("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7");
  const a = head(3, hashA);
  const b = head(3, hashB);
  const cases: { desc: string; evidence: unknown; reason: RegExp }[] = [
    { desc: "same hash twice", evidence: forkEvidence(key, [a, a]), reason: /same hash/ },
    {
      desc: "different heights",
      evidence: forkEvidence(key, [a, head(4, hashB)]),
      reason: /different heights/,
    },
    {
      desc: "one head signed by another key",
      evidence: forkEvidence(key, [a, head(3, hashB, other)]),
      reason: /not signed by key/,
    },
    {
      desc: "a bad signature",
      evidence: forkEvidence(key, [a, { ...b, head_signature: flipLast(b.head_signature) }]),
      reason: /not signed by key/,
    },
    {
      desc: "the wrong key",
      evidence: forkEvidence(serverPublicKey(other), [a, b]),
      reason: /not signed by key/,
    },
    {
      desc: "a signature of the wrong length",
      evidence: forkEvidence(key, [a, { ...b, head_signature: b.head_signature.slice(2) }]),
      reason: /head_signature/,
    },
    { desc: "one head only", evidence: { ...forkEvidence(key, [a, b]), heads: [a] }, reason: /./ },
    { desc: "no kind", evidence: { key, heads: [a, b] }, reason: /kind/ },
    { desc: "null", evidence: null, reason: /Not fork evidence/ },
    { desc: "a string", evidence: "fork", reason: /Not fork evidence/ },
    {
      desc: "a small-order key",
      evidence: forkEvidence(hostilePoints().smallOrder, [a, b]),
      reason: /not signed by key/,
    },
  ];
  for (const c of cases) {
    const result = checkForkEvidence(c.evidence);
    assert.equal(result.ok, false, c.desc);
    assert.match((result as { reason: string }).reason, c.reason, c.desc);
  }
});

// Issue 19, point 2: one signature, one meaning. verifyHead checks RFC 8032 §5.1.7 cofactorless
// ([s]B = R + [k]A exactly) and refuses non-canonical, torsioned and small-order A and R, and
// s >= L. The signatures below are made by hand over the head message at height 7, hash aa…aa.
//
// Each case records `openssl`: what OpenSSL 3.0.19 (Node 20.20.2's crypto.verify) answered, checked
// by the last test when a `node` is on PATH. Deno's node:crypto is Deno's own Rust code, not
// OpenSSL; where it answers otherwise the case says so in `denoNodeCrypto`. libsodium 1.0.18
// (crypto_sign_verify_detached, checked once by hand) is named in the comments.

const { Point } = ed25519;
const { Fn } = Point;
const { scalar: secret, pointBytes: publicKey } = ed25519.utils.getExtendedPublicKey(seed);
const P = 2n ** 255n - 19n;
const crafted = { height: 7, hash: hashA };
/** A point of order 8, the generator of the torsion subgroup. */
const torsion8 = Point.fromHex(ED25519_TORSION_SUBGROUP[1]);

type Crafted = {
  desc: string;
  key: string;
  head: SignedHead;
  openssl: boolean;
  denoNodeCrypto?: boolean;
};

/** node:crypto's Ed25519 verify, the key imported from its raw 32 bytes as a JWK. */
function nodeCryptoVerify(key: string, message: Uint8Array, signature: string): boolean {
  const keyObject = createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(key, "hex").toString("base64url") },
    format: "jwk",
  });
  return nodeVerify(null, message, keyObject, Buffer.from(signature, "hex"));
}

/** noble's check before issue 19: cofactored, [8][s]B = [8]R + [8][k]A. */
function cofactoredVerify(key: string, head: SignedHead): boolean {
  const message = handMadeMessage(head.height, head.hash);
  const signature = hexToBytes(head.head_signature, 64);
  return ed25519.verify(signature, message, hexToBytes(key, 32), { zip215: false });
}

/** k = SHA-512(R ‖ A ‖ M) mod L over the crafted head, computed apart from head.ts. */
function challenge(r: Uint8Array, a: Uint8Array): bigint {
  const message = handMadeMessage(crafted.height, crafted.hash);
  return Fn.create(bytesToNumberLE(sha512(new Uint8Array([...r, ...a, ...message]))));
}

/** The i-th of a fixed sequence of scalars, so every crafted case is the same on every run. */
function scalarAt(i: number): bigint {
  return Fn.create(bytesToNumberLE(sha512(new TextEncoder().encode(`ringvote/test/${i}`))));
}

/** The crafted head signed with R and s, s written as 32 little-endian bytes even when s >= L. */
function craftedHead(r: Uint8Array, s: bigint): SignedHead {
  return {
    ...crafted,
    head_signature: bytesToHex(new Uint8Array([...r, ...numberToBytesLE(s, 32)])),
  };
}

/**
 * A head with R = [s]B whose k is a multiple of `order`, so [s]B = R + [k]A holds exactly for any A
 * of that order: the naive cofactorless equation passes and only A itself is wrong.
 */
function headForKeyOfOrder(a: Uint8Array, order: bigint): SignedHead {
  for (let i = 0;; i++) {
    const r = Point.BASE.multiply(scalarAt(i)).toBytes();
    if (challenge(r, a) % order === 0n) return craftedHead(r, scalarAt(i));
  }
}

/** The order of a small-order point: the least n of 1, 2, 4, 8 with [n]T = O. */
function orderOf(point: InstanceType<typeof Point>): bigint {
  return [1n, 2n, 4n, 8n].find((n) => point.multiplyUnsafe(n).is0()) ?? 0n;
}

/** 32 bytes of y little-endian with the sign bit of x set or not: any encoding, canonical or not. */
function encodePoint(y: bigint, sign: boolean): Uint8Array {
  const bytes = numberToBytesLE(y, 32);
  if (sign) bytes[31] |= 0x80;
  return bytes;
}

/** Signatures with a torsioned or small-order R by the honest key. */
function torsionedRCases(): Crafted[] {
  const key = bytesToHex(publicKey);
  const r = scalarAt(1000);
  const torsioned = Point.BASE.multiply(r).add(torsion8).toBytes();
  const cases: Crafted[] = [{
    desc: "R = [r]B + T, T of order 8, s = r + k·a",
    key,
    head: craftedHead(torsioned, Fn.add(r, Fn.mul(challenge(torsioned, publicKey), secret))),
    openssl: false,
  }];
  // R = T small-order, s = k·a: [8][s]B = [8]R + [8][k]A, so a cofactored check accepts all 8; the
  // cofactorless equation holds only for R = O. OpenSSL accepts that one: it re-encodes
  // [s]B − [k]A = O and finds R's bytes. libsodium refuses it (ge25519_has_small_order(R)).
  for (const [i, hex] of ED25519_TORSION_SUBGROUP.entries()) {
    const rBytes = hexToBytes(hex);
    cases.push({
      desc: `R = small-order point ${i} (order ${orderOf(Point.fromHex(hex))}), s = k·a`,
      key,
      head: craftedHead(rBytes, Fn.mul(challenge(rBytes, publicKey), secret)),
      openssl: hex === bytesToHex(Point.ZERO.toBytes()),
    });
  }
  return cases;
}

/**
 * The 8 small-order points as A, and a mixed-order A = [a]B + T, each with a signature that passes
 * the naive cofactorless equation. OpenSSL accepts all 9: it checks neither A's order nor its
 * subgroup. libsodium 1.0.18 refuses the 8 (ge25519_has_small_order(A)) but accepts the mixed one,
 * whose subgroup it does not check. We refuse all 9 (protocol §4.5).
 */
function smallOrderKeyCases(): Crafted[] {
  const cases: Crafted[] = ED25519_TORSION_SUBGROUP.map((hex, i) => ({
    desc: `A = small-order point ${i} (order ${orderOf(Point.fromHex(hex))}) ${hex}`,
    key: hex,
    head: headForKeyOfOrder(hexToBytes(hex), orderOf(Point.fromHex(hex))),
    openssl: true,
  }));
  const mixed = Point.BASE.multiply(secret).add(torsion8).toBytes();
  for (let i = 0;; i++) {
    const r = Point.BASE.multiply(scalarAt(i)).toBytes();
    const k = challenge(r, mixed);
    if (k % 8n !== 0n) continue; // then [k]T = O and [s]B = R + [k]A holds exactly
    cases.push({
      desc: "A = [a]B + T, T of order 8, s = r + k·a with k ≡ 0 mod 8",
      key: bytesToHex(mixed),
      head: craftedHead(r, Fn.add(scalarAt(i), Fn.mul(k, secret))),
      openssl: true,
    });
    return cases;
  }
}

/**
 * Non-canonical encodings (RFC 8032 §5.1.3: y >= p, or x = 0 with the sign bit set) of R and A,
 * each with a signature a decoder that reduces y and ignores the sign of x = 0 would accept, and
 * the honest signature with s + L. Only small-order points have such encodings whose discrete log
 * we know, so these are small-order too; the encoding is refused first.
 */
function nonCanonicalCases(): Crafted[] {
  const key = bytesToHex(publicKey);
  const cases: Crafted[] = [];
  // R decodes to O: s = k·a. OpenSSL compares R's bytes with the canonical encoding of O: refused.
  for (
    const [desc, r] of [["y = p + 1", encodePoint(P + 1n, false)], ["-0", encodePoint(1n, true)]]
  ) {
    const rBytes = r as Uint8Array;
    cases.push({
      desc: `R = the identity encoded as ${desc}, s = k·a`,
      key,
      head: craftedHead(rBytes, Fn.mul(challenge(rBytes, publicKey), secret)),
      openssl: false,
    });
  }
  // A of order 1, 2 or 4 written non-canonically: OpenSSL 3.0 reduces y and keeps the bytes for k,
  // so it accepts; Deno's node:crypto refuses them, as does libsodium (ge25519_is_canonical).
  const keys: [string, Uint8Array, bigint][] = [
    ["the identity as y = p + 1", encodePoint(P + 1n, false), 1n],
    ["the identity as -0 (x = 0, sign bit set)", encodePoint(1n, true), 1n],
    ["(0, -1) as -0", encodePoint(P - 1n, true), 2n],
    ["a point of order 4 as y = p", encodePoint(P, false), 4n],
    ["a point of order 4 as y = p, sign bit set", encodePoint(P, true), 4n],
  ];
  for (const [desc, a, order] of keys) {
    cases.push({
      desc: `A = ${desc}`,
      key: bytesToHex(a),
      head: headForKeyOfOrder(a, order),
      openssl: true,
      denoNodeCrypto: false,
    });
  }
  const honest = head(crafted.height, crafted.hash);
  cases.push({
    desc: "s + L, R and the key honest",
    key,
    head: { ...honest, head_signature: withScalarPlusL(honest.head_signature) },
    openssl: false,
  });
  return cases;
}

/** Asserts verifyHead refuses every case and node:crypto answers as recorded. */
function assertRefusedAndNodeCryptoAsRecorded(cases: Crafted[]) {
  for (const c of cases) {
    assert.equal(verifyHead(c.key, c.head), false, c.desc);
    const message = handMadeMessage(c.head.height, c.head.hash);
    const expected = c.denoNodeCrypto ?? c.openssl;
    assert.equal(nodeCryptoVerify(c.key, message, c.head.head_signature), expected, c.desc);
  }
}

Deno.test("verifyHead and node:crypto both accept 200 honest heads and both refuse each with one bit flipped in R, s or the hash", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.nat(),
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.nat({ max: 255 }),
      fc.nat({ max: 255 }),
      fc.nat({ max: 255 }),
      (by, height, hashBytes, rBit, sBit, hashBit) => {
        const key = serverPublicKey(by);
        const hash = bytesToHex(hashBytes);
        const good = head(height, hash, by);
        const message = handMadeMessage(height, hash);
        assert.equal(verifyHead(key, good), true);
        assert.equal(nodeCryptoVerify(key, message, good.head_signature), true);
        for (const bit of [rBit, 256 + sBit]) {
          const bad = flipBit(good.head_signature, bit);
          assert.equal(verifyHead(key, { ...good, head_signature: bad }), false, `bit ${bit}`);
          assert.equal(nodeCryptoVerify(key, message, bad), false, `bit ${bit}`);
        }
        const otherHash = flipBit(hash, hashBit);
        assert.equal(verifyHead(key, { ...good, hash: otherHash }), false, `hash bit ${hashBit}`);
        const otherMessage = handMadeMessage(height, otherHash);
        assert.equal(nodeCryptoVerify(key, otherMessage, good.head_signature), false);
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("a torsioned R that noble's cofactored check accepted is refused by verifyHead and by OpenSSL", () => {
  const [torsioned] = torsionedRCases();
  assert.equal(cofactoredVerify(torsioned.key, torsioned.head), true, "the old check accepted it");
  assertRefusedAndNodeCryptoAsRecorded([torsioned]);
});

Deno.test("R of small order passes noble's cofactored check; verifyHead refuses all 8, OpenSSL accepts only R = O", () => {
  const cases = torsionedRCases().slice(1);
  for (const c of cases) assert.equal(cofactoredVerify(c.key, c.head), true, c.desc);
  assertRefusedAndNodeCryptoAsRecorded(cases);
});

Deno.test("verifyHead refuses the 8 small-order keys and a mixed-order key that pass [s]B = R + [k]A, which OpenSSL accepts", () => {
  const cases = smallOrderKeyCases();
  assert.equal(cases.length, 9);
  const orders = cases.slice(0, 8).map((c) => Number(orderOf(Point.fromHex(c.key))));
  assert.deepEqual(orders.sort(), [1, 2, 4, 4, 8, 8, 8, 8], "the whole torsion subgroup");
  for (const c of cases) {
    const a = Point.fromHex(c.key);
    const k = challenge(hexToBytes(c.head.head_signature.slice(0, 64)), hexToBytes(c.key));
    const s = bytesToNumberLE(hexToBytes(c.head.head_signature.slice(64)));
    const r = Point.fromHex(c.head.head_signature.slice(0, 64));
    assert.ok(Point.BASE.multiplyUnsafe(s).equals(r.add(a.multiplyUnsafe(k))), c.desc);
  }
  const mixed = cases[8];
  assert.equal(
    cofactoredVerify(mixed.key, mixed.head),
    true,
    "the old check accepted the mixed key",
  );
  assertRefusedAndNodeCryptoAsRecorded(cases);
});

Deno.test("verifyHead refuses non-canonical R and A encodings and s + L; OpenSSL agrees except on A", () => {
  assertRefusedAndNodeCryptoAsRecorded(nonCanonicalCases());
});

Deno.test({
  name: "the answers recorded as OpenSSL's are OpenSSL's (node on PATH)",
  ignore: nodeOpenSslVersion() === null,
  fn: async () => {
    const cases = [...torsionedRCases(), ...smallOrderKeyCases(), ...nonCanonicalCases()];
    const input = cases.map((c) => ({
      key: c.key,
      message: bytesToHex(handMadeMessage(c.head.height, c.head.hash)),
      signature: c.head.head_signature,
    }));
    // Node's crypto.verify is OpenSSL's EVP_DigestVerify; the key goes in as DER SPKI (RFC 8410).
    const script = `const c = require("node:crypto"); let d = "";
      process.stdin.on("data", (x) => d += x).on("end", () => console.log(JSON.stringify(
        JSON.parse(d).map(({ key, message, signature }) => c.verify(null, Buffer.from(message, "hex"),
          c.createPublicKey({ key: Buffer.from("302a300506032b6570032100" + key, "hex"),
            format: "der", type: "spki" }), Buffer.from(signature, "hex"))))));`;
    const child = new Deno.Command("node", {
      args: ["-e", script],
      stdin: "piped",
      stdout: "piped",
    })
      .spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(JSON.stringify(input)));
    await writer.close();
    const out = await child.output();
    assert.equal(out.success, true, "node ran");
    const answers: boolean[] = JSON.parse(new TextDecoder().decode(out.stdout));
    for (const [i, c] of cases.entries()) assert.equal(answers[i], c.openssl, c.desc);
  },
});

/** The OpenSSL version of a `node` on PATH, or null when there is none to run. */
function nodeOpenSslVersion(): string | null {
  try {
    const out = new Deno.Command("node", { args: ["-p", "process.versions.openssl"] }).outputSync();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
  } catch {
    return null;
  }
}

/** `hex` with bit `bit` flipped, bits counted little-endian within each byte. */
function flipBit(hex: string, bit: number): string {
  const bytes = hexToBytes(hex);
  bytes[bit >> 3] ^= 1 << (bit & 7);
  return bytesToHex(bytes);
}

function flipLast(hex: string): string {
  return hex.slice(0, -1) + (hex.endsWith("0") ? "1" : "0");
}

/** The signature with s replaced by s + L: same value mod L, not the canonical encoding. */
function withScalarPlusL(signature: string): string {
  const bytes = hexToBytes(signature);
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(bytes[i]);
  s += 2n ** 252n + 27742317777372353535851937790883648493n;
  for (let i = 32; i < 64; i++) {
    bytes[i] = Number(s & 0xffn);
    s >>= 8n;
  }
  return bytesToHex(bytes);
}
