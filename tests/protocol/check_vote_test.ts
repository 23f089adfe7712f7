// The rulebook of a vote (lib/protocol/check_vote.ts), the one the server's intake and the audit
// both call: each rule of protocol §4.3 answers its own typed finding, in the order of §4.3; the
// server's mode stops at the first and asks no later fact; a fact not given is a rule not checked.
import assert from "node:assert/strict";
import { checkVote, type VoteFacts, type VoteFinding } from "../../lib/protocol/check_vote.ts";
import { RING_OPEN, type RingSignature } from "../../lib/protocol/ring_signature.ts";
import { MAX_PAYLOAD_CODE_POINTS, type VoteRecord } from "../../lib/protocol/schemas.ts";
import { decodeSignature } from "../../lib/protocol/signature_wire.ts";
import { makeVoters, ringFor, signedVote } from "../helpers/ledger_fixtures.ts";

const voters = makeVoters(4);
const honest = signedVote(voters[0], ringFor(voters[0], voters, 4), "yes");
const record = (changes: Partial<VoteRecord> = {}): VoteRecord => ({
  payload: honest.payload,
  signature: honest.signature,
  publicKeys: honest.publicKeys,
  ...changes,
});

/** Facts under which `honest` holds: every key registered, no tag used, the signature accepted. */
function facts(changes: Partial<VoteFacts<string>> = {}): VoteFacts<string> {
  return {
    choices: ["yes", "no"],
    tag: honest.tag,
    members: (keys) => keys.map((key) => `record of ${key}`),
    tagUse: () => null,
    verify: () => ({ ok: true }),
    ...changes,
  };
}

Deno.test("an honest vote breaks no rule; the check answers its signature and tag", async () => {
  const check = await checkVote(record(), facts());
  assert.deepEqual(check.findings, []);
  assert.equal(check.tag, honest.tag);
  assert.deepEqual(check.signature, decodeSignature(honest.signature));
});

