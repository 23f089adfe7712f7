/**
 * The audit's key data (lib/client/audit/audit_keys.ts): a ring member is checked and given its
 * combs once, then served from memory; a key that fails registration's checks is left to the
 * verifier, which refuses it with its own reason; a precomputation handed over for another key is
 * never used; and over real audit workers, a pool with room for a few keys only still finds what
 * this thread finds. A directory too large for precomputations gets narrow combs, then checked keys
 * without combs, and a vote verified over them is judged the same; a narrow comb handed over for
 * another key is never used; hostile keys are refused in every form with registration's reason.
 * A well-formed signature whose verification throws is refused, never taken as verified.
 * @module
 */
import assert from "node:assert/strict";
import {
  CHECKED_KEY_BYTES,
  CHECKED_KEY_COST,
  createAuditMembers,
  createKeyStore,
  KEY_FORMS,
  NARROW_KEY_BYTES,
  NARROW_KEY_COST,
  precomputeKeys,
} from "../../../lib/client/audit/audit_keys.ts";
import { createVoteCheckPool } from "../../../lib/client/audit/check_pool.ts";
import {
  inThreadChecker,
  problemsOnItsOwn,
  UNVERIFIABLE,
  verifyVote,
} from "../../../lib/client/audit/vote_checks.ts";
import { bytesToHex } from "../../../lib/protocol/bytes.ts";
import { checkInputs, checkRing, RING_OPEN } from "../../../lib/protocol/ring_signature.ts";
import { NARROW_TEETH, TEETH, teethOf } from "../../../lib/protocol/comb_table.ts";
import { PRECOMPUTATION_BYTES } from "../../../lib/protocol/key_precomputation.ts";
import { decodeSignature } from "../../../lib/protocol/signature_wire.ts";
import { hostilePoints, makeVoters, ringFor, signedVote } from "../../helpers/ledger_fixtures.ts";

const [a, b] = makeVoters(2);

Deno.test("a member is checked and given its combs once, then served from memory", () => {
  const members = createAuditMembers();
  const first = members.get(a.key);
  assert.ok(first?.combs, "with the combs of P and Hp(P)");
  assert.equal(members.get(a.key), first);
  assert.equal(members.size, 1);
  assert.equal(bytesToHex(first.point.toBytes()), a.key);
});

Deno.test("a key that fails registration's checks is refused by the verifier, with its reason", () => {
  const torsioned = hostilePoints().torsioned;
  const [refusal] = precomputeKeys([torsioned]);
  assert.equal(typeof refusal, "string");
  const members = createAuditMembers();
  assert.equal(members.get(torsioned), undefined);
  // A ring holding it: its own checks refuse it, as without any key data.
  const vote = signedVote(a, [a, { seed: new Uint8Array(32), key: torsioned }], "yes");
  const alone = checkRing(decodeSignature(vote.signature), "yes");
  assert.equal(alone.ok, false);
  assert.deepEqual(verifyVote(vote, members).check, alone);
});

Deno.test("a signature whose verification throws is refused as invalid, never passed", async () => {
  const vote = signedVote(a, [a, b], "yes");
  assert.deepEqual(verifyVote(vote, createAuditMembers()).check, { ok: true });
  // Key data that breaks the verifier halfway (a store gone wrong, a bug): the vote fails closed.
  const broken = {
    get(): never {
      throw new RangeError("two combs walked together must have the same rows");
    },
  };
  const verification = verifyVote(vote, broken);
  assert.equal(verification.leaf, verifyVote(vote, createAuditMembers()).leaf);
  assert.deepEqual(verification.check, {
    ok: false,
    reason: `${UNVERIFIABLE}: two combs walked together must have the same rows`,
  });
  assert.deepEqual((await problemsOnItsOwn(vote, verification)).map((p) => p.kind), [
    "invalid-signature",
  ]);
  // A malformed signature is still the rulebook's to name.
  const malformed = { ...vote, signature: vote.signature.replace(/"c0":"\w+"/, '"c0":"zz"') };
  assert.equal(verifyVote(malformed, broken).check, null);
  assert.deepEqual(
    (await problemsOnItsOwn(malformed, verifyVote(malformed, broken))).map((p) => p.kind),
    [
      "malformed-signature",
    ],
  );
});

