/**
 * The audit's key data (lib/client/audit/audit_keys.ts): a ring member is checked and given its
 * combs once, then served from memory; a key that fails registration's checks is left to the
 * verifier, which refuses it with its own reason; a precomputation handed over for another key is
 * never used; and over real audit workers, a pool with room for a few keys only still finds what
 * this thread finds. Beyond the budget of precomputations, keys are kept checked without combs, and
 * a vote verified over them is judged the same.
 * @module
 */
import assert from "node:assert/strict";
import {
  CHECKED_KEY_BYTES,
  CHECKED_KEY_COST,
  createAuditMembers,
  createKeyStore,
  precomputeKeys,
} from "../../../lib/client/audit/audit_keys.ts";
import { createVoteCheckPool } from "../../../lib/client/audit/check_pool.ts";
import { inThreadChecker, verifyVote } from "../../../lib/client/audit/vote_checks.ts";
import { bytesToHex } from "../../../lib/protocol/bytes.ts";
import { checkRing } from "../../../lib/protocol/ring_signature.ts";
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

Deno.test("votes over checked keys are judged as over precomputations", () => {
  const voters = makeVoters(4);
  const votes = voters.map((v, i) => signedVote(v, ringFor(v, voters, 3, i), `p${i}`));
  votes.push({ ...votes[1], payload: "other" });
  const checked = new Map(
    voters.map((v) => [v.key, precomputeKeys([v.key], "checked")[0] as Uint8Array]),
  );
  const overChecked = createAuditMembers({ budgetBytes: 0, supplied: (k) => checked.get(k) });
  const judged = votes.map((vote) => verifyVote(vote, overChecked));
  assert.deepEqual(judged, votes.map((vote) => verifyVote(vote, createAuditMembers())));
  assert.deepEqual(judged.map((v) => v.check?.ok), [true, true, true, true, false]);
});

Deno.test("the key store keeps combs, then checked keys, then nothing; none is pushed out", () => {
  const store = createKeyStore(PRECOMPUTATION_BYTES, 2 * CHECKED_KEY_COST);
  const [v1, v2, v3, v4] = makeVoters(4);
  assert.equal(store.roomFor({ combs: 0, checked: 0 }), "combs");
  assert.equal(store.roomFor({ combs: 1, checked: 0 }), "checked");
  store.set(v1.key, precomputeKeys([v1.key])[0]);
  for (const v of [v2, v3, v4]) store.set(v.key, precomputeKeys([v.key], "checked")[0]);
  assert.equal(store.roomFor({ combs: 0, checked: 0 }), null);
  assert.equal((store.get(v1.key) as Uint8Array).length, PRECOMPUTATION_BYTES);
  assert.deepEqual(store.get(v2.key), precomputeKeys([v2.key], "checked")[0]);
  assert.deepEqual(store.get(v3.key), precomputeKeys([v3.key], "checked")[0]);
  assert.equal(store.get(v4.key), undefined);
  assert.equal(store.size, 3);
});

Deno.test("refusals count against the checked keys' budget: made-up keys cannot grow the store", () => {
  const store = createKeyStore(0, 2 * CHECKED_KEY_COST);
  const madeUp = ["01", "02", "03"].map((b) => b.repeat(32));
  for (const key of madeUp) store.set(key, "key is not a canonical curve point");
  assert.equal(store.size, 2);
  assert.ok(store.has(madeUp[0]) && store.has(madeUp[1]) && !store.has(madeUp[2]));
  assert.equal(store.roomFor({ combs: 0, checked: 0 }), null);
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
    keysBudgetBytes: 2 * PRECOMPUTATION_BYTES,
    checkedKeysBudgetBytes: 3 * CHECKED_KEY_COST,
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
