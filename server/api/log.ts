/**
 * The log calls of a ledger (protocol §4.10): `GET /log/checkpoint`, the current checkpoint as a
 * C2SP signed note by the ledger's head-signing key under the origin's name, and
 * `GET /log/consistency/{old}/{new}` and `GET /log/inclusion/{height}/{size}`, RFC 9162 proofs as
 * one base64 hash per line. Every answer is `text/plain; charset=utf-8`; refusals are JSON.
 * @module
 */
import { type Context, Hono } from "hono";
import { bytesToBase64 } from "../../lib/protocol/bytes.ts";
import { signCheckpoint } from "../../lib/protocol/checkpoint.ts";
import type { NoteSignature } from "../../lib/protocol/note.ts";
import { integerParam } from "./common.ts";
import { invalidRequest, refusal } from "../errors.ts";
import type { BlockLog } from "../store/block_log.ts";

/** The content type of every log answer. */
export const LOG_CONTENT_TYPE = "text/plain; charset=utf-8";

/** Who signs the checkpoints: the log's origin (its key name) and the ledger's key seed. */
export type CheckpointSigner = { origin: string; seed: Uint8Array };

/** Routes under a ledger's base for its log. */
export function createLogApp(log: BlockLog, signer: CheckpointSigner): Hono {
  const app = new Hono();
  // Ed25519 is deterministic and a size has one root: the latest note is signed once per size.
  let latest: { size: number; note: string } | null = null;

  app.get("/log/checkpoint", async (c) => {
    const tree = await log.current();
    const size = tree.size;
    if (latest?.size !== size) {
      const checkpoint = { origin: signer.origin, size, root: tree.root(size) };
      // Witness cosignatures (tlog-cosignature), when the ledger has them, are appended here.
      const cosignatures: NoteSignature[] = [];
      latest = { size, note: signCheckpoint(checkpoint, signer.seed, { cosignatures }) };
    }
    c.header("Cache-Control", "no-cache");
    return text(c, latest.note);
  });

  app.get("/log/consistency/:old/:new", async (c) => {
    const oldSize = integerParam(c.req.param("old"), "old");
    const newSize = integerParam(c.req.param("new"), "new");
    if (oldSize > newSize) {
      throw invalidRequest(`old must be at most new ${newSize}, got ${oldSize}`);
    }
    const tree = await log.current();
    if (newSize > tree.size) throw unknownTree(newSize, tree.size);
    return text(c, lines(tree.consistencyProof(oldSize, newSize)));
  });

  app.get("/log/inclusion/:height/:size", async (c) => {
    const height = integerParam(c.req.param("height"), "height");
    const size = integerParam(c.req.param("size"), "size");
    if (height >= size) throw invalidRequest(`height must be below size ${size}, got ${height}`);
    const tree = await log.current();
    if (size > tree.size) throw unknownTree(size, tree.size);
    return text(c, lines(tree.inclusionProof(height, size)));
  });

  return app;
}

/** 404 `unknown_tree`: a tree size the log has not reached. */
function unknownTree(size: number, current: number): Error {
  return refusal("unknown_tree", `No tree of size ${size}: the log's size is ${current}`);
}

/** One base64 hash per line, each ending in a newline; empty for no hashes. */
function lines(hashes: Uint8Array[]): string {
  return hashes.map((hash) => `${bytesToBase64(hash)}\n`).join("");
}

function text(c: Context, body: string): Response {
  return c.body(body, 200, { "Content-Type": LOG_CONTENT_TYPE });
}