Deno.test("a precomputation handed over for another key is never used for this one", () => {
  const [ofB] = precomputeKeys([b.key]) as Uint8Array[];
  assert.equal(ofB.length, PRECOMPUTATION_BYTES);
  const members = createAuditMembers({ supplied: () => ofB });
  assert.equal(bytesToHex(members.get(a.key)!.point.toBytes()), a.key);
  assert.equal(bytesToHex(members.get(b.key)!.point.toBytes()), b.key);
});

Deno.test("a checked key gives the member without combs; one of another key is never used", () => {
  const [checkedA, checkedB] = precomputeKeys([a.key, b.key], "checked") as Uint8Array[];
  assert.equal(checkedA.length, CHECKED_KEY_BYTES);
  const members = createAuditMembers({ budgetBytes: 0, supplied: () => checkedA });
  const member = members.get(a.key)!;
  assert.equal(member.combs, undefined);
  const full = createAuditMembers().get(a.key)!;
  assert.ok(member.point.equals(full.point) && member.hp.equals(full.hp));
  // Handed over for b, a's checked key is refused and b is checked here.
  assert.equal(bytesToHex(members.get(b.key)!.point.toBytes()), b.key);
  assert.notDeepEqual(checkedA, checkedB);
  // A key that fails the checks gives the reason registration gives, in either form.
  const torsioned = hostilePoints().torsioned;
  assert.deepEqual(precomputeKeys([torsioned], "checked"), precomputeKeys([torsioned]));
  assert.equal(typeof precomputeKeys([torsioned])[0], "string");
});

Deno.test("a key with narrow combs gives the member with narrow combs; one of another key is never used", () => {
  const [narrowA, narrowB] = precomputeKeys([a.key, b.key], "narrow") as Uint8Array[];
  assert.equal(narrowA.length, NARROW_KEY_BYTES);
  const members = createAuditMembers({ budgetBytes: 0, supplied: () => narrowA });
  const member = members.get(a.key)!;
  assert.equal(member.combs?.point.entries.length, 7);
  assert.equal(member.combs?.hp.entries.length, 7);
  const full = createAuditMembers().get(a.key)!;
  assert.ok(member.point.equals(full.point) && member.hp.equals(full.hp));
  assert.equal(bytesToHex(members.get(b.key)!.point.toBytes()), b.key);
  assert.notDeepEqual(narrowA, narrowB);
});

Deno.test("every hostile key is refused in every form with registration's reason", () => {
  for (const [name, key] of Object.entries(hostilePoints())) {
    const reasons = KEY_FORMS.map((form) => precomputeKeys([key], form)[0]);
    assert.equal(typeof reasons[0], "string", name);
    assert.deepEqual(reasons, KEY_FORMS.map(() => reasons[0]), name);
  }
});

Deno.test("votes over narrow combs and over checked keys are judged as over precomputations", () => {
  const voters = makeVoters(4);
  const votes = voters.map((v, i) => signedVote(v, ringFor(v, voters, 3, i), `p${i}`));
  votes.push({ ...votes[1], payload: "other" });
  // A tampered response and a tag of another voter: refused the same way over every form.
  const sig = JSON.parse(votes[2].signature);
  votes.push({
    ...votes[2],
    signature: JSON.stringify({ ...sig, I: JSON.parse(votes[3].signature).I }),
  });
  votes.push({
    ...votes[2],
    signature: JSON.stringify({ ...sig, r: [...sig.r].reverse() }),
  });
  // Each hostile tag: refused by its own check, whatever rows the members' combs have.
  for (const hostile of Object.values(hostilePoints())) {
    const signature = JSON.stringify({ ...JSON.parse(votes[0].signature), I: hostile });
    votes.push({ ...votes[0], signature });
  }
  const expected = votes.map((vote) => verifyVote(vote, createAuditMembers()));
  assert.deepEqual(expected.map((v) => v.check?.ok), [
    true,
    true,
    true,
    true,
    ...Array(7).fill(false),
  ]);
  assert.equal(expected[6].check?.ok === false && expected[6].check.reason, RING_OPEN);
  assert.ok(expected.slice(7).every((v) => v.check?.ok === false && v.check.reason !== RING_OPEN));
  for (const form of ["narrow", "checked"] as const) {
    const data = new Map(
      voters.map((v) => [v.key, precomputeKeys([v.key], form)[0] as Uint8Array]),
    );
    const over = createAuditMembers({ budgetBytes: 0, supplied: (k) => data.get(k) });
    assert.deepEqual(votes.map((vote) => verifyVote(vote, over)), expected, form);
  }
});

