/**
 * The statuses of page §4 (lib/client/voter/status.ts): key and vote lines, the decisions with the
 * checks of page §5 as typed mismatches and their console lines, and the tag check.
 * @module
 */
import assert from "node:assert/strict";
import { bytesToHex, hexToBytes } from "../../../lib/protocol/bytes.ts";
import { blockHash } from "../../../lib/protocol/chain.ts";
import { storedKeysFromSeed } from "../../../lib/protocol/keys.ts";
import { allInclusionProofs, merkleRoot, voteLeaf } from "../../../lib/protocol/merkle.ts";
import { signRing } from "../../../lib/protocol/ring_signature.ts";
import { encodeSignature } from "../../../lib/protocol/signature_wire.ts";
import type { BlockRecord, VoteProof, VoteRecord } from "../../../lib/protocol/schemas.ts";
import {
  decideKeyStatus,
  decideVoteStatus,
  KEY_UNLOADED,
  keyStatusLine,
  keyStatusNeedsServer,
  mismatchText,
  type StoredVote,
  tagCheckLine,
  type VoteMismatch,
  type VoteProblem,
  voteRefusal,
  voteStage,
  voteStatusLine,
  waitingForVotersText,
} from "../../../lib/client/voter/status.ts";

function seed(n: number): Uint8Array {
  return new Uint8Array(32).fill(n);
}

const keys = storedKeysFromSeed(seed(1));
const other = storedKeysFromSeed(seed(2));

Deno.test("key status lines carry the texts and colours of page §4", () => {
  assert.deepEqual(KEY_UNLOADED, { status: null, text: "Key Unloaded", colour: null });
  assert.deepEqual(keyStatusLine("ungenerated"), {
    status: "ungenerated",
    text: "Key Ungenerated",
    colour: "red",
  });
  assert.deepEqual(keyStatusLine("unregistered"), {
    status: "unregistered",
    text: "Key Unregistered",
    colour: "orange",
  });
  assert.deepEqual(keyStatusLine("registered", "7"), {
    status: "registered",
    text: "Key Registered with ID: 7",
    colour: "green",
  });
  assert.deepEqual(keyStatusLine("invalid", 3), {
    status: "invalid",
    text: "Key Invalid with ID: 3, maybe you need to contact the admin",
    colour: "red",
  });
  assert.deepEqual(keyStatusLine("broken"), {
    status: "broken",
    text: "Key Broken, please regenerate",
    colour: "red",
  });
});

Deno.test("decideKeyStatus follows the decision on load of page §4", async (t) => {
  const none = { publicKey: null, privateKey: null, keyId: null };
  await t.step("no stored keys: ungenerated", () => {
    assert.equal(decideKeyStatus(none, null).status, "ungenerated");
    assert.equal(decideKeyStatus({ ...none, keyId: "4" }, null).status, "ungenerated");
  });
  await t.step("a public key unlike the one derived from the private key: broken", () => {
    const cases = [
      { desc: "other public key", publicKey: other.publicKey, privateKey: keys.privateKey },
      {
        desc: "corrupted public key",
        publicKey: "00" + keys.publicKey.slice(2),
        privateKey: keys.privateKey,
      },
      { desc: "private key not base64", publicKey: keys.publicKey, privateKey: "%%%" },
      {
        desc: "private key of 31 bytes",
        publicKey: keys.publicKey,
        privateKey: btoa("x".repeat(31)),
      },
      { desc: "public key missing", publicKey: null, privateKey: keys.privateKey },
      { desc: "private key missing", publicKey: keys.publicKey, privateKey: null },
    ];
    for (const c of cases) {
      const stored = { publicKey: c.publicKey, privateKey: c.privateKey, keyId: "1" };
      assert.equal(decideKeyStatus(stored, keys.publicKey).status, "broken", c.desc);
      assert.equal(keyStatusNeedsServer(stored), false, c.desc);
    }
  });
  await t.step("a matching pair without key id: unregistered, no server call needed", () => {
    const stored = { ...keys, keyId: null };
    assert.equal(keyStatusNeedsServer(stored), false);
    assert.deepEqual(decideKeyStatus(stored, null), keyStatusLine("unregistered"));
  });
  await t.step("the server's key for the id decides registered or invalid", () => {
    const stored = { ...keys, keyId: "5" };
    assert.equal(keyStatusNeedsServer(stored), true);
    assert.deepEqual(decideKeyStatus(stored, keys.publicKey), keyStatusLine("registered", "5"));
    assert.deepEqual(decideKeyStatus(stored, other.publicKey), keyStatusLine("invalid", "5"));
    assert.deepEqual(decideKeyStatus(stored, null), keyStatusLine("invalid", "5"));
  });
});

