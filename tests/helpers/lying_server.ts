/**
 * A malicious server for tests: it holds the real server's signing key (read from the server's
 * KV) and rewrites what the real server answers — a forked history re-linked and re-signed, a
 * withheld block, torsioned head signatures, a shrunk block, a lying `total`, another key, the log
 * of a shown chain — as lies for the tampering proxy (HTTP) or transport (in-process) of
 * tampering_proxy.ts.
 * @module
 */
import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { bytesToBase64, bytesToHex, concatBytes, hexToBytes } from "../../lib/protocol/bytes.ts";
import { logLeafHash } from "../../lib/protocol/block_log.ts";
import { blockHash } from "../../lib/protocol/chain.ts";
import { parseCheckpoint, signCheckpoint } from "../../lib/protocol/checkpoint.ts";
import {
  type AppendOnlyTree,
  createAppendOnlyTree,
  merkleRoot,
} from "../../lib/protocol/merkle.ts";
import { headMessage, serverPublicKey, signHead } from "../../lib/protocol/head.ts";
import { sha512 } from "../../lib/protocol/hash.ts";
import { keyPairFromSeed, L } from "../../lib/protocol/keys.ts";
import { parseNote } from "../../lib/protocol/note.ts";
import type { BlockRecord } from "../../lib/protocol/schemas.ts";
import { integerParam } from "../../server/api/common.ts";
import { LOG_CONTENT_TYPE } from "../../server/api/log.ts";
import { ApiError, invalidRequest, refusal } from "../../server/errors.ts";
import type { Answer, Rewrite } from "./tampering_proxy.ts";

/** The real server's signing seed, read from its KV (`["cfg", "server-key"]`, protocol §5.2). */
export async function serverSeedOf(kv: Deno.Kv): Promise<Uint8Array> {
  const stored = await kv.get<{ seed: Uint8Array }>(["cfg", "server-key"]);
  if (!stored.value) throw new Error("the server has no signing key in this KV");
  return stored.value.seed;
}

/** The server's signing seed in the KV file at `path`, opened for the read only. */
export async function serverSeedAt(path: string): Promise<Uint8Array> {
  const kv = await Deno.openKv(path);
  try {
    return await serverSeedOf(kv);
  } finally {
    kv.close();
  }
}

/** `block` with its hash recomputed from its fields. */
export function rehash(block: BlockRecord): BlockRecord {
  const { merkle_root, timestamp, height, prev_hash, size } = block;
  return { ...block, hash: blockHash({ merkle_root, timestamp, height, prev_hash, size }) };
}

/** `block` signed by `seed` (RFC 8032, as the server signs). */
export function resign<T extends { height: number; hash: string }>(seed: Uint8Array, block: T): T {
  return { ...block, head_signature: signHead(seed, block) };
}

/**
 * A head signature by `seed` whose R carries a point of order 8: `R = r·B + T`, `k = H(R‖A‖M)`,
 * `s = r + k·a`. A cofactored check (8·s·B = 8·R + 8·k·A) accepts it; RFC 8032 §5.1.7 read
 * cofactorless, OpenSSL and libsodium refuse it.
 */
export function torsionedSignature(seed: Uint8Array, head: { height: number; hash: string }) {
  const { secret, publicKey } = keyPairFromSeed(seed);
  const message = headMessage(head.height, hexToBytes(head.hash, 32));
  const r = bytesToScalar(sha512(seed, message, new Uint8Array([0x74])));
  const torsion = ed25519.Point.fromHex(ED25519_TORSION_SUBGROUP[1]);
  const R = ed25519.Point.BASE.multiply(r).add(torsion).toBytes();
  const k = bytesToScalar(sha512(R, publicKey, message));
  const s = (r + k * secret) % L;
  return bytesToHex(concatBytes(R, scalarBytes(s)));
}

function bytesToScalar(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]);
  return n % L;
}

function scalarBytes(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++, n >>= 8n) out[i] = Number(n & 0xffn);
  return out;
}

/**
 * The history forked from `height` on: each block from there closed `shiftMs` later, its hash
 * recomputed, linked to its forked predecessor and signed by `seed` — a consistent chain that
 * every link and signature check accepts, but not the chain the server showed before.
 */
export function forkedChain(
  honest: readonly BlockRecord[],
  { from, seed, shiftMs = 1000 }: { from: number; seed: Uint8Array; shiftMs?: number },
): BlockRecord[] {
  const out: BlockRecord[] = [];
  for (const block of honest) {
    const prev = out.at(-1);
    if (block.height < from) out.push(block);
    else {
      out.push(
        resign(
          seed,
          rehash({ ...block, timestamp: block.timestamp + shiftMs, prev_hash: prev!.hash }),
        ),
      );
    }
  }
  return out;
}

/**
 * The history with block `height` shrunk to its votes other than leaf `drop`: its root recomputed
 * over the rest, its size lowered by one (`keepSize` keeps it), every later block re-linked, and
 * every block from `height` on signed by `seed`.
 */
