// The wire schemas (lib/protocol/schemas.ts, protocol §4): the payload counted in code points and
// required to be well-formed Unicode, the key and name limits of a registration, and 400 reasons
// that name the field.
import assert from "node:assert/strict";
import {
  codePointLength,
  describeIssues,
  KeyRegistration,
  MAX_PAYLOAD_CODE_POINTS,
  Payload,
  VoteSubmission,
} from "../../lib/protocol/schemas.ts";

const KEY = "ab".repeat(32);

Deno.test("codePointLength counts an astral character once, not as its two UTF-16 units", () => {
  assert.equal(codePointLength(""), 0);
  assert.equal(codePointLength("abc"), 3);
  assert.equal("😀".length, 2);
  assert.equal(codePointLength("😀"), 1);
  assert.equal(codePointLength("vote 🗳️ é"), 9); // the ballot box, its variation selector, é
  const atLimit = "😀".repeat(MAX_PAYLOAD_CODE_POINTS);
  assert.equal(codePointLength(atLimit), MAX_PAYLOAD_CODE_POINTS);
  // A lone surrogate is one code point: the length rule and the well-formedness rule are apart.
  assert.equal(codePointLength("\uD800"), 1);
});

Deno.test("a payload must be well-formed Unicode: lone surrogates refused, astral text kept", () => {
  for (const good of ["", "yes", "ça va", "😀", "\uD83D\uDE00", "\uFFFD"]) {
    assert.equal(Payload.safeParse(good).success, true, JSON.stringify(good));
  }
  for (const bad of ["\uD800", "\uDC00", "a\uD83D", "\uDE00b", "\uDE00\uD83D"]) {
    const result = Payload.safeParse(bad);
    assert.equal(result.success, false, JSON.stringify(bad));
    assert.match(describeIssues(result.error!), /well-formed Unicode/);
  }
});

Deno.test("a registration's key is 64 lowercase hex characters", () => {
  assert.equal(KeyRegistration.safeParse({ key: KEY }).success, true);
  for (const key of [KEY.toUpperCase(), KEY.slice(2), KEY + "ab", "zz".repeat(32), 42]) {
    const result = KeyRegistration.safeParse({ key });
    assert.equal(result.success, false, String(key));
    assert.match(describeIssues(result.error!), /^key: /);
  }
});

Deno.test("a registration's name is optional and at most 200 characters", () => {
  assert.equal(KeyRegistration.safeParse({ key: KEY, name: "a".repeat(200) }).success, true);
  const long = KeyRegistration.safeParse({ key: KEY, name: "a".repeat(201) });
  assert.equal(long.success, false);
  assert.equal(describeIssues(long.error!), "name: must be at most 200 characters");
});

Deno.test("describeIssues: one `path: message` per issue, `body` for the whole body", () => {
  const body = VoteSubmission.safeParse("not an object");
  assert.equal(describeIssues(body.error!), "body: expected object");
  const fields = VoteSubmission.safeParse({
    publicKeys: [KEY, "nope"],
    signature: "",
    tag: KEY,
    payload: "\uD800",
  });
  assert.equal(
    describeIssues(fields.error!),
    [
      "publicKeys.1: must be 64 lowercase hex characters",
      "signature: must not be empty",
      "payload: must be well-formed Unicode (no lone surrogates)",
    ].join("; "),
  );
  const missing = VoteSubmission.safeParse({});
  assert.match(describeIssues(missing.error!), /^publicKeys: expected array; /);
});

Deno.test("a description names the first issues and counts the others", () => {
  const many = VoteSubmission.safeParse({
    payload: "x",
    signature: "x",
    publicKeys: Array(1000).fill(0),
  });
  assert.equal(many.success, false);
  const { issues } = many.error!;
  assert.ok(issues.length > 1000);
  assert.equal(
    describeIssues(many.error!),
    "publicKeys.0: expected string; publicKeys.1: expected string; publicKeys.2: expected " +
      `string; publicKeys.3: expected string; publicKeys.4: expected string; and ${
        issues.length - 5
      } more`,
  );
});
