// Browser-safe. The independent audit of the public record (protocol §3–§4): it downloads the key
// directory, every block and every vote through the read-only API and re-derives everything the
// server claims — genesis, block hashes and links, Merkle roots from all votes, every signature
// with every verifier check, ring membership, tag uniqueness, sizes and the tally.
// The caller supplies `get` (an HTTP GET returning parsed JSON), so this module stays pure.
import * as z from "zod/mini";
import { bytesToHex } from "../protocol/bytes.ts";
import { checkLink, isGenesis, verifyBlockHash } from "../protocol/chain.ts";
import { merkleRoot, voteLeaf } from "../protocol/merkle.ts";
import { createMemberCache } from "../protocol/member_cache.ts";
import { checkRing, decodeSignature, type MemberCache } from "../protocol/ring_signature.ts";
import {
  BlockList,
  type BlockRecord,
  BlockStatus,
  BlockVotes,
  codePointLength,
  KeyPage,
  MAX_PAGE_LIMIT,
  MAX_PAYLOAD_CODE_POINTS,
  Tally,
} from "../protocol/schemas.ts";
import { tallyOf } from "../protocol/tally.ts";

/** Reads one API path (e.g. `/api/tally`) and returns its parsed JSON body; throws on failure. */
export type Get = (path: string) => Promise<unknown>;

/** Where the audit is: what it is reading and how far through the votes it has come. */
export type AuditProgress = {
  phase: "keys" | "blocks" | "votes" | "tally";
  done: number;
  total: number;
};

/** The outcome: counts of what was checked, the recomputed tally and every failure found. */
export type AuditReport = {
  ok: boolean;
  height: number;
  keys: number;
  blocks: number;
  votes: number;
  tally: { payload: string; count: number }[];
  failures: string[];
};

/**
 * Options: a progress callback, how many failures to collect before stopping, and the cache of
 * checked ring members (a fresh one per audit by default: each key is decoded, checked and
 * tabled once, however many rings it is in).
 */
export type AuditOptions = {
  onProgress?: (p: AuditProgress) => void;
  maxFailures?: number;
  members?: MemberCache;
};

class TooManyFailures extends Error {}

