// Join cards (protocol §2.11): the code, its typos, the card key, the set hash and the admission
// signature, each checked against an answer computed here independently (BigInt arithmetic,
// node:crypto, Web Crypto), and the strict verification against hostile keys and signatures.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";
import fc from "fast-check";
import {
  base64urlToBytes,
  bytesToBase64url,
  bytesToHex,
  hexToBytes,
} from "../../lib/protocol/bytes.ts";
import {
  cardAdmission,
  cardAdmitMessage,
  cardFromRandom,
  cardKeyPair,
  cardSetHash,
  cardSetId,
  checkCardAdmission,
  checkCardKey,
  describeCardSet,
  formatCardCode,
  parseCardCode,
  readCardKey,
  signCardAdmission,
  verifyCardAdmission,
} from "../../lib/protocol/cards.ts";
import { CardSetCreated, CardSetPost } from "../../lib/protocol/card_schemas.ts";
import { KeyRegistration } from "../../lib/protocol/schemas.ts";
import { hostilePoints } from "../helpers/ledger_fixtures.ts";

const DATA = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const CHECK = DATA + "*~$=U";
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

/** V of 10 bytes by BigInt arithmetic, most significant byte first. */
function valueOf(bytes: Uint8Array): bigint {
  return bytes.reduce((v, b) => v * 256n + BigInt(b), 0n);
}

/** The display form computed by division, independently of lib/protocol/cards.ts. */
function handCode(bytes: Uint8Array): string {
  let v = valueOf(bytes);
  const check = CHECK[Number(v % 37n)];
  let symbols = "";
  for (let i = 0; i < 16; i++, v /= 32n) symbols = DATA[Number(v % 32n)] + symbols;
  return `${symbols.slice(0, 4)}-${symbols.slice(4, 8)}-${symbols.slice(8, 12)}-${
    symbols.slice(12)
  }-${check}`;
}

Deno.test("formatCardCode: known answers for zero, all ones and a hand-built code", () => {
  assert.equal(formatCardCode(new Uint8Array(10)), "0000-0000-0000-0000-0");
  // 2^80 − 1 = 1208925819614629174706175; mod 37 by hand: 2^36 ≡ 1 (mod 37), 2^80 = 2^72·2^8.
  const ones = new Uint8Array(10).fill(255);
  const expectedCheck = Number((2n ** 80n - 1n) % 37n);
  assert.equal(formatCardCode(ones), `ZZZZ-ZZZZ-ZZZZ-ZZZZ-${CHECK[expectedCheck]}`);
  // 7KQ2M9XD4TNBW3RC: the symbols' values, read as base 32.
  const symbols = "7KQ2M9XD4TNBW3RC";
  let v = 0n;
  for (const s of symbols) v = v * 32n + BigInt(DATA.indexOf(s));
  const bytes = new Uint8Array(10);
  for (let i = 9, w = v; i >= 0; i--, w /= 256n) bytes[i] = Number(w % 256n);
  const code = `7KQ2-M9XD-4TNB-W3RC-${CHECK[Number(v % 37n)]}`;
  assert.equal(formatCardCode(bytes), code);
  assert.equal(cardFromRandom(bytes).code, code);
  const parsed = parseCardCode(code);
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.bytes, bytes);
});

Deno.test("formatCardCode and parseCardCode agree with the hand computation on random cards", () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 10, maxLength: 10 }), (bytes) => {
      const code = handCode(bytes);
      assert.equal(formatCardCode(bytes), code);
      const parsed = parseCardCode(code);
      assert.ok(parsed.ok);
      assert.deepEqual(parsed.bytes, bytes);
      assert.equal(parsed.code, code);
    }),
    { numRuns: 300 },
  );
});

Deno.test("parseCardCode reads a code by Crockford's rules: case, I/L/O, dashes and spaces", () => {
  const bytes = hexToBytes("00112233445566778899");
  const code = handCode(bytes);
  const bare = code.replaceAll("-", "");
  const variants = [
    code,
    code.toLowerCase(),
    bare,
    bare.toLowerCase(),
    ` ${code.slice(0, 9)} ${code.slice(9)}\n`,
    code.replaceAll("-", " "),
    code.replaceAll("1", "I").replaceAll("0", "O"),
    code.replaceAll("1", "l").replaceAll("0", "o"),
    code.replaceAll("1", "L"),
  ];
  for (const text of variants) {
    const parsed = parseCardCode(text);
    assert.ok(parsed.ok, text);
    assert.deepEqual(parsed.bytes, bytes, text);
    assert.equal(parsed.code, code, text);
  }
});

