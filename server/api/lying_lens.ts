/**
 * The attack lab's lying-server lens: `GET {base}/lens/{lie}/…` answers the honest read of
 * `{base}/…` with one lie told (lib/client/lab/lies.ts), and serves the log of what it shows: every
 * head and every checkpoint it serves is signed with the lens key, never the server key
 * (protocol §4.7). It only reads.
 * @module
 */
import { type Context, Hono } from "hono";
import { isLensView, type LensView } from "../../lib/client/lab/lies.ts";
import { logLeafHash } from "../../lib/protocol/block_log.ts";
import { bytesToBase64 } from "../../lib/protocol/bytes.ts";
import { blockHash } from "../../lib/protocol/chain.ts";
import { signCheckpoint } from "../../lib/protocol/checkpoint.ts";
import { type AppendOnlyTree, createAppendOnlyTree } from "../../lib/protocol/merkle.ts";
import type { BlockRecord as Block } from "../../lib/protocol/schemas.ts";
import { integerParam } from "./common.ts";
import { LOG_CONTENT_TYPE } from "./log.ts";
import { invalidRequest, quote, refusal } from "../errors.ts";
import { createHeadSigner, type HeadSigner, withHeadSignature } from "../head_signer.ts";

/** Reads an honest API path of the ledger (e.g. `/api/lab/blocks?from=0`) from its own routes. */
export type HonestRead = (path: string) => Promise<Response>;

/** Options of {@link createLensApp}: the prefix the ledger's API is served under. */
export type LensOptions = { base?: string };

/** What the lens's log is named: the ledger log's origin followed by this. */
export const LENS_ORIGIN_SUFFIX = "/lens";

// deno-lint-ignore no-explicit-any
type Json = any;
/** The block at a height of one history the lens shows: the honest one, or the forked one. */
type BlockAt = (height: number) => Promise<Block>;

const PROOF = /^\/api\/block\/id\/\d+\/vote\/[^/]+$/;
const TAG = /^\/api\/tag\/[^/]+$/;
const HASH = /^\/api\/block\/hash\/id\/\d+$/;
const CONSISTENCY = /^\/api\/log\/consistency\/([^/]*)\/([^/]*)$/;
const INCLUSION = /^\/api\/log\/inclusion\/([^/]*)\/([^/]*)$/;

/** How far the forked history moves each block's close time: one second. */
const FORK_SHIFT_MS = 1000;

/** The views that show the forked history instead of the honest one. */
const FORKED_VIEWS: ReadonlySet<LensView> = new Set(["fork-chain", "split-view"]);

/**
 * Routes under `{base}/lens` (`base` is `/api` by default): `GET /{lie}/{path}` mirrors
 * `GET {base}/{path}` with the lie told and every head signed by the lens key made from `seed`,
 * which `GET /{lie}/server-key` answers; `GET /{lie}/log/…` serves the log of the blocks that view
 * shows (protocol §4.10), signed by the same key. Inside, paths are named as under `/api` whatever
 * the base.
 *
 * It only ever reads — it calls the honest routes of the one ledger served under `base` (the
 * practice ledger's `/api/lab` for the lab) and rewrites their JSON — so it never writes to the
 * ledger, and requests outside the prefix are untouched. A lie the lab shows is provable under the
 * lens key only, so nobody can obtain from the lens fork evidence against an honest server, and a
 * server that really forks cannot blame it.
 */
export function createLensApp(
  read: HonestRead,
  seed: Uint8Array,
  { base = "/api" }: LensOptions = {},
): Hono {
  const app = new Hono();
  const signer = createHeadSigner(seed);
  const readAt: HonestRead = (path) => read(base + path.slice("/api".length));
  const honest = honestHistory(readAt);
  const fork = forkedHistory(honest, signer);
  const logs = {
    honest: lensLog(readAt, { blockAt: honest, seed }),
    forked: lensLog(readAt, { blockAt: fork, seed }),
  };

  app.get("/:lie/*", async (c) => {
    const lie = c.req.param("lie");
    if (!isLensView(lie)) throw refusal("unknown_lie", `No lie "${quote(lie)}"`);
    const url = new URL(c.req.url);
    const path = `/api/${url.pathname.slice(`${base}/lens/${lie}/`.length)}`;
    if (path.startsWith("/api/lens/")) throw refusal("not_found", "A lens of a lens");
    if (path.startsWith("/api/log/")) {
      return await logAnswer(c, path, FORKED_VIEWS.has(lie) ? logs.forked : logs.honest);
    }
    if (path === "/api/server-key") return c.json({ key: signer.key });
    const honestAnswer = await readAt(path + url.search);
    const type = honestAnswer.headers.get("content-type") ?? "";
    if (!type.startsWith("application/json")) return honestAnswer;
    const body: Json = await honestAnswer.json();
    if (!honestAnswer.ok) return c.json(body, honestAnswer.status as 404);
    return c.json(resignHeads(signer, await tellLie(lie, { path, body, signer, fork })));
  });

  return app;
}