/** Why the wire decoder refuses `signature`: the reason the finding carries. */
function decodeError(signature: string): string {
  try {
    decodeSignature(signature);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("the signature decodes");
}

Deno.test("each rule of protocol §4.3 answers its own finding", async (t) => {
  const stranger = honest.publicKeys[2];
  const spaced = honest.signature.replace('{"c0"', '{ "c0"');
  const cases: {
    desc: string;
    vote?: Partial<VoteRecord>;
    facts?: Partial<VoteFacts<string>>;
    expect: VoteFinding[];
  }[] = [
    {
      desc: "a payload over the limit",
      vote: { payload: "x".repeat(MAX_PAYLOAD_CODE_POINTS + 1) },
      facts: { choices: [] },
      expect: [{ kind: "payload-too-long", length: 1001, max: MAX_PAYLOAD_CODE_POINTS }],
    },
    {
      desc: "a payload that is none of the round's choices",
      facts: { choices: ["no", "abstain"] },
      expect: [{ kind: "not-a-choice", payload: "yes", choices: ["no", "abstain"] }],
    },
    {
      desc: "a signature that is not its one wire form",
      vote: { signature: spaced },
      expect: [{ kind: "malformed-signature", reason: decodeError(spaced) }],
    },
    {
      desc: "publicKeys that are not the signature's ring",
      vote: { publicKeys: [...honest.publicKeys].reverse() },
      expect: [{ kind: "ring-mismatch" }],
    },
    {
      desc: "a submitted tag other than the signature's",
      facts: { tag: "ab".repeat(32) },
      expect: [{ kind: "tag-mismatch", tag: "ab".repeat(32) }],
    },
    {
      desc: "a ring member not in the directory",
      facts: { members: (keys) => keys.map((key) => (key === stranger ? null : key)) },
      expect: [{ kind: "unregistered-member", key: stranger }],
    },
    {
      desc: "a tag that voted before, in block 3",
      facts: { tagUse: () => ({ height: 3 }) },
      expect: [{ kind: "duplicate-tag", tag: honest.tag, height: 3 }],
    },
    {
      desc: "a signature the verifier refuses",
      facts: { verify: () => ({ ok: false, reason: RING_OPEN }) },
      expect: [{ kind: "invalid-signature", reason: RING_OPEN }],
    },
  ];
  for (const c of cases) {
    await t.step(c.desc, async () => {
      for (const stopAtFirst of [false, true]) {
        const check = await checkVote(record(c.vote), facts({ ...c.facts, stopAtFirst }));
        assert.deepEqual(check.findings, c.expect);
      }
    });
  }
});

Deno.test("every rule broken: all of them in §4.3's order, or the first alone", async () => {
  const other = signedVote(voters[1], ringFor(voters[1], voters, 4), "yes");
  const vote = record({
    payload: "z".repeat(MAX_PAYLOAD_CODE_POINTS + 1),
    publicKeys: [...honest.publicKeys].reverse(),
  });
  const broken = facts({
    tag: other.tag,
    members: (keys) => keys.map(() => null),
    tagUse: () => ({ height: null }),
    verify: () => ({ ok: false, reason: RING_OPEN }),
  });
  const all = await checkVote(vote, broken);
  assert.deepEqual(all.findings.map((f) => f.kind), [
    "payload-too-long",
    "not-a-choice",
    "ring-mismatch",
    "tag-mismatch",
    ...Array(4).fill("unregistered-member"),
    "duplicate-tag",
    "invalid-signature",
  ]);
  const first = await checkVote(vote, { ...broken, stopAtFirst: true });
  assert.deepEqual(first.findings, [all.findings[0]]);
});

Deno.test("the server's mode asks no fact once a cheaper rule is broken", async () => {
  const asked: string[] = [];
  const spying = facts({
    members: (keys) => {
      asked.push("members");
      return keys.map(() => null);
    },
    tagUse: () => {
      asked.push("tagUse");
      return null;
    },
    verify: () => {
      asked.push("verify");
      return { ok: true };
    },
    stopAtFirst: true,
  });
  const { findings } = await checkVote(record(), spying);
  assert.equal(findings[0].kind, "unregistered-member");
  assert.deepEqual(asked, ["members"], "no tag read, no verification");
  asked.length = 0;
  await checkVote(record({ publicKeys: [...honest.publicKeys].reverse() }), spying);
  assert.deepEqual(asked, [], "a ring mismatch is refused before any read");
});

Deno.test("the verifier gets the signature, the payload and each member's record in ring order", async () => {
  let seen: { signature: RingSignature; payload: string; members: unknown } | null = null;
  await checkVote(record(), {
    members: (keys) => keys.map((key) => `record of ${key}`),
    verify: (signature, { payload, members }) => {
      seen = { signature, payload, members };
      return { ok: true };
    },
  });
  assert.deepEqual(seen, {
    signature: decodeSignature(honest.signature),
    payload: "yes",
    members: honest.publicKeys.map((key) => `record of ${key}`),
  });
});

Deno.test("a fact not given is a rule not checked; a malformed signature ends the check", async () => {
  // No verifier: a forged payload is not found here (the audit verifies on its workers first).
  const forged = await checkVote(record({ payload: "no" }), {});
  assert.deepEqual(forged.findings, []);
  const malformed = await checkVote(record({ signature: "not a signature" }), facts());
  assert.deepEqual(malformed.findings.map((f) => f.kind), ["malformed-signature"]);
  assert.equal(malformed.tag, null);
  assert.equal(malformed.signature, null);
});

Deno.test("a fact that fails rejects the check: a saturated verifier is not a finding", async () => {
  const busy = new Error("busy");
  await assert.rejects(
    checkVote(record(), facts({ verify: () => Promise.reject(busy) })),
    (e) => e === busy,
  );
});

Deno.test("a round's group rule: a ring that is not one group is not-a-group, after membership", async () => {
  const asked: (readonly string[])[] = [];
  const group = (isGroup: boolean) => (members: readonly string[]) => {
    asked.push(members);
    return isGroup;
  };
  assert.deepEqual((await checkVote(record(), facts({ group: group(true) }))).findings, []);
  assert.deepEqual(asked, [honest.publicKeys.map((key) => `record of ${key}`)], "ring order");
  const refused = await checkVote(record(), facts({ group: group(false) }));
  assert.deepEqual(refused.findings, [{ kind: "not-a-group" }]);
  // A ring with a stranger is unregistered; the group rule is not asked of it.
  asked.length = 0;
  const stranger = await checkVote(
    record(),
    facts({ members: (keys) => keys.map((k, i) => (i === 0 ? null : k)), group: group(false) }),
  );
  assert.deepEqual(stranger.findings.map((f) => f.kind), ["unregistered-member"]);
  assert.deepEqual(asked, []);
  // In the server's mode it stops there, before the tag and the verifier.
  const first = await checkVote(
    record(),
    facts({ group: group(false), tagUse: () => ({ height: 1 }), stopAtFirst: true }),
  );
  assert.deepEqual(first.findings, [{ kind: "not-a-group" }]);
});