Deno.test("rings mixing wide, narrow and no combs verify whichever form comes first, one tag comb each", () => {
  const sorted = makeVoters(6).sort((a, b) => (a.key < b.key ? -1 : 1));
  const forms = ["narrow", "combs", "checked"] as const;
  const data = new Map(
    sorted.map((v, i) => [v.key, precomputeKeys([v.key], forms[i % 3])[0] as Uint8Array]),
  );
  const over = createAuditMembers({ budgetBytes: 0, supplied: (k) => data.get(k) });
  for (let first = 0; first < 3; first++) {
    const ring = sorted.slice(first, first + 3);
    const vote = signedVote(ring[1], ring, "yes");
    assert.deepEqual(verifyVote(vote, over), verifyVote(vote, createAuditMembers()));
    assert.deepEqual(verifyVote(vote, over).check, { ok: true }, forms[first]);
    // The tag's comb has the rows of the first member with combs: one comb per signature.
    const inputs = checkInputs(decodeSignature(vote.signature), "yes", { members: over });
    assert.ok(inputs.ok);
    assert.equal(teethOf(inputs.tag), [NARROW_TEETH, TEETH, NARROW_TEETH][first], forms[first]);
    const tampered = { ...vote, payload: "no" };
    assert.deepEqual(verifyVote(tampered, over).check, { ok: false, reason: RING_OPEN });
  }
});

const none = { combs: 0, narrow: 0, checked: 0 };

Deno.test("the key store keeps combs, then checked keys, then nothing; none is pushed out", () => {
  const store = createKeyStore({
    combs: PRECOMPUTATION_BYTES,
    narrow: 0,
    checked: 2 * CHECKED_KEY_COST,
  });
  const [v1, v2, v3, v4] = makeVoters(4);
  assert.equal(store.roomFor(none), "combs");
  assert.equal(store.roomFor({ ...none, combs: 1 }), "checked");
  store.set(v1.key, precomputeKeys([v1.key])[0]);
  for (const v of [v2, v3, v4]) store.set(v.key, precomputeKeys([v.key], "checked")[0]);
  assert.equal(store.roomFor(none), null);
  assert.equal((store.get(v1.key) as Uint8Array).length, PRECOMPUTATION_BYTES);
  assert.deepEqual(store.get(v2.key), precomputeKeys([v2.key], "checked")[0]);
  assert.deepEqual(store.get(v3.key), precomputeKeys([v3.key], "checked")[0]);
  assert.equal(store.get(v4.key), undefined);
  assert.equal(store.size, 3);
});

Deno.test("a directory larger than the combs' budget gets narrow combs, then checked keys", () => {
  const budgets = {
    combs: 2 * PRECOMPUTATION_BYTES,
    narrow: 2 * NARROW_KEY_COST,
    checked: CHECKED_KEY_COST,
  };
  // Two keys fit the wide combs' budget: a directory of two gets wide combs.
  assert.equal(createKeyStore({ ...budgets, directorySize: 2 }).roomFor(none), "combs");
  const store = createKeyStore({ ...budgets, directorySize: 3 });
  assert.equal(store.roomFor(none), "narrow");
  assert.equal(store.roomFor({ ...none, narrow: 2 }), "checked");
  const [v1, v2, v3, v4] = makeVoters(4);
  // Wide combs handed to it anyway are not kept.
  store.set(v1.key, precomputeKeys([v1.key])[0]);
  assert.equal(store.has(v1.key), false);
  for (const v of [v1, v2]) store.set(v.key, precomputeKeys([v.key], "narrow")[0]);
  for (const v of [v3, v4]) store.set(v.key, precomputeKeys([v.key], "checked")[0]);
  assert.deepEqual(store.get(v2.key), precomputeKeys([v2.key], "narrow")[0]);
  assert.deepEqual(store.get(v3.key), precomputeKeys([v3.key], "checked")[0]);
  assert.equal(store.get(v4.key), undefined);
  assert.equal(store.size, 3);
  assert.equal(store.roomFor(none), null);
});

