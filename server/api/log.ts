/**
 * The log calls of a ledger (protocol §4.10): `GET /log/checkpoint`, the current checkpoint as a
 * C2SP signed note by the ledger's head-signing key under the origin's name, followed by every
 * witness cosignature kept for that very checkpoint; `GET /log/consistency/{old}/{new}` and
 * `GET /log/inclusion/{height}/{size}`, RFC 9162 proofs as one base64 hash per line (all three
 * `text/plain; charset=utf-8`); `POST /log/cosignature`, which keeps a witness's cosignature once
 * it verifies; `GET /log/witnesses`, what pushing to each witness of `WITNESS_POLICY` came to (the
 * kind and status of a problem; its reason stays in the server's log); and the presenter's
 * `POST /log/witnesses/pin`, which pins the room's witness. Refusals are JSON.
 * @module
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { bytesToBase64, bytesToHex, equalBytes } from "../../lib/protocol/bytes.ts";
import { formatCheckpoint } from "../../lib/protocol/checkpoint.ts";
import {
  COSIGNATURE_V1_TYPE,
  formatNote,
  formatVerifierKey,
  MAX_NOTE_SIGNATURES,
  type NoteSignature,
  parseNote,
  parseVerifierKey,
  signNote,
  type VerifierKey,
} from "../../lib/protocol/note.ts";
import {
  type CosignatureAccepted,
  CosignatureSubmission,
  type WitnessList,
  WitnessPin,
  type WitnessPins,
  type WitnessProblem,
  type WitnessProblemShown,
} from "../../lib/protocol/schemas.ts";
import { NO_STORE, sealedText } from "./caching.ts";
import { integerParam, parseJson } from "./common.ts";
import { invalidRequest, quote, refusal } from "../errors.ts";
import type { BlockLog } from "../store/block_log.ts";
import type { CosignatureStore, StoredCosignature } from "../store/cosignatures.ts";
import type { PolicyWitness } from "../witness_policy.ts";

/** The content type of every log answer. */
export const LOG_CONTENT_TYPE = "text/plain; charset=utf-8";

/** Who signs the checkpoints: the log's origin (its key name) and the ledger's key seed. */
export type CheckpointSigner = { origin: string; seed: Uint8Array };

/** What the log calls keep and show of the ledger's witnesses. */
export type LogWitnessOptions = {
  /** The ledger's kept cosignatures and push records. */
  cosignatures: CosignatureStore;
  /** The witnesses of `WITNESS_POLICY` this ledger pushes to; none by default. */
  witnesses?: readonly PolicyWitness[];
  /** Milliseconds since the epoch, for a cosignature's timestamp; `Date.now` by default. */
  now?: () => number;
  /**
   * The presenter's check (Bearer admin token); with it, `POST /log/witnesses/pin` is served,
   * without it that call is 404.
   */
  presenter?: MiddlewareHandler;
  /**
   * Where the room's pinned witnesses are kept, shared by every ledger of the room (the
   * election's store); this ledger's own `cosignatures` by default.
   */
  room?: CosignatureStore;
};

