import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createPrivateKey, createPublicKey, sign as nodeSign } from "node:crypto";
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