Deno.test("vote status lines carry the texts and colours of page §4", () => {
  const ids = { blockId: "3", voteId: "abc" };
  assert.deepEqual(voteStatusLine("unvoted"), {
    status: "unvoted",
    text: "Vote Unvoted",
    colour: "orange",
  });
  assert.deepEqual(voteStatusLine("voted", ids), {
    status: "voted",
    text: "Vote Voted with Block ID: 3 and Vote ID: abc",
    colour: "green",
  });
  assert.deepEqual(voteStatusLine("invalid", ids), {
    status: "invalid",
    text:
      "Vote Voted with Block ID: 3 and Vote ID: abc, but Invalid - maybe you need to contact the admin",
    colour: "red",
  });
  assert.deepEqual(voteStatusLine("pending", ids), {
    status: "pending",
    text:
      "Vote Voted with Block ID: 3 and Vote ID: abc, please wait for a minute and refresh the page",
    colour: "blue",
  });
});

/**
 * A real sealed block of `count` signed votes at height 2 after block 1 with hash `prevHash`;
 * `listed` orders each vote's `publicKeys` as the server lists them (as signed by default).
 */
function sealedBlock(count: number, { listed = (ring: string[]) => ring } = {}) {
  const ring = [1, 2, 3, 4].map((n) => storedKeysFromSeed(seed(n)).publicKey);
  const votes: VoteRecord[] = [];
  for (let i = 0; i < count; i++) {
    const sig = signRing({
      ring: ring.map((k) => hexToBytes(k)),
      seed: seed(1 + (i % 4)),
      message: `choice ${i}`,
    });
    const publicKeys = listed(ring);
    votes.push({ payload: `choice ${i}`, signature: encodeSignature(sig), publicKeys });
  }
  const leaves = votes.map(voteLeaf);
  const paths = allInclusionProofs(leaves);
  const prevHash = bytesToHex(new Uint8Array(32).fill(9));
  const header = {
    height: 2,
    timestamp: 1_700_000_000_000,
    merkle_root: bytesToHex(merkleRoot(leaves)),
    prev_hash: prevHash,
    size: count,
  };
  const block: BlockRecord = { ...header, hash: blockHash(header) };
  const proofOf = (index: number): VoteProof => ({
    vote: votes[index],
    index,
    path: paths[index].map(bytesToHex),
    block,
  });
  return { votes, block, prevHash, proofOf };
}

function storedFor(vote: VoteRecord): StoredVote {
  return { voteId: "v1", blockId: "2", voteContent: vote.payload, voteSignature: vote.signature };
}

