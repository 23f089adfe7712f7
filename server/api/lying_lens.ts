/**
 * The attack lab's lying-server lens: `GET {base}/lens/{lie}/…` answers the honest read of
 * `{base}/…` with one lie told (lib/client/lab/lies.ts). It only reads, and signs every head it serves
 * with the lens key, never the server key (protocol §4.7).
 * @module
 */
import { Hono } from "hono";
import { isLensView, type LensView } from "../../lib/client/lab/lies.ts";
import { blockHash } from "../../lib/protocol/chain.ts";
import type { BlockRecord as Block } from "../../lib/protocol/schemas.ts";
import { quote, refusal } from "../errors.ts";
import { type HeadSigner, withHeadSignature } from "../head_signer.ts";

/** Reads an honest API path of the ledger (e.g. `/api/lab/blocks?from=0`) from its own routes. */
export type HonestRead = (path: string) => Promise<Response>;

/** Options of {@link createLensApp}: the prefix the ledger's API is served under. */
export type LensOptions = { base?: string };

// deno-lint-ignore no-explicit-any
type Json = any;
/** The forked twin of the honest block at `height` with `hash`. */
type Fork = (head: { height: number; hash: string }) => Promise<Block>;

const PROOF = /^\/api\/block\/id\/\d+\/vote\/[^/]+$/;
const TAG = /^\/api\/tag\/[^/]+$/;
const HASH = /^\/api\/block\/hash\/id\/\d+$/;

/** How far the forked history moves each block's close time: one second. */
const FORK_SHIFT_MS = 1000;

/**
 * Routes under `{base}/lens` (`base` is `/api` by default): `GET /{lie}/{path}` mirrors
 * `GET {base}/{path}` with the lie told and every head signed by `signer`, the lens key, which
 * `GET /{lie}/server-key` answers. Inside, paths are named as under `/api` whatever the base.
 *
 * It only ever reads — it calls the honest routes of the one ledger served under `base` (the
 * practice ledger's `/api/lab` for the lab) and rewrites their JSON — so it never writes to the
 * ledger, and requests outside the prefix are untouched. A lie the lab shows is provable under the
 * lens key only, so nobody can obtain from the lens fork evidence against an honest server, and a
 * server that really forks cannot blame it.
 */
export function createLensApp(
  read: HonestRead,
  signer: HeadSigner,
  { base = "/api" }: LensOptions = {},
): Hono {
  const app = new Hono();
  const readAt: HonestRead = (path) => read(base + path.slice("/api".length));
  const fork = forkedHistory(readAt, signer);

  app.get("/:lie/*", async (c) => {
    const lie = c.req.param("lie");
    if (!isLensView(lie)) throw refusal("unknown_lie", `No lie "${quote(lie)}"`);
    const url = new URL(c.req.url);
    const path = `/api/${url.pathname.slice(`${base}/lens/${lie}/`.length)}`;
    if (path.startsWith("/api/lens/")) throw refusal("not_found", "A lens of a lens");
    // The log's checkpoints are signed by the ledger's own key: the lens never passes them on.
    if (path.startsWith("/api/log/")) throw refusal("not_found", "The lens does not serve the log");
    if (path === "/api/server-key") return c.json({ key: signer.key });
    const honest = await readAt(path + url.search);
    if (!(honest.headers.get("content-type") ?? "").startsWith("application/json")) return honest;
    const body: Json = await honest.json();
    if (!honest.ok) return c.json(body, honest.status as 404);
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
    fork: Fork;
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
async function forkAnswer(path: string, body: Json, fork: Fork): Promise<Json> {
  if (PROOF.test(path)) return { ...body, block: await fork(body.block) };
  if (path === "/api/blocks") {
    const blocks = [];
    for (const block of body.blocks) blocks.push(await fork(block));
    return { ...body, blocks };
  }
  if (path === "/api/block/status" || HASH.test(path)) {
    const { hash, timestamp, head_signature } = await fork(body);
    const forked = "timestamp" in body ? { ...body, hash, timestamp } : { ...body, hash };
    return "head_signature" in body ? { ...forked, head_signature } : forked;
  }
  return body;
}

/**
 * The forked history: from height 1 on, every block closed one second later than the honest one,
 * linked to its forked predecessor, its hash recomputed and its head signed with the lens key. Each
 * block and its links check out; only a head remembered from the honest chain tells them apart.
 */
function forkedHistory(read: HonestRead, signer: HeadSigner): Fork {
  // Sealed blocks never change, so both histories are remembered by height.
  const honest = new Map<number, Block>();
  const forked = new Map<number, Block>();

  async function honestAt(height: number): Promise<Block> {
    if (!honest.has(height)) {
      const res = await read(`/api/blocks?from=${height}&limit=100`);
      const { blocks } = await res.json() as { blocks: Block[] };
      for (const block of blocks) honest.set(block.height, block);
    }
    const block = honest.get(height);
    if (!block) throw refusal("unknown_block", `No sealed block at height ${height}`);
    return block;
  }

  return async function fork({ height }) {
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