/** Routes under a ledger's base for its log. */
export function createLogApp(
  log: BlockLog,
  signer: CheckpointSigner,
  { cosignatures, witnesses = [], now = Date.now, presenter, room = cosignatures }:
    LogWitnessOptions,
): Hono {
  const app = new Hono();
  // Ed25519 is deterministic and a size has one root: the log's line is signed once per size.
  let latest: { size: number; root: Uint8Array; text: string; line: NoteSignature } | null = null;
  // Policy witnesses' cosignatures are never dropped for a stranger's (store/cosignatures.ts), nor
  // those of the witnesses the presenter pinned (kept in `room`; this store reads its own).
  const policyPins = witnesses.map((w) => formatVerifierKey(w.key));
  const pinned = async () =>
    new Set(room === cosignatures ? policyPins : [...policyPins, ...await room.pins()]);

  app.get("/log/checkpoint", async (c) => {
    const tree = await log.current();
    const size = tree.size;
    if (latest?.size !== size) {
      const root = tree.root(size);
      const text = formatCheckpoint({ origin: signer.origin, size, root });
      latest = {
        size,
        root,
        text,
        line: signNote(text, { name: signer.origin, seed: signer.seed }),
      };
    }
    const { root, text, line } = latest;
    const lines = await cosignatures.linesFor(size, root);
    // The log's head, and the witnesses' cosignatures arrive after it: never stored.
    c.header("Cache-Control", NO_STORE);
    return textAnswer(c, formatNote({ text, signatures: [line, ...lines] }));
  });

  // The newest checkpoint the witnesses caught up with: a page whose newest checkpoint is not yet
  // cosigned (the log grew a moment ago) learns how far its witnesses vouch (page §10.13).
  app.get("/log/cosigned", async (c) => {
    const wanted = c.req.query("min");
    const min = wanted === undefined ? 1 : integerParam(wanted, "min");
    if (min < 1 || min > MAX_NOTE_SIGNATURES - 1) {
      throw invalidRequest(`min must be from 1 to ${MAX_NOTE_SIGNATURES - 1}, got ${min}`);
    }
    // `key` (repeatable) counts only those witnesses' cosignatures: a witness's whole vkey, or 8
    // hex digits of a key ID, which a stranger's key can be made to share (about 2^32 tries).
    const keys = (c.req.queries("key") ?? []).map(wantedKey);
    if (keys.length > 16 || keys.includes(null)) {
      throw invalidRequest(
        "key must be at most 16 cosignature/v1 vkeys, or key IDs of 8 lowercase hex digits",
      );
    }
    const matches = (kept: StoredCosignature) =>
      keys.length === 0 || keys.some((k) => k === kept.vkey || k === bytesToHex(kept.line.keyId));
    const tree = await log.current();
    const bySize = new Map<number, number>();
    for (const kept of await cosignatures.all()) {
      if (!matches(kept)) continue;
      if (kept.size > tree.size || !equalBytes(kept.root, tree.root(kept.size))) continue;
      bySize.set(kept.size, (bySize.get(kept.size) ?? 0) + 1);
    }
    const sizes = [...bySize].filter(([, n]) => n >= min).map(([size]) => size);
    if (sizes.length === 0) {
      throw refusal("not_found", `No checkpoint of this log carries ${min} cosignature(s) yet`);
    }
    const size = Math.max(...sizes);
    const root = tree.root(size);
    const text = formatCheckpoint({ origin: signer.origin, size, root });
    const line = signNote(text, { name: signer.origin, seed: signer.seed });
    const lines = await cosignatures.linesFor(size, root);
    c.header("Cache-Control", "no-cache");
    return textAnswer(c, formatNote({ text, signatures: [line, ...lines] }));
  });

  app.get("/log/consistency/:old/:new", async (c) => {
    const oldSize = integerParam(c.req.param("old"), "old");
    const newSize = integerParam(c.req.param("new"), "new");
    if (oldSize > newSize) {
      throw invalidRequest(`old must be at most new ${newSize}, got ${oldSize}`);
    }
    const tree = await log.current();
    if (newSize > tree.size) throw unknownTree(newSize, tree.size);
    return sealedText(c, lines(tree.consistencyProof(oldSize, newSize)));
  });

  app.get("/log/inclusion/:height/:size", async (c) => {
    const height = integerParam(c.req.param("height"), "height");
    const size = integerParam(c.req.param("size"), "size");
    if (height >= size) throw invalidRequest(`height must be below size ${size}, got ${height}`);
    const tree = await log.current();
    if (size > tree.size) throw unknownTree(size, tree.size);
    return sealedText(c, lines(tree.inclusionProof(height, size)));
  });

  // Anyone may submit: a cosignature counts only for a reader who trusts its key.
  app.post("/log/cosignature", async (c) => {
    const body = await parseJson(c, CosignatureSubmission);
    const key = witnessKey(body.vkey);
    const line = signatureLine(body.cosignature);
    const tree = await log.current();
    if (body.size > tree.size) throw unknownTree(body.size, tree.size);
    const root = tree.root(body.size);
    const text = formatCheckpoint({ origin: signer.origin, size: body.size, root });
    const kept = await cosignatures.keep(
      { text, size: body.size, root },
      { line, key, now: now(), pinned: await pinned() },
    );
    if (kept.kind !== "kept") {
      throw refusal("bad_cosignature", capitalized(kept.reason));
    }
    const answer: CosignatureAccepted = {
      size: body.size,
      timestamp: kept.timestamp,
      stored: kept.stored,
    };
    return c.json(answer, 200);
  });

  // The presenter pins the room's witness (the projector's, whose key the QR code names), so that
  // strangers' cosignatures never crowd it out of the kept ones.
  if (presenter) {
    app.post("/log/witnesses/pin", presenter, async (c) => {
      const body = await parseJson(c, WitnessPin);
      const vkey = formatVerifierKey(witnessKey(body.vkey));
      const answer: WitnessPins = { pinned: await room.pin(vkey) };
      return c.json(answer, 200);
    });
  }

  app.get("/log/witnesses", async (c) => {
    const kept = new Map((await cosignatures.all()).map((k) => [k.vkey, k]));
    const answer: WitnessList = { witnesses: [], pinned: presenter ? await room.pins() : [] };
    for (const { name, key } of witnesses) {
      const vkey = formatVerifierKey(key);
      const record = await cosignatures.pushRecord(vkey);
      const cosignature = kept.get(vkey);
      answer.witnesses.push({
        name,
        vkey,
        lastSize: record?.size ?? cosignature?.size ?? null,
        lastCosignedAt: cosignature ? cosignature.timestamp * 1000 : null,
        alarm: shown(record?.alarm ?? null),
        error: shown(record?.error ?? null),
      });
    }
    c.header("Cache-Control", "no-cache");
    return c.json(answer, 200);
  });

  return app;
}