Deno.test("decideVoteStatus follows page §4 with the checks of page §5", async (t) => {
  const { votes, proofOf, prevHash } = sealedBlock(3);
  const stored = storedFor(votes[1]);
  const voted = voteStatusLine("voted", { blockId: "2", voteId: "v1" });
  const invalid = voteStatusLine("invalid", { blockId: "2", voteId: "v1" });

  await t.step("nothing stored, or a failed fetch: unvoted", () => {
    const empty = { voteId: null, blockId: null, voteContent: null, voteSignature: null };
    assert.equal(decideVoteStatus({ stored: empty, height: 5 }).line.status, "unvoted");
    assert.equal(
      decideVoteStatus({ stored: { ...stored, voteId: null }, height: 5 }).line.status,
      "unvoted",
    );
    assert.equal(
      decideVoteStatus({ stored: { ...stored, blockId: null }, height: 5 }).line.status,
      "unvoted",
    );
    assert.equal(decideVoteStatus({ stored, height: null }).line.status, "unvoted");
    assert.equal(
      decideVoteStatus({ stored, height: 2, proof: null, prevHash }).line.status,
      "unvoted",
    );
    assert.equal(
      decideVoteStatus({ stored, height: 2, proof: proofOf(1), prevHash: null }).line.status,
      "unvoted",
    );
  });
  await t.step("chain height below the stored block id: pending, before any proof", () => {
    assert.equal(voteStage(stored, 1), "pending");
    assert.deepEqual(
      decideVoteStatus({ stored, height: 1 }).line,
      voteStatusLine("pending", { blockId: "2", voteId: "v1" }),
    );
    assert.equal(voteStage(stored, 2), "proof");
  });
  await t.step("every vote of a sealed block verifies: voted", () => {
    for (let i = 0; i < votes.length; i++) {
      const decision = decideVoteStatus({
        stored: storedFor(votes[i]),
        height: 4,
        proof: proofOf(i),
        prevHash,
      });
      assert.deepEqual(decision, { line: voted, mismatches: [] });
    }
  });
  await t.step("a one-vote block has an empty path and root = leaf hash: voted", () => {
    const single = sealedBlock(1);
    assert.deepEqual(single.proofOf(0).path, []);
    const decision = decideVoteStatus({
      stored: storedFor(single.votes[0]),
      height: 2,
      proof: single.proofOf(0),
      prevHash: single.prevHash,
    });
    assert.equal(decision.line.status, "voted");
  });
  await t.step("changed stored content or signature: invalid, mismatch logged", () => {
    const content = decideVoteStatus({
      stored: { ...stored, voteContent: "something else" },
      height: 2,
      proof: proofOf(1),
      prevHash,
    });
    assert.deepEqual(content, { line: invalid, mismatches: [{ kind: "content" }] });
    const signature = decideVoteStatus({
      stored: { ...stored, voteSignature: votes[0].signature },
      height: 2,
      proof: proofOf(1),
      prevHash,
    });
    assert.deepEqual(signature, { line: invalid, mismatches: [{ kind: "signature" }] });
  });
  await t.step("a listed ring unlike the signed one, in a consistent block: invalid", () => {
    // The server keeps each vote with its ring reversed and builds the block over that record, so
    // the proof and the block hash agree with each other: only the ring itself gives it away.
    const relisted = sealedBlock(3, { listed: (ring) => [...ring].reverse() });
    const decision = decideVoteStatus({
      stored: storedFor(relisted.votes[1]),
      height: 2,
      proof: relisted.proofOf(1),
      prevHash: relisted.prevHash,
    });
    assert.deepEqual(decision, { line: invalid, mismatches: [{ kind: "ring" }] });
    const dropped = sealedBlock(3, { listed: (ring) => ring.slice(1) });
    assert.deepEqual(
      decideVoteStatus({
        stored: storedFor(dropped.votes[1]),
        height: 2,
        proof: dropped.proofOf(1),
        prevHash: dropped.prevHash,
      }),
      { line: invalid, mismatches: [{ kind: "ring" }] },
    );
  });
  await t.step("a tampered proof or block: invalid, with the mismatch named", () => {
    const good = proofOf(1);
    const flip = (hex: string) => (hex[0] === "0" ? "1" : "0") + hex.slice(1);
    const cases: {
      desc: string;
      proof: VoteProof;
      prevHash: string;
      expect: VoteMismatch["kind"];
    }[] = [
      {
        desc: "path node changed",
        proof: { ...good, path: [flip(good.path[0]), ...good.path.slice(1)] },
        prevHash,
        expect: "merkle-root",
      },
      {
        desc: "path shortened",
        proof: { ...good, path: good.path.slice(1) },
        prevHash,
        expect: "merkle-root",
      },
      {
        desc: "index moved",
        proof: { ...good, index: 0 },
        prevHash,
        expect: "merkle-root",
      },
      // The proof of index 1 in 3 leaves also fits 4 leaves (protocol §3): the size in the block hash
      // is what catches it.
      {
        desc: "size grown",
        proof: { ...good, block: { ...good.block, size: 4 } },
        prevHash,
        expect: "block-hash",
      },
      {
        desc: "size shrunk",
        proof: { ...good, block: { ...good.block, size: 2 } },
        prevHash,
        expect: "merkle-root",
      },
      {
        // Vote bytes sort the ring, so the leaf and root still match: only the ring check sees it.
        desc: "other ring order in the record",
        proof: { ...good, vote: { ...good.vote, publicKeys: [...good.vote.publicKeys].reverse() } },
        prevHash,
        expect: "ring",
      },
      {
        desc: "root replaced",
        proof: { ...good, block: { ...good.block, merkle_root: flip(good.block.merkle_root) } },
        prevHash,
        expect: "merkle-root",
      },
      {
        desc: "timestamp changed",
        proof: { ...good, block: { ...good.block, timestamp: good.block.timestamp + 1 } },
        prevHash,
        expect: "block-hash",
      },
      {
        desc: "previous hash differs",
        proof: good,
        prevHash: flip(prevHash),
        expect: "block-hash",
      },
      {
        desc: "block hash replaced",
        proof: { ...good, block: { ...good.block, hash: flip(good.block.hash) } },
        prevHash,
        expect: "block-hash",
      },
      {
        desc: "other block height",
        proof: { ...good, block: { ...good.block, height: 3 } },
        prevHash,
        expect: "block-height",
      },
    ];
    for (const c of cases) {
      const decision = decideVoteStatus({
        stored,
        height: 5,
        proof: c.proof,
        prevHash: c.prevHash,
      });
      assert.equal(decision.line.status, "invalid", c.desc);
      assert.ok(
        decision.mismatches.some((m) => m.kind === c.expect),
        `${c.desc}: ${decision.mismatches.map(mismatchText).join("; ")}`,
      );
    }
  });
});

