/**
 * The record reader streams: a record of thousands of votes written from protocol §4.8 alone is
 * audited from a pull-only stream of small chunks, the reader never more than a chunk and a line
 * ahead of what it served: the file is never held whole.
 * @module
 */
import assert from "node:assert/strict";
import { auditLedger } from "../../../lib/client/audit/audit.ts";
import {
  encodeLine,
  RECORD_KIND,
  type RecordLine,
} from "../../../lib/client/audit/election_record.ts";
import { recordSource } from "../../../lib/client/audit/election_record_source.ts";
import { unverifiedVote, type VoteChecker } from "../../../lib/client/audit/vote_checks.ts";
import { bytesToHex, utf8 } from "../../../lib/protocol/bytes.ts";
import { blockHash, genesisBlock } from "../../../lib/protocol/chain.ts";
import { sha256 } from "../../../lib/protocol/hash.ts";
import { serverPublicKey, signHead } from "../../../lib/protocol/head.ts";
import { merkleRoot, voteLeaf } from "../../../lib/protocol/merkle.ts";
import { tallyOf } from "../../../lib/protocol/tally.ts";
import { checkpointOver } from "./log_fixtures.ts";

const VOTES = 3000;
const PER_BLOCK = 100;
const CHUNK = 16 * 1024;

/** A consistent record of `VOTES` votes in blocks of `PER_BLOCK`, and each vote line's end. */
function syntheticRecord() {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const keys = Array.from({ length: 16 }, (_, i) => bytesToHex(sha256(utf8(`key ${i}`))));
  const lines: RecordLine[] = keys.map((key, i) => ({ kind: "key", id: i + 1, key }));
  const blocks = [genesisBlock(1_767_225_600_000)];
  const votes: RecordLine[] = [];
  for (let h = 1, cast = 0; cast < VOTES; h++) {
    const mine = [];
    for (let i = 0; i < PER_BLOCK && cast < VOTES; i++, cast++) {
      const publicKeys = [keys[cast % 16], keys[(cast + 1) % 16]];
      // The wire form of a signature (protocol §2.9) with a tag of its own; never verified.
      const zero = "00".repeat(32);
      const I = bytesToHex(sha256(utf8(`stand-in tag ${cast}`)));
      const vote = {
        payload: `Choice ${cast % 3}`,
        signature: JSON.stringify({ c0: zero, r: [zero, zero], I, ring: publicKeys }),
        publicKeys,
      };
      mine.push(vote);
      votes.push({
        kind: "vote",
        height: h,
        index: i,
        voteId: String(cast).padStart(22, "0"),
        ...vote,
      });
    }
    const header = {
      height: h,
      timestamp: blocks[h - 1].timestamp + 60_000,
      merkle_root: bytesToHex(merkleRoot(mine.map(voteLeaf))),
      prev_hash: blocks[h - 1].hash,
      size: mine.length,
    };
    blocks.push({ ...header, hash: blockHash(header) });
  }
  const signed = blocks.map((b) => ({ ...b, head_signature: signHead(seed, b) }));
  const head = signed.at(-1)!;
  const { height, hash, timestamp, head_signature } = head;
  const all: RecordLine[] = [
    { kind: RECORD_KIND, key: serverPublicKey(seed), height, hash, timestamp, head_signature },
    { kind: "checkpoint", note: checkpointOver(seed, signed.map((b) => b.hash)) },
    ...lines,
    ...signed.map((b): RecordLine => ({ kind: "block", ...b })),
    ...votes,
    {
      kind: "tally",
      total: VOTES,
      results: tallyOf(votes.map((v) => (v.kind === "vote" ? v.payload : ""))),
    },
    { kind: "end", keys: keys.length, blocks: signed.length, votes: VOTES },
  ];
  const bytes = new TextEncoder().encode(all.map(encodeLine).join(""));
  // Where each vote line ends in the bytes (all ASCII here, so characters are bytes).
  const ends = new Map<string, number>();
  let at = 0;
  for (const line of all) {
    at += encodeLine(line).length;
    if (line.kind === "vote") ends.set(line.voteId, at);
  }
  return { bytes, ends };
}

/** Each vote's leaf only: the stand-in signatures, in their wire form, are not verified. */
const standIn: VoteChecker = (votes) => Promise.resolve(votes.map(unverifiedVote));

Deno.test(`a record of ${VOTES} votes is read from a stream, a chunk at a time`, async () => {
  const { bytes, ends } = syntheticRecord();
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= bytes.length) return controller.close();
      const chunk = bytes.slice(pulled, pulled + CHUNK);
      pulled += chunk.length;
      controller.enqueue(chunk);
    },
  }, { highWaterMark: 0 });
  const source = recordSource(stream);
  const aheadAt: number[] = [];
  const longestLine = Math.max(...[...ends.values()].map((end, i, all) => end - (all[i - 1] ?? 0)));
  const report = await auditLedger({
    ...source,
    blockVotes: (height) => async (offset, limit) => {
      const page = await source.blockVotes(height)(offset, limit);
      // Bytes pulled beyond the last vote line served: the line peeked at and the chunk it is in.
      aheadAt.push(pulled - ends.get(page.items.at(-1)!.voteId)!);
      return page;
    },
  }, { checker: standIn });
  assert.deepEqual(report.failures, []);
  assert.deepEqual(await source.close(), []);
  assert.equal(report.votes, VOTES);
  assert.equal(aheadAt.length, VOTES / PER_BLOCK);
  assert.ok(bytes.length > 40 * CHUNK, `${bytes.length} bytes: far more than one chunk`);
  const most = Math.max(...aheadAt);
  assert.ok(most <= CHUNK + longestLine, `read ${most} bytes ahead of what it served`);
  assert.equal(pulled, bytes.length);
});
