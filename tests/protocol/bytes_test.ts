// The byte encodings of protocol §2–§3 and the input checks every crypto module shares: wrong type
// is a TypeError, wrong range or length a RangeError, each naming the input.
import assert from "node:assert/strict";
import {
  assertNonNegativeInteger,
  bytesToHex,
  hexToBytes,
  u32be,
  u64be,
  utf8WellFormed,
} from "../../lib/protocol/bytes.ts";

Deno.test("u32be and u64be write big-endian at both ends of their range", () => {
  assert.equal(bytesToHex(u32be(0)), "00000000");
  assert.equal(bytesToHex(u32be(0x01020304)), "01020304");
  assert.equal(bytesToHex(u32be(2 ** 32 - 1)), "ffffffff");
  assert.equal(bytesToHex(u64be(0)), "0000000000000000");
  assert.equal(bytesToHex(u64be(1_700_000_000_000)), "0000018bcfe56800");
  assert.equal(bytesToHex(u64be(Number.MAX_SAFE_INTEGER)), "001fffffffffffff");
  assert.equal(bytesToHex(u64be(2n ** 64n - 1n)), "ffffffffffffffff");
});

Deno.test("u32be and u64be refuse what they cannot encode", () => {
  const outOfRange: [string, () => unknown][] = [
    ["u32 2^32", () => u32be(2 ** 32)],
    ["u32 -1", () => u32be(-1)],
    ["u32 1.5", () => u32be(1.5)],
    ["u32 NaN", () => u32be(NaN)],
    ["u32 as bigint past 2^32", () => u32be(2n ** 32n as unknown as number)],
    ["u64 2^64", () => u64be(2n ** 64n)],
    ["u64 -1n", () => u64be(-1n)],
    ["u64 2^53, not a safe integer", () => u64be(2 ** 53)],
  ];
  for (const [desc, encode] of outOfRange) assert.throws(encode, RangeError, desc);
  assert.throws(() => u64be("5" as unknown as number), TypeError);
  assert.throws(() => u32be(null as unknown as number), TypeError);
});

Deno.test("assertNonNegativeInteger: TypeError for a non-number, RangeError naming it otherwise", () => {
  assert.equal(assertNonNegativeInteger(0, "height"), 0);
  assert.equal(
    assertNonNegativeInteger(Number.MAX_SAFE_INTEGER, "height"),
    Number.MAX_SAFE_INTEGER,
  );
  assert.throws(
    () => assertNonNegativeInteger("1", "height"),
    /TypeError: height must be a number/,
  );
  for (const bad of [-1, 1.5, NaN, Infinity, 2 ** 53]) {
    assert.throws(() => assertNonNegativeInteger(bad, "size"), /RangeError: size must be a/);
  }
});

Deno.test("hexToBytes checks hex and length by name", () => {
  assert.deepEqual(hexToBytes("00ff", 2, "tag"), Uint8Array.of(0, 255));
  assert.throws(() => hexToBytes("00ff", 32, "tag"), /RangeError: tag must be 32 bytes, got 2/);
  assert.throws(() => hexToBytes("00FF", 2, "tag"), /RangeError: tag must be lowercase hex/);
  assert.throws(() => hexToBytes(7, 2, "tag"), /TypeError: tag must be a string/);
});

Deno.test("utf8WellFormed encodes well-formed text and refuses a lone surrogate by name", () => {
  assert.equal(bytesToHex(utf8WellFormed("é🗳", "payload")), "c3a9f09f97b3");
  for (const bad of ["\uD800", "a\uDC00", "\uDBFF\uDBFF"]) {
    assert.throws(
      () => utf8WellFormed(bad, "payload"),
      /RangeError: payload is not well-formed Unicode/,
      JSON.stringify(bad),
    );
  }
  assert.throws(() => utf8WellFormed(1 as unknown as string, "payload"), TypeError);
});