Deno.test("parseCardCode names every typo and never throws", () => {
  // A card whose check symbol is U (V mod 37 = 36), built by search.
  let withU: Uint8Array | null = null;
  for (let i = 0; withU === null; i++) {
    const bytes = new Uint8Array(10);
    new DataView(bytes.buffer).setUint32(6, i);
    if (valueOf(bytes) % 37n === 36n) withU = bytes;
  }
  const uCode = handCode(withU);
  assert.ok(uCode.endsWith("-U"));
  assert.ok(parseCardCode(uCode).ok);
  assert.ok(parseCardCode(uCode.toLowerCase()).ok, "u as the check symbol, in lower case");

  const code = handCode(hexToBytes("0a1b2c3d4e5f60718293"));
  const bare = code.replaceAll("-", "");
  const wrongCheck = bare.slice(0, 16) + CHECK[(CHECK.indexOf(bare[16]) + 1) % 37];
  const swapped = bare[1] + bare[0] + bare.slice(2);
  const cases: [unknown, string][] = [
    ["", "empty"],
    ["  - -", "empty"],
    [undefined, "empty"],
    [42, "empty"],
    [bare.slice(0, 16), "length"],
    [bare + "0", "length"],
    [bare.slice(1), "length"],
    [wrongCheck, "check"],
    [swapped === bare ? "X" : swapped, swapped === bare ? "length" : "check"],
    ["U" + bare.slice(1), "symbol"], // U is a check symbol only
    [bare.slice(0, 5) + "U" + bare.slice(6), "symbol"],
    [bare.slice(0, 3) + "*" + bare.slice(4), "symbol"],
    [bare.slice(0, 16) + "!", "symbol"],
    [bare.slice(0, 7) + "é" + bare.slice(8), "symbol"],
    [bare.slice(0, 16) + "_", "symbol"],
  ];
  for (const [text, expected] of cases) {
    const parsed = parseCardCode(text);
    assert.equal(parsed.ok, false, String(text));
    assert.equal(!parsed.ok && parsed.typo, expected, String(text));
    assert.ok(!parsed.ok && parsed.reason.length > 0);
  }
  // One changed data symbol is always caught: 37 is prime and above 32.
  for (let i = 0; i < 16; i++) {
    for (const s of DATA) {
      if (s === bare[i]) continue;
      const changed = bare.slice(0, i) + s + bare.slice(i + 1);
      const parsed = parseCardCode(changed);
      assert.ok(!parsed.ok && parsed.typo === "check", changed);
    }
  }
});

Deno.test("cardKeyPair: seed = SHA-256(label ‖ V), the public key Web Crypto derives from it", async () => {
  const bytes = hexToBytes("ffeeddccbbaa99887766");
  const seed = createHash("sha256").update("ringvote/v1/card-key").update(bytes).digest();
  const pair = cardKeyPair(bytes);
  assert.equal(bytesToHex(pair.seed), seed.toString("hex"));
  const pkcs8 = hexToBytes("302e020100300506032b657004220420" + seed.toString("hex"));
  const key = await crypto.subtle.importKey("pkcs8", pkcs8.slice(), "Ed25519", true, ["sign"]);
  const jwk = await crypto.subtle.exportKey("jwk", key);
  assert.equal(bytesToBase64url(pair.publicKey), jwk.x);
  assert.equal(checkCardKey(pair.publicKey), null);
});

Deno.test("cardSetHash: SHA-256(label ‖ u32be(n) ‖ keys), the id its first 16 hex characters", () => {
  const keys = Array.from(
    { length: 9 },
    (_, i) => cardKeyPair(new Uint8Array(10).fill(i)).publicKey,
  );
  const n = Buffer4(keys.length);
  const hash = createHash("sha256").update("ringvote/v1/card-set").update(n);
  for (const key of keys) hash.update(key);
  const hex = hash.digest("hex");
  assert.equal(bytesToHex(cardSetHash(keys)), hex);
  assert.equal(cardSetId(hex), hex.slice(0, 16));
  assert.equal(cardSetId(cardSetHash(keys)), hex.slice(0, 16));
  assert.deepEqual(describeCardSet(keys), { set: hex.slice(0, 16), count: 9, sha256: hex });
  // Order matters: the card number is the position.
  assert.notEqual(bytesToHex(cardSetHash([...keys].reverse())), hex);
});

