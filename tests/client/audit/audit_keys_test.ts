/**
 * The audit's key data (lib/client/audit/audit_keys.ts): a ring member is checked and given its
 * combs once, then served from memory; a key that fails registration's checks is left to the
 * verifier, which refuses it with its own reason; a precomputation handed over for another key is
 * never used; and over real audit workers, a pool with room for a few keys only still finds what
 * this thread finds.
 * @module
 */
import assert from "node:assert/strict";
import { createAuditMembers, precomputeKeys } from "../../../lib/client/audit/audit_keys.ts";
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

Deno.test("a pool with room for two keys finds what this thread finds, the others checked by its workers", async () => {
  const voters = makeVoters(8);
  const votes = voters.map((v, i) => {
    const { payload, signature, publicKeys } = signedVote(v, ringFor(v, voters, 3, i), "yes");
    return { payload, signature, publicKeys };
  });
  votes.push({ ...votes[0], payload: "no" });
  const url = new URL("../../../lib/client/audit/check_worker.ts", import.meta.url);
  const pool = createVoteCheckPool(2, () => new Worker(url, { type: "module" }), {
    keysBudgetBytes: 2 * PRECOMPUTATION_BYTES,
  });
  try {
    const expected = await inThreadChecker()(votes);
    assert.deepEqual(expected.map((v) => v.check?.ok), [...Array(8).fill(true), false]);
    for (const slice of [votes.slice(0, 4), votes.slice(4)]) {
      const at = votes.indexOf(slice[0]);
      assert.deepEqual(await pool.check(slice), expected.slice(at, at + slice.length));
    }
    assert.deepEqual(await pool.check(votes), expected);
    // A full store takes no more keys: the workers check and precompute the others as they meet them.
    assert.equal(pool.keysPrecomputed, 2);
  } finally {
    pool.close();
  }
});