/** The answer `body` of `path` with `lie` told; throws the honest 404 of a thing it hides. */
async function tellLie(
  lie: LensView,
  { path, body, signer, fork }: {
    path: string;
    body: Json;
    signer: HeadSigner;
    fork: BlockAt;
  },
): Promise<Json> {
  switch (lie) {
    case "honest":
      return body;
    case "rewrite-payload":
      if (PROOF.test(path)) body.vote.payload = `${body.vote.payload} (changed)`;
      return body;
    case "rewrite-signature":
      if (PROOF.test(path)) body.vote.signature = rewriteSignature(body.vote.signature);
      return body;
    case "drop-vote":
      if (PROOF.test(path)) throw refusal("unknown_vote", "No such vote");
      if (TAG.test(path)) throw refusal("unknown_tag", "No vote with this tag");
      return body;
    case "alter-path":
      if (PROOF.test(path)) {
        body.path = body.path.length > 0
          ? [flipHex(body.path[0]), ...body.path.slice(1)]
          : [body.block.merkle_root];
      }
      return body;
    case "rewrite-block-hash":
      if (PROOF.test(path)) {
        // Reversed, so the false hash differs at a glance, not only in its last digit.
        const hash = [...body.block.hash].reverse().join("");
        body.block = withHeadSignature(signer, { ...body.block, hash });
      }
      return body;
    case "fork-chain":
    case "split-view":
      return await forkAnswer(path, body, fork);
  }
}

/**
 * `body` with every signed head in it — an object with `height`, `hash` and `head_signature`, at
 * any depth — signed again by `signer`, so no head the lens serves carries the server's signature.
 */
function resignHeads(signer: HeadSigner, body: Json): Json {
  if (Array.isArray(body)) return body.map((item) => resignHeads(signer, item));
  if (body === null || typeof body !== "object") return body;
  const copy: Json = {};
  for (const [name, value] of Object.entries(body)) copy[name] = resignHeads(signer, value);
  if (
    typeof copy.head_signature === "string" && typeof copy.height === "number" &&
    typeof copy.hash === "string"
  ) {
    copy.head_signature = signer.sign(copy);
  }
  return copy;
}

/** Every block record in `body` replaced by its forked twin. */
async function forkAnswer(path: string, body: Json, fork: BlockAt): Promise<Json> {
  if (PROOF.test(path)) return { ...body, block: await fork(body.block.height) };
  if (path === "/api/blocks") {
    const blocks = [];
    for (const block of body.blocks) blocks.push(await fork(block.height));
    return { ...body, blocks };
  }
  if (path === "/api/block/status" || HASH.test(path)) {
    const { hash, timestamp, head_signature } = await fork(body.height);
    const forked = "timestamp" in body ? { ...body, hash, timestamp } : { ...body, hash };
    return "head_signature" in body ? { ...forked, head_signature } : forked;
  }
  return body;
}

/** The honest chain's sealed blocks, read 100 at a time and kept: sealed blocks never change. */
function honestHistory(read: HonestRead): BlockAt {
  const blocks = new Map<number, Block>();
  return async function honestAt(height) {
    if (!blocks.has(height)) {
      const res = await read(`/api/blocks?from=${height}&limit=100`);
      const { blocks: page } = await res.json() as { blocks: Block[] };
      for (const block of page) blocks.set(block.height, block);
    }
    const block = blocks.get(height);
    if (!block) throw refusal("unknown_block", `No sealed block at height ${height}`);
    return block;
  };
}

/**
 * The forked history: from height 1 on, every block closed one second later than the honest one,
 * linked to its forked predecessor, its hash recomputed and its head signed with the lens key. Each
 * block and its links check out; only a head or a checkpoint remembered from the honest chain
 * tells them apart.
 */
function forkedHistory(honestAt: BlockAt, signer: HeadSigner): BlockAt {
  const forked = new Map<number, Block>();
  return async function fork(height) {
    if (height === 0) return await honestAt(0);
    const done = forked.get(height);
    if (done) return done;
    let from = height;
    while (from > 1 && !forked.has(from - 1)) from--;
    let prev = from === 1 ? await honestAt(0) : forked.get(from - 1)!;
    for (let h = from; h <= height; h++) {
      const { head_signature: _, ...fields } = await honestAt(h);
      const header = {
        ...fields,
        timestamp: fields.timestamp + FORK_SHIFT_MS,
        prev_hash: prev.hash,
      };
      prev = withHeadSignature(signer, { ...header, hash: blockHash(header) });
      forked.set(h, prev);
    }
    return prev;
  };
}

/** The log of one history the lens shows: its tree as large as the chain, and its checkpoints. */
type LensLog = {
  /** The log's size now (the honest head's height + 1) and its tree, holding at least that. */
  current(): Promise<{ size: number; tree: AppendOnlyTree }>;
  /** The signed checkpoint of size `size` of the tree, under the lens's origin. */
  checkpoint(size: number, tree: AppendOnlyTree): Promise<string>;
};