export function shrunkChain(
  honest: readonly BlockRecord[],
  { height, leaves, seed, keepSize = false }: {
    height: number;
    /** The leaf hashes of block `height` left after the drop, in leaf order. */
    leaves: Uint8Array[];
    seed: Uint8Array;
    keepSize?: boolean;
  },
): BlockRecord[] {
  const out: BlockRecord[] = [];
  for (const block of honest) {
    const prev = out.at(-1);
    if (block.height < height) out.push(block);
    else if (block.height === height) {
      const shrunk = {
        ...block,
        merkle_root: bytesToHex(merkleRoot(leaves)),
        size: keepSize ? block.size : leaves.length,
      };
      out.push(resign(seed, rehash(shrunk)));
    } else out.push(resign(seed, rehash({ ...block, prev_hash: prev!.hash })));
  }
  return out;
}

/** Every block of the chain at `base`, read honestly. */
export async function honestChain(base: string): Promise<BlockRecord[]> {
  const blocks: BlockRecord[] = [];
  for (;;) {
    const res = await fetch(new URL(`api/blocks?from=${blocks.length}&limit=100`, base));
    const page = await res.json();
    blocks.push(...page.blocks);
    if (page.blocks.length === 0 || blocks.length > page.height) return blocks;
  }
}

const PROOF = /^\/api\/block\/id\/\d+\/vote\/[^/]+$/;
const HASH = /^\/api\/block\/hash\/id\/(\d+)$/;

/**
 * A rewrite that shows `chain` (by height) in place of the served blocks: the status head, the
 * blocks list, block hashes and vote proofs. Blocks at heights in `withhold` are not served: the
 * blocks list leaves them out, `withholdAs` says how else ("empty" drops the whole page, "other"
 * serves the next block in its place).
 */
export function showChain(
  chain: () => readonly BlockRecord[],
  { withhold = [], withholdAs = "omit" }: {
    withhold?: number[];
    withholdAs?: "omit" | "empty" | "other";
  } = {},
): Rewrite {
  return (path, body) => {
    const at = new Map(chain().map((b) => [b.height, b]));
    const swap = (b: BlockRecord) => at.get(b.height) ?? b;
    if (path === "/api/block/status") {
      const head = at.get(body.height);
      if (head) Object.assign(body, { hash: head.hash, head_signature: head.head_signature });
    } else if (path === "/api/blocks") {
      let blocks: BlockRecord[] = body.blocks.map(swap);
      if (blocks.some((b) => withhold.includes(b.height))) {
        if (withholdAs === "empty") blocks = [];
        else if (withholdAs === "other") {
          blocks = blocks.map((b) => withhold.includes(b.height) ? at.get(b.height + 1) ?? b : b);
        } else blocks = blocks.filter((b) => !withhold.includes(b.height));
      }
      body.blocks = blocks;
    } else if (PROOF.test(path)) {
      body.block = swap(body.block);
    } else if (HASH.test(path)) {
      const block = at.get(Number(HASH.exec(path)![1]));
      if (block) body.hash = block.hash;
    }
  };
}

/**
 * A lie that serves the log (protocol §4.10) of `chain` (blocks by height from genesis, read at
 * every request, so it may grow) under `base` in place of the ledger's: the checkpoint of size
 * `chain().length`, signed by `seed` under the real origin (`origin`, else the first line of the
 * honest checkpoint) and carrying no cosignature, since a forker cannot make a witness's; and the
 * consistency and inclusion proofs over the chain's leaves `logLeafHash(block.hash)`, with the
 * statuses, refusals and text formats of server/api/log.ts. Every other request passes on.
 */
export function showLog(
  seed: Uint8Array,
  chain: () => readonly BlockRecord[],
  { origin, base = "/api" }: { origin?: string; base?: string } = {},
): Answer {
  const logOf = shownLog();
  const prefix = `${base.replace(/\/+$/, "")}/log/`;
  let named = origin ?? null;
  return async ({ path, method, honest }) => {
    if ((method !== "GET" && method !== "HEAD") || !path.startsWith(prefix)) return null;
    const [call, ...params] = path.slice(prefix.length).split("/").map(decodedParam);
    // What the log's routes do not match (an empty or extra segment) is the real server's 404.
    if (params.includes("")) return null;
    try {
      if (call === "checkpoint" && params.length === 0) {
        named ??= await originOf(await honest());
        const { tree, size } = logOf(chain());
        const note = signCheckpoint({ origin: named, size, root: tree.root(size) }, seed);
        return logAnswer(note, { "Cache-Control": "no-store" });
      }
      if (call === "consistency" && params.length === 2) {
        const oldSize = integerParam(params[0], "old");
        const newSize = integerParam(params[1], "new");
        if (oldSize > newSize) {
          throw invalidRequest(`old must be at most new ${newSize}, got ${oldSize}`);
        }
        const { tree, size } = logOf(chain());
        if (newSize > size) throw unknownTree(newSize, size);
        return logAnswer(proofLines(tree.consistencyProof(oldSize, newSize)));
      }
      if (call === "inclusion" && params.length === 2) {
        const height = integerParam(params[0], "height");
        const treeSize = integerParam(params[1], "size");
        if (height >= treeSize) {
          throw invalidRequest(`height must be below size ${treeSize}, got ${height}`);
        }
        const { tree, size } = logOf(chain());
        if (treeSize > size) throw unknownTree(treeSize, size);
        return logAnswer(proofLines(tree.inclusionProof(height, treeSize)));
      }
    } catch (error) {
      if (error instanceof ApiError) return error.getResponse();
      throw error;
    }
    return null;
  };
}