/**
 * A `key` of `GET /log/cosigned` as matched: the canonical text of a cosignature/v1 vkey, or 8
 * lowercase hex digits of a key ID; null for anything else.
 */
function wantedKey(value: string): string | null {
  if (/^[0-9a-f]{8}$/.test(value)) return value;
  try {
    const key = parseVerifierKey(value);
    return key.type === COSIGNATURE_V1_TYPE ? formatVerifierKey(key) : null;
  } catch {
    return null;
  }
}

/** The cosignature/v1 key of `vkey`, or 400 `invalid_request` saying why it is not one. */
function witnessKey(vkey: string): VerifierKey {
  let key: VerifierKey;
  try {
    key = parseVerifierKey(vkey);
  } catch (error) {
    throw invalidRequest(`vkey "${quote(vkey)}" is not a vkey: ${(error as Error).message}`);
  }
  if (key.type !== COSIGNATURE_V1_TYPE) {
    throw invalidRequest(`vkey "${quote(vkey)}" is not a cosignature/v1 (type 0x04) key`);
  }
  return key;
}

/** The signature line `— <name> <base64>`, or 400 `invalid_request` saying why it is not one. */
function signatureLine(text: string): NoteSignature {
  try {
    // A note of one placeholder line and this one signature line: parseNote's checks, no more.
    return parseNote(`-\n\n${text}\n`).signatures[0];
  } catch (error) {
    throw invalidRequest(`cosignature is not a signature line: ${(error as Error).message}`);
  }
}

/** What the public is told of a witness problem: its kind and status, never the reason. */
function shown(problem: WitnessProblem | null): WitnessProblemShown | null {
  return problem === null ? null : { kind: problem.kind, status: problem.status };
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
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