/**
 * The log over the blocks of `blockAt` (leaf = `logLeafHash(hash)`), as large as the honest chain
 * now is, its checkpoints signed with `seed` under the ledger log's origin followed by
 * {@link LENS_ORIGIN_SUFFIX}: one origin for every view, so checkpoints of two views of the lens
 * are two checkpoints of one log — and, where they differ, fork evidence against the lens key.
 */
function lensLog(
  read: HonestRead,
  { blockAt, seed }: { blockAt: BlockAt; seed: Uint8Array },
): LensLog {
  const tree = createAppendOnlyTree();
  // Growth is one queue: two requests at once never append the same block twice.
  let growing: Promise<unknown> = Promise.resolve();
  let origin: string | null = null;
  let signed: { size: number; note: string } | null = null;
  const grow = (size: number) => {
    const run = growing.then(async () => {
      while (tree.size < size) tree.append(logLeafHash((await blockAt(tree.size)).hash));
    });
    growing = run.catch(() => {});
    return run;
  };
  return {
    async current() {
      const status = await honestJson(read, "/api/block/status");
      const size = (status.height as number) + 1;
      await grow(size);
      return { size, tree };
    },
    async checkpoint(size, tree) {
      // The ledger's origin is stable for its whole life: read once.
      origin ??= await honestOrigin(read) + LENS_ORIGIN_SUFFIX;
      if (signed?.size !== size) {
        signed = { size, note: signCheckpoint({ origin, size, root: tree.root(size) }, seed) };
      }
      return signed.note;
    },
  };
}

/**
 * The lens's answer to `GET {lens}/log/…` over `log`, as the ledger's own log calls answer
 * (server/api/log.ts): the checkpoint, consistency and inclusion proofs, the same parameter checks
 * in the same order and the same status codes; nothing else of the log (no witnesses, no
 * cosignature: the lens never writes).
 */
async function logAnswer(c: Context, path: string, log: LensLog): Promise<Response> {
  if (path === "/api/log/checkpoint") {
    const { size, tree } = await log.current();
    c.header("Cache-Control", "no-cache");
    return textAnswer(c, await log.checkpoint(size, tree));
  }
  const consistency = CONSISTENCY.exec(path);
  if (consistency) {
    const oldSize = integerParam(consistency[1], "old");
    const newSize = integerParam(consistency[2], "new");
    if (oldSize > newSize) {
      throw invalidRequest(`old must be at most new ${newSize}, got ${oldSize}`);
    }
    const { size, tree } = await log.current();
    if (newSize > size) throw unknownTree(newSize, size);
    return textAnswer(c, lines(tree.consistencyProof(oldSize, newSize)));
  }
  const inclusion = INCLUSION.exec(path);
  if (inclusion) {
    const height = integerParam(inclusion[1], "height");
    const size = integerParam(inclusion[2], "size");
    if (height >= size) throw invalidRequest(`height must be below size ${size}, got ${height}`);
    const current = await log.current();
    if (size > current.size) throw unknownTree(size, current.size);
    return textAnswer(c, lines(current.tree.inclusionProof(height, size)));
  }
  throw refusal("not_found", "The lens serves the log's checkpoint and proofs only");
}

/** The JSON of an honest read that must succeed; a failure is the lens's own (500). */
async function honestJson(read: HonestRead, path: string): Promise<Json> {
  const res = await read(path);
  if (!res.ok) throw new Error(`The lens read ${path}: ${res.status}`);
  return await res.json();
}

/** The origin of the ledger's own log: the first line of its checkpoint. */
async function honestOrigin(read: HonestRead): Promise<string> {
  const res = await read("/api/log/checkpoint");
  if (!res.ok) throw new Error(`The lens read the log's checkpoint: ${res.status}`);
  return (await res.text()).split("\n", 1)[0];
}

/** 404 `unknown_tree`: a tree size the log has not reached. */
function unknownTree(size: number, current: number): Error {
  return refusal("unknown_tree", `No tree of size ${size}: the log's size is ${current}`);
}

/** One base64 hash per line, each ending in a newline; empty for no hashes. */
function lines(hashes: Uint8Array[]): string {
  return hashes.map((hash) => `${bytesToBase64(hash)}\n`).join("");
}

function textAnswer(c: Context, body: string): Response {
  return c.body(body, 200, { "Content-Type": LOG_CONTENT_TYPE });
}

/** The wire signature with the last hex digit of `c0` changed (still well-formed). */
function rewriteSignature(signature: string): string {
  try {
    const parsed = JSON.parse(signature);
    return JSON.stringify({ ...parsed, c0: flipHex(parsed.c0) });
  } catch {
    return `${signature} `;
  }
}

/** `hex` with its last digit changed. */
function flipHex(hex: string): string {
  return hex.slice(0, -1) + (hex.endsWith("0") ? "1" : "0");
}