function Buffer4(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n, false);
  return out;
}

/** A card, a set hash and a voter key, and the admission of that key in round 7. */
function admissionFixture() {
  const card = cardKeyPair(hexToBytes("0102030405060708090a"));
  const setHash = new Uint8Array(32).fill(0x5a);
  const voter = ed25519.getPublicKey(new Uint8Array(32).fill(3));
  return { card, setHash, voter, round: 7 };
}

Deno.test("cardAdmitMessage is label ‖ set hash ‖ u64be(round) ‖ voter key", () => {
  const { setHash, voter } = admissionFixture();
  const label = new TextEncoder().encode("ringvote/v1/card-admit");
  const expected = new Uint8Array(label.length + 32 + 8 + 32);
  expected.set(label);
  expected.set(setHash, label.length);
  new DataView(expected.buffer).setBigUint64(label.length + 32, 2n ** 40n + 3n, false);
  expected.set(voter, label.length + 40);
  assert.deepEqual(cardAdmitMessage(setHash, 2 ** 40 + 3, voter), expected);
});

Deno.test("an admission verifies under Web Crypto, and under verifyCardAdmission for its round and key only", async () => {
  const { card, setHash, voter, round } = admissionFixture();
  const wire = cardAdmission(card, setHash, round, voter);
  assert.match(wire.key, /^[A-Za-z0-9_-]{43}$/);
  assert.match(wire.sig, /^[A-Za-z0-9_-]{86}$/);
  const sig = base64urlToBytes(wire.sig, 64);
  const key = await crypto.subtle.importKey("raw", card.publicKey.slice(), "Ed25519", false, [
    "verify",
  ]);
  assert.ok(
    await crypto.subtle.verify(
      "Ed25519",
      key,
      sig.slice(),
      cardAdmitMessage(setHash, round, voter).slice(),
    ),
  );
  assert.ok(verifyCardAdmission(card.publicKey, sig, setHash, round, voter));
  assert.equal(checkCardAdmission(wire, setHash, round, voter), null);
  const other = ed25519.getPublicKey(new Uint8Array(32).fill(4));
  assert.equal(verifyCardAdmission(card.publicKey, sig, setHash, round + 1, voter), false);
  assert.equal(verifyCardAdmission(card.publicKey, sig, setHash, round, other), false);
  assert.equal(verifyCardAdmission(card.publicKey, sig, new Uint8Array(32), round, voter), false);
  const otherCard = cardKeyPair(new Uint8Array(10));
  assert.equal(verifyCardAdmission(otherCard.publicKey, sig, setHash, round, voter), false);
  assert.match(
    checkCardAdmission({ key: wire.key, sig: wire.sig.slice(0, -1) }, setHash, round, voter)!,
    /card signature/,
  );
  assert.match(checkCardAdmission({ key: 5, sig: wire.sig }, setHash, round, voter)!, /card key/);
  assert.equal(
    checkCardAdmission(
      {
        key: wire.key,
        sig: bytesToBase64url(signCardAdmission(otherCard.seed, setHash, round, voter)),
      },
      setHash,
      round,
      voter,
    ),
    "the card signature does not verify",
  );
});

Deno.test("card keys: non-canonical, identity, small-order and torsioned keys are refused", () => {
  const hostile = hostilePoints();
  for (const [name, hex] of Object.entries(hostile)) {
    const bytes = hexToBytes(hex, 32);
    assert.notEqual(checkCardKey(bytes), null, name);
    assert.ok("reason" in readCardKey(bytesToBase64url(bytes)), name);
  }
  for (const hex of ED25519_TORSION_SUBGROUP) {
    assert.notEqual(checkCardKey(hexToBytes(hex, 32)), null, hex);
  }
  const good = cardKeyPair(new Uint8Array(10)).publicKey;
  assert.deepEqual(readCardKey(bytesToBase64url(good)), { key: good });
  for (const text of [bytesToBase64url(good) + "A", bytesToBase64url(good).slice(1), "", 7, null]) {
    assert.ok("reason" in readCardKey(text), String(text));
  }
  // The last character of 32 bytes carries 2 unused bits: a set bit is another text, refused.
  const text = bytesToBase64url(good);
  const last = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const sibling = text.slice(0, -1) + last[last.indexOf(text.at(-1)!) ^ 1];
  assert.ok("reason" in readCardKey(sibling));
});

