// The witness policy a page reads from its address's fragment (page §10.13): vkeys decoded as they
// are, `+` and all, a quorum that defaults to every witness, refusals with reasons, and a policy
// kept until another fragment replaces it, saying so.
import assert from "node:assert/strict";
import {
  adoptPolicy,
  policyFragment,
  policyFromFragment,
} from "../../lib/client/log/witness_policy.ts";
import {
  COSIGNATURE_V1_TYPE,
  ED25519_TYPE,
  formatVerifierKey,
  signerKey,
} from "../../lib/protocol/note.ts";

const vkeyOf = (i: number, type: 1 | 4 = COSIGNATURE_V1_TYPE) =>
  formatVerifierKey(signerKey({ name: `w${i}.example/x`, seed: new Uint8Array(32).fill(i) }, type));

/** A vkey whose base64 holds a `+`, the character URLSearchParams would turn into a space. */
function vkeyWithPlus(): string {
  for (let i = 1; i < 255; i++) {
    // name+hex8+base64: a third + is the base64's own.
    if (vkeyOf(i).split("+").length > 3) return vkeyOf(i);
  }
  throw new Error("no vkey with a + in its base64 among the seeds tried");
}

Deno.test("a fragment names witnesses, percent-encoded, `+` included, with the quorum", () => {
  const plus = vkeyWithPlus();
  const fragment = policyFragment([plus, vkeyOf(2)], 1);
  assert.ok(!fragment.includes("+"), "the fragment encodes the + of the vkey");
  const read = policyFromFragment(fragment + "&admin=abc");
  assert.equal(read.kind, "policy");
  if (read.kind !== "policy") return;
  assert.deepEqual(read.policy.witnesses.map(formatVerifierKey), [plus, vkeyOf(2)]);
  assert.equal(read.policy.quorum, 1);
  // A raw + (as typed by hand) is the vkey's own character, never a space.
  const raw = policyFromFragment(`#witness=${plus}`);
  assert.equal(raw.kind === "policy" && formatVerifierKey(raw.policy.witnesses[0]), plus);
  const all = policyFromFragment(policyFragment([vkeyOf(1), vkeyOf(2), vkeyOf(1)]));
  assert.equal(all.kind === "policy" && all.policy.quorum, 2, "every witness, a repeat once");
});

Deno.test("a fragment that is not a policy says why", () => {
  const cases: [string, RegExp][] = [
    ["#quorum=1", /quorum was given without any witness/],
    [
      `#witness=${encodeURIComponent(vkeyOf(1))}&quorum=2`,
      /quorum must be a whole number from 1 to 1/,
    ],
    [`#witness=${encodeURIComponent(vkeyOf(1))}&quorum=0`, /quorum must be/],
    [
      `#witness=${encodeURIComponent(vkeyOf(1, ED25519_TYPE))}`,
      /not a cosignature\/v1 witness key/,
    ],
    ["#witness=nonsense", /is not a witness key/],
    ["#witness=%E0%A4%A", /not percent-encoded/],
  ];
  for (const [fragment, reason] of cases) {
    const read = policyFromFragment(fragment);
    assert.equal(read.kind, "invalid", fragment);
    assert.match((read as { reason: string }).reason, reason);
  }
  assert.deepEqual(policyFromFragment("#admin=token"), { kind: "none" });
});

Deno.test("a page keeps its policy until another fragment replaces it, and says so", () => {
  const first = adoptPolicy(policyFragment([vkeyOf(1)]), null);
  assert.match(first.notice!, /now requires 1 of 1 witness \(w1\.example\/x\)/);
  assert.ok(first.store);
  const again = adoptPolicy(policyFragment([vkeyOf(1)]), first.store);
  assert.deepEqual([again.notice, again.store], [null, null], "the same policy: nothing to say");
  const none = adoptPolicy("", first.store);
  assert.equal(none.policy?.witnesses.length, 1, "an address without a fragment keeps the policy");
  const changed = adoptPolicy(policyFragment([vkeyOf(2)]), first.store);
  assert.match(changed.notice!, /witness list changed/);
  const invalid = adoptPolicy("#witness=nonsense", first.store);
  assert.match(invalid.notice!, /was not used/);
  assert.equal(invalid.policy?.witnesses[0].name, "w1.example/x");
});