/**
 * The log of whichever chain it is given: the tree of its leaves and its size. The tree is kept
 * while each chain given extends (or is a prefix of) the last, and made again when one is not.
 */
function shownLog(): (chain: readonly BlockRecord[]) => { tree: AppendOnlyTree; size: number } {
  let hashes: string[] = [];
  let tree = createAppendOnlyTree();
  return (chain) => {
    for (const [i, block] of chain.entries()) {
      if (block.height !== i) {
        throw new RangeError(
          `a shown chain holds heights 0, 1, 2 …; block ${i} is at ${block.height}`,
        );
      }
    }
    let common = 0;
    while (
      common < Math.min(hashes.length, chain.length) && hashes[common] === chain[common].hash
    ) {
      common++;
    }
    if (common < Math.min(hashes.length, chain.length)) {
      hashes = [];
      tree = createAppendOnlyTree();
    }
    for (const block of chain.slice(hashes.length)) {
      tree.append(logLeafHash(block.hash));
      hashes.push(block.hash);
    }
    return { tree, size: chain.length };
  };
}

/** A path segment as Hono's `param` reads it: percent-decoded when it decodes, else as it is. */
function decodedParam(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The origin an honest checkpoint answer names in its first line. */
async function originOf(answer: Response): Promise<string> {
  const text = await answer.text();
  if (answer.status !== 200) {
    throw new Error(`the honest checkpoint answered ${answer.status}: ${text.slice(0, 200)}`);
  }
  return parseCheckpoint(parseNote(text).text).origin;
}

/** 404 `unknown_tree`, worded as server/api/log.ts words it. */
function unknownTree(size: number, current: number): ApiError {
  return refusal("unknown_tree", `No tree of size ${size}: the log's size is ${current}`);
}

/** One base64 hash per line, each ending in a newline; empty for no hashes. */
function proofLines(hashes: Uint8Array[]): string {
  return hashes.map((hash) => `${bytesToBase64(hash)}\n`).join("");
}

function logAnswer(body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, {
    status: 200,
    headers: { "Content-Type": LOG_CONTENT_TYPE, ...headers },
  });
}

/** The first answer of `answers` that answers a request; null (passed on) when none does. */
export function firstAnswerOf(...answers: Answer[]): Answer {
  return async (request) => {
    for (const answer of answers) {
      const own = await answer(request);
      if (own) return own;
    }
    return null;
  };
}

/** A rewrite that replaces every head signature with a torsioned one by `seed`. */
export function torsionedHeads(seed: Uint8Array): Rewrite {
  const sign = (b: { height: number; hash: string; head_signature?: string }) => {
    b.head_signature = torsionedSignature(seed, b);
  };
  return (path, body) => {
    if (path === "/api/block/status") sign(body);
    else if (path === "/api/blocks") body.blocks.forEach(sign);
    else if (PROOF.test(path)) sign(body.block);
  };
}

/** A rewrite that answers another server key, and signs every head with it. */
export function anotherKey(seed: Uint8Array): Rewrite {
  return (path, body) => {
    if (path === "/api/server-key") body.key = serverPublicKey(seed);
    else if (path === "/api/block/status") Object.assign(body, resign(seed, body));
    else if (path === "/api/blocks") {
      body.blocks = body.blocks.map((b: BlockRecord) => resign(seed, b));
    } else if (PROOF.test(path)) body.block = resign(seed, body.block);
  };
}

/** Runs several rewrites in turn. */
export function allOf(...rewrites: Rewrite[]): Rewrite {
  return (path, body) => {
    for (const rewrite of rewrites) rewrite(path, body);
  };
}

/**
 * A rewrite of block `height`'s votes listing: leaf `drop` left out (the listing's `total` kept,
 * unless `total` says what to answer instead).
 */
export function listingLie(
  height: number,
  { drop, total }: { drop?: number; total?: (honest: number) => number },
): Rewrite {
  const listing = new RegExp(`^/api/block/id/${height}/votes$`);
  return (path, body) => {
    if (!listing.test(path)) return;
    if (drop !== undefined) {
      body.votes = body.votes.filter((v: { index: number }) => v.index !== drop);
    }
    if (total) body.total = total(body.total);
  };
}