Deno.test("strict verification refuses s + L, a torsioned R and a small-order card key", () => {
  const { card, setHash, voter, round } = admissionFixture();
  const sig = signCardAdmission(card.seed, setHash, round, voter);
  const s = bytesToNumberLE(sig.subarray(32));
  const bumped = sig.slice();
  bumped.set(numberToBytesLE(s + L, 32), 32);
  assert.equal(verifyCardAdmission(card.publicKey, bumped, setHash, round, voter), false);
  // R plus a point of order 8 with the same s: noble's cofactored check would accept it.
  const torsion = ed25519.Point.fromHex(ED25519_TORSION_SUBGROUP[1]);
  const r = ed25519.Point.fromBytes(sig.subarray(0, 32));
  const twisted = sig.slice();
  twisted.set(r.add(torsion).toBytes(), 0);
  assert.equal(verifyCardAdmission(card.publicKey, twisted, setHash, round, voter), false);
  // The identity as key with R = identity and s = 0 satisfies [s]B = R + [k]A: refused.
  const identity = ed25519.Point.ZERO.toBytes();
  const forged = new Uint8Array(64);
  forged.set(identity, 0);
  assert.equal(verifyCardAdmission(identity, forged, setHash, round, voter), false);
  for (const hex of ED25519_TORSION_SUBGROUP) {
    const key = hexToBytes(hex, 32);
    const r8 = new Uint8Array(64);
    r8.set(key, 0);
    assert.equal(verifyCardAdmission(key, r8, setHash, round, voter), false, hex);
  }
});

Deno.test("card wire shapes: 1,000 keys fit a 64 KiB body; counts, duplicates and forms are checked", () => {
  const keys = Array.from(
    { length: 1000 },
    (_, i) => bytesToBase64url(cardKeyPair(numberToBytesLE(BigInt(i), 10)).publicKey),
  );
  const body = JSON.stringify({ keys });
  assert.ok(new TextEncoder().encode(body).length < 64 * 1024, `${body.length} bytes`);
  assert.ok(CardSetPost.safeParse({ keys }).success);
  assert.equal(CardSetPost.safeParse({ keys: [...keys, keys[0]] }).success, false);
  assert.equal(CardSetPost.safeParse({ keys: keys.slice(0, 7) }).success, false);
  assert.ok(CardSetPost.safeParse({ keys: keys.slice(0, 8) }).success);
  assert.equal(
    CardSetPost.safeParse({ keys: [...keys.slice(0, 8), keys[8] + "A"] }).success,
    false,
  );
  assert.equal(
    CardSetPost.safeParse({ keys: [...keys.slice(0, 8).map((k, i) => i ? k : k + "=")] }).success,
    false,
  );
  const described = describeCardSet(keys.map((k) => base64urlToBytes(k, 32)));
  assert.ok(CardSetCreated.safeParse(described).success);
  const { card, setHash, voter } = admissionFixture();
  const registration = { key: bytesToHex(voter), card: cardAdmission(card, setHash, 2, voter) };
  assert.deepEqual(KeyRegistration.parse(registration), registration);
  assert.equal(
    KeyRegistration.safeParse({ ...registration, card: { key: registration.card.key } }).success,
    false,
  );
});

Deno.test("the known answers of protocol §2.11", () => {
  const bytes = hexToBytes("00112233445566778899");
  assert.equal(formatCardCode(bytes), "008J-4CT4-ANK7-F24S-X");
  const card = cardKeyPair(bytes);
  assert.equal(
    bytesToHex(card.seed),
    "4cbdf2162af99b275bd26b2fdf53a7e2eec90ee7343469d8a82de56ad97d63dd",
  );
  assert.equal(bytesToBase64url(card.publicKey), "rGP2YJXXEoG53vsUuPHfMFQMyQdtJgYX3hFEsLNfGQY");
  const keys = Array.from(
    { length: 8 },
    (_, i) => cardKeyPair(hexToBytes("001122334455667788" + (0x99 + i).toString(16))).publicKey,
  );
  const hash = cardSetHash(keys);
  assert.equal(
    bytesToHex(hash),
    "d86b9c20513716fdfbcf0f8d206c7caac5f7e2146b522296ba8bc377d0ee9751",
  );
  const voter = hexToBytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  assert.equal(
    bytesToBase64url(signCardAdmission(card.seed, hash, 2, voter)),
    "oVqmQg6lRYDegEFQOJazQzYOZQYKgGhsv4ZJz5A2V-dnUMqZXdfoslBmhctZrA5MnusjaeazJ7Iq3anJWnX_BQ",
  );
});