Deno.test("refusals count against the checked keys' budget: made-up keys cannot grow the store", () => {
  const store = createKeyStore({ combs: 0, narrow: 0, checked: 2 * CHECKED_KEY_COST });
  const madeUp = ["01", "02", "03"].map((b) => b.repeat(32));
  for (const key of madeUp) store.set(key, "key is not a canonical curve point");
  assert.equal(store.size, 2);
  assert.ok(store.has(madeUp[0]) && store.has(madeUp[1]) && !store.has(madeUp[2]));
  assert.equal(store.roomFor(none), null);
});

Deno.test("a pool with room for two precomputations and three checked keys finds what this thread finds", async () => {
  const voters = makeVoters(8);
  const votes = voters.map((v, i) => {
    const { payload, signature, publicKeys } = signedVote(v, ringFor(v, voters, 3, i), "yes");
    return { payload, signature, publicKeys };
  });
  votes.push({ ...votes[0], payload: "no" });
  const url = new URL("../../../lib/client/audit/check_worker.ts", import.meta.url);
  const pool = createVoteCheckPool(2, () => new Worker(url, { type: "module" }), {
    budgets: { combs: 2 * PRECOMPUTATION_BYTES, narrow: 0, checked: 3 * CHECKED_KEY_COST },
  });
  try {
    const expected = await inThreadChecker()(votes);
    assert.deepEqual(expected.map((v) => v.check?.ok), [...Array(8).fill(true), false]);
    for (const slice of [votes.slice(0, 4), votes.slice(4)]) {
      const at = votes.indexOf(slice[0]);
      assert.deepEqual(await pool.check(slice), expected.slice(at, at + slice.length));
    }
    assert.deepEqual(await pool.check(votes), expected);
    // A full store takes no more keys: the workers check the others as they meet them.
    assert.equal(pool.keysPrecomputed, 5);
  } finally {
    pool.close();
  }
});

Deno.test("a pool told of a directory too large for combs checks over narrow combs, finding the same", async () => {
  const voters = makeVoters(8);
  const votes = voters.map((v, i) => signedVote(v, ringFor(v, voters, 3, i), i % 2 ? "yes" : "no"));
  votes.push({ ...votes[3], payload: "no" });
  const url = new URL("../../../lib/client/audit/check_worker.ts", import.meta.url);
  const budgets = {
    combs: 2 * PRECOMPUTATION_BYTES,
    narrow: 3 * NARROW_KEY_COST,
    checked: 2 * CHECKED_KEY_COST,
  };
  const expected = await inThreadChecker()(votes);
  const directory = new Set(voters.map((v) => v.key));
  const cases = [
    // Told nothing: two with combs, then three narrow, then two checked.
    [undefined, { combs: 2, narrow: 3, checked: 2 }],
    // A directory of 8, larger than the combs' budget: narrow combs, then checked keys.
    [directory, { combs: 0, narrow: 3, checked: 2 }],
    // A directory of 2 that fits it: combs, then checked keys, for its own keys alone.
    [new Set([...directory].slice(0, 2)), { combs: 2, narrow: 0, checked: 0 }],
  ] as const;
  for (const [told, kept] of cases) {
    const pool = createVoteCheckPool(2, () => new Worker(url, { type: "module" }), { budgets });
    try {
      assert.deepEqual(await pool.check(votes, { directory: told }), expected);
      assert.deepEqual(pool.keysKept, kept);
      if (told === undefined) continue;
      // Votes checked without the directory afterwards (the board's listed votes), over keys
      // outside it, are judged the same and take none of the room kept for its keys.
      pool.releaseKeys();
      const strangers = makeVoters(4);
      const listed = strangers.map((v) => signedVote(v, strangers, "yes"));
      assert.deepEqual(await pool.check(listed), await inThreadChecker()(listed));
      assert.deepEqual(pool.keysKept, { combs: 0, narrow: 0, checked: 0 });
      assert.deepEqual(await pool.check(votes, { directory: told }), expected);
      assert.deepEqual(pool.keysKept, kept);
    } finally {
      pool.close();
    }
  }
});