async function read<T>(get: Get, path: string, schema: z.ZodMiniType<T>): Promise<T> {
  const body = await get(path);
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${path} answered a malformed body: ${issue.path.join(".")} ${issue.message}`);
  }
  return parsed.data;
}

/**
 * Audits the whole public record reachable through `get`. Never throws for an inconsistent
 * record: every inconsistency becomes a failure line; an unreachable or malformed answer is one
 * too, and ends the audit.
 */
export async function auditLedger(get: Get, opts: AuditOptions = {}): Promise<AuditReport> {
  const failures: string[] = [];
  const maxFailures = opts.maxFailures ?? 50;
  const progress = opts.onProgress ?? (() => {});
  const members = opts.members ?? createMemberCache();
  const report: AuditReport = {
    ok: false,
    height: 0,
    keys: 0,
    blocks: 0,
    votes: 0,
    tally: [],
    failures,
  };
  const fail = (line: string) => {
    failures.push(line);
    if (failures.length >= maxFailures) throw new TooManyFailures();
  };

  try {
    const status = await read(get, "/api/block/status", BlockStatus);
    report.height = status.height;

    // The key directory: ids contiguous from 1, keys distinct.
    const registered = new Set<string>();
    for (let offset = 0;;) {
      const page = await read(
        get,
        `/api/pki/key/offset/${offset}/limit/${MAX_PAGE_LIMIT}`,
        KeyPage,
      );
      page.keys.forEach((k, i) => {
        if (k.id !== offset + i + 1) {
          fail(`key directory: expected id ${offset + i + 1}, got ${k.id}`);
        }
        if (registered.has(k.key)) fail(`key directory: key ${k.key} is listed twice`);
        registered.add(k.key);
      });
      offset += page.keys.length;
      progress({ phase: "keys", done: offset, total: page.total });
      if (page.keys.length === 0 || offset >= page.total) {
        if (offset !== page.total) fail(`key directory: total ${page.total}, listed ${offset}`);
        break;
      }
    }
    report.keys = registered.size;

    // Every block header, in height order.
    const blocks: BlockRecord[] = [];
    while (blocks.length <= status.height) {
      const page = await read(
        get,
        `/api/blocks?from=${blocks.length}&limit=${MAX_PAGE_LIMIT}`,
        BlockList,
      );
      if (page.blocks.length === 0) {
        fail(
          `blocks: the chain stops at height ${blocks.length - 1}, status says ${status.height}`,
        );
        break;
      }
      blocks.push(...page.blocks);
      progress({ phase: "blocks", done: blocks.length, total: status.height + 1 });
    }
    report.blocks = blocks.length;

    const genesis = blocks[0];
    if (!isGenesis(genesis)) {
      fail("block 0: not a genesis block (height 0, size 0, empty root, zero prev_hash)");
    }
    if (!verifyBlockHash(genesis)) fail("block 0: hash does not match its fields");
    blocks.forEach((b, i) => {
      if (b.height !== i) fail(`block ${i}: served with height ${b.height}`);
      if (i === 0) return;
      if (b.size === 0) fail(`block ${i}: sealed with no votes`);
      if (!verifyBlockHash(b)) fail(`block ${i}: hash does not match its fields`);
      else if (!checkLink(b, blocks[i - 1])) {
        fail(`block ${i}: prev_hash does not link to block ${i - 1}`);
      }
    });
    const head = blocks[blocks.length - 1];
    if (head.hash !== status.hash) fail(`status: head hash differs from block ${head.height}`);

    // Every vote of every block: leaf order, Merkle root, signature, ring, tag.
    const totalVotes = blocks.reduce((sum, b) => sum + b.size, 0);
    const tags = new Map<string, number>();
    const payloads: string[] = [];
    for (const block of blocks.slice(1)) {
      const leaves: Uint8Array[] = [];
      for (let offset = 0;;) {
        const page = await read(
          get,
          `/api/block/id/${block.height}/votes?offset=${offset}&limit=${MAX_PAGE_LIMIT}`,
          BlockVotes,
        );
        if (page.total !== block.size) {
          fail(`block ${block.height}: size ${block.size}, but ${page.total} votes served`);
        }
        for (const { index, vote, voteId } of page.votes) {
          const where = `block ${block.height} vote ${index} (${voteId})`;
          if (index !== offset) fail(`${where}: expected leaf index ${offset}`);
          offset++;
          leaves.push(voteLeaf(vote));
          payloads.push(vote.payload);
          if (codePointLength(vote.payload) > MAX_PAYLOAD_CODE_POINTS) {
            fail(`${where}: payload longer than ${MAX_PAYLOAD_CODE_POINTS} characters`);
          }
          for (const key of vote.publicKeys) {
            if (!registered.has(key)) fail(`${where}: ring member ${key} is not registered`);
          }
          checkVoteSignature(vote, { where, fail, tags, height: block.height, members });
          report.votes++;
          progress({ phase: "votes", done: report.votes, total: totalVotes });
        }
        if (page.votes.length === 0 || offset >= page.total) break;
      }
      if (bytesToHex(merkleRoot(leaves)) !== block.merkle_root) {
        fail(`block ${block.height}: Merkle root does not match its ${leaves.length} votes`);
      }
    }

    report.tally = tallyOf(payloads);
    progress({ phase: "tally", done: 0, total: 1 });
    const served = await read(get, "/api/tally", Tally);
    if (served.total !== payloads.length) {
      fail(`tally: total ${served.total}, but the chain holds ${payloads.length} votes`);
    }
    const mine = new Map(report.tally.map((t) => [t.payload, t.count]));
    const theirs = new Map(served.results.map((t) => [t.payload, t.count]));
    for (const [payload, count] of mine) {
      if (theirs.get(payload) !== count) {
        fail(`tally: "${payload}" has ${count} votes, served ${theirs.get(payload) ?? 0}`);
      }
    }
    for (const payload of theirs.keys()) {
      if (!mine.has(payload)) fail(`tally: "${payload}" is served but no vote carries it`);
    }
    served.results.forEach((t, i) => {
      if (i > 0 && t.count > served.results[i - 1].count) {
        fail("tally: not in count-descending order");
      }
    });
    progress({ phase: "tally", done: 1, total: 1 });
  } catch (e) {
    if (!(e instanceof TooManyFailures)) failures.push(`audit stopped: ${(e as Error).message}`);
  }
  report.ok = failures.length === 0;
  return report;
}

function checkVoteSignature(
  vote: { payload: string; signature: string; publicKeys: string[] },
  { where, fail, tags, height, members }: {
    where: string;
    fail: (line: string) => void;
    tags: Map<string, number>;
    height: number;
    members: MemberCache;
  },
) {
  let sig;
  try {
    sig = decodeSignature(vote.signature);
  } catch (e) {
    fail(`${where}: malformed signature: ${(e as Error).message}`);
    return;
  }
  const ring = sig.ring.map(bytesToHex);
  if (ring.length !== vote.publicKeys.length || ring.some((k, i) => k !== vote.publicKeys[i])) {
    fail(`${where}: publicKeys differ from the signature's ring`);
  }
  const check = checkRing(sig, vote.payload, { members });
  if (!check.ok) fail(`${where}: invalid signature: ${check.reason}`);
  const tag = bytesToHex(sig.tag);
  const earlier = tags.get(tag);
  if (earlier !== undefined) fail(`${where}: tag ${tag} already voted in block ${earlier}`);
  tags.set(tag, height);
}