Deno.test("each mismatch kind has its console line of page §8", () => {
  const lines = ([
    { kind: "content" },
    { kind: "signature" },
    { kind: "ring" },
    { kind: "block-height", expected: "2", found: 3 },
    { kind: "merkle-root", computed: "aa", found: "bb" },
    { kind: "block-hash", computed: "cc", found: "dd" },
  ] as const).map(mismatchText);
  assert.deepEqual(lines, [
    "Vote content mismatch",
    "Vote signature mismatch",
    "Vote ring mismatch",
    "Block height mismatch: expected 2, got 3",
    "Merkle root mismatch: computed aa, block has bb",
    "Block hash mismatch: computed cc, block has dd",
  ]);
});

Deno.test("the tag decision", async (t) => {
  const voteId = "a".repeat(22);
  await t.step("the voter's own vote under its tag: green, voted once", () => {
    assert.deepEqual(tagCheckLine(voteId, { voteId }), {
      status: "once",
      text: "Tag checked: this key voted once",
      colour: "green",
    });
  });
  await t.step("another vote under its tag: red, with that vote's id", () => {
    assert.deepEqual(tagCheckLine(voteId, { voteId: "b".repeat(22) }), {
      status: "reused",
      text: `Your key was used for another vote: ${"b".repeat(22)}`,
      colour: "red",
    });
  });
  await t.step("no vote under its tag: red", () => {
    const line = tagCheckLine(voteId, null);
    assert.equal(line.status, "missing");
    assert.equal(line.colour, "red");
  });
});

Deno.test("each refused vote has its words of page §11, the tag kept out of the line", () => {
  const tag = "ab".repeat(32);
  const cases: { problem: VoteProblem; reason: string; detail?: string }[] = [
    { problem: { code: "no_key" }, reason: "This voter has no registered key" },
    { problem: { code: "no_directory" }, reason: "The key directory could not be read" },
    {
      problem: { code: "too_few_keys", registered: 1, needed: 8 },
      reason: "Not enough registered keys to vote: 1 registered, 8 needed",
    },
    {
      problem: { code: "no_ring", error: "own key id must be in 1..3, got 5" },
      reason: "own key id must be in 1..3, got 5",
    },
    {
      problem: { code: "unreadable_keys", ids: [2, 7] },
      reason: "The keys with ids 2, 7 could not be read",
    },
    {
      problem: { code: "not_signed", keyId: "4", error: "bad seed" },
      reason: "The vote could not be signed with key 4: bad seed",
    },
    { problem: { code: "malformed_vote", issues: "tag: bad" }, reason: "tag: bad" },
    {
      problem: { code: "unsettled" },
      reason: "The vote could not be sent: an earlier vote of this voter is not confirmed yet",
    },
    {
      problem: { code: "unconfirmed", status: 0, message: "POST /api/vote failed: offline" },
      reason: "The vote could not be sent: POST /api/vote failed: offline",
    },
    {
      problem: { code: "unconfirmed", status: 502, message: "status 502" },
      reason: "Vote refused: status 502",
    },
    {
      problem: { code: "duplicate_tag", message: `Tag "${tag}" has already voted` },
      reason: "Vote refused: this voter has already voted",
      detail: `Tag "${tag}" has already voted`,
    },
    {
      problem: {
        code: "refused",
        status: 409,
        serverCode: "round_closed",
        message: "Round 3 is current",
      },
      reason: "Vote refused: Round 3 is current",
    },
  ];
  for (const { problem, reason, detail } of cases) {
    const expected = detail === undefined
      ? { ...problem, ok: false, reason }
      : { ...problem, ok: false, reason, detail };
    assert.deepEqual(voteRefusal(problem), expected, problem.code);
    assert.ok(!reason.includes(tag), problem.code);
  }
});

Deno.test("waitingForVotersText says in plain words how many must still join", async (t) => {
  await t.step("several people", () => {
    assert.equal(
      waitingForVotersText(3, 8),
      "Waiting for 3 more people to join: a vote hides among 8 registered voters, " +
        "so it can be sent once 8 have joined.",
    );
  });
  await t.step("one person, in the singular", () => {
    assert.equal(
      waitingForVotersText(1, 8),
      "Waiting for 1 more person to join: a vote hides among 8 registered voters, " +
        "so it can be sent once 8 have joined.",
    );
  });
  await t.step("nobody missing", () => {
    assert.equal(
      waitingForVotersText(0, 5),
      "Enough people have joined: a vote hides among 5 registered voters, so it can be sent now.",
    );
  });
  await t.step("counts that are not counts: RangeError", () => {
    for (const [missing, size] of [[-1, 8], [1.5, 8], [2, Number.NaN]]) {
      assert.throws(() => waitingForVotersText(missing, size), RangeError);
    }
  });
});
