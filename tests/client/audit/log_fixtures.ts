// The log in the audit's tests: a transport whose checkpoint answers (text, which
// tests/helpers/tampering_proxy.ts leaves alone) are rewritten, the checkpoint a liar holding the
// server's seed would sign over the chain it serves, and a witness that cosigns the checkpoint a
// server serves through `POST {base}/log/cosignature`.
import assert from "node:assert/strict";
import type { Transport } from "../../../lib/client/api_client.ts";
import { derivedOrigin, logLeafHash } from "../../../lib/protocol/block_log.ts";
import { parseCheckpoint, signCheckpoint } from "../../../lib/protocol/checkpoint.ts";
import { serverPublicKey } from "../../../lib/protocol/head.ts";
import { merkleRoot } from "../../../lib/protocol/merkle.ts";
import {
  COSIGNATURE_V1_TYPE,
  formatNote,
  formatVerifierKey,
  type NoteSignature,
  parseNote,
  signCosignature,
  signerKey,
  type VerifierKey,
} from "../../../lib/protocol/note.ts";
import { call } from "../../helpers/ledger_fixtures.ts";

/**
 * `transport` with each answer of `GET …/log/checkpoint` replaced by `rewrite(note)`: the served
 * note, or null to answer 404 `not_found` as a server without a log would.
 */
export function checkpointTransport(
  transport: Transport,
  rewrite: (note: string) => string | null,
): Transport {
  return async (url, init) => {
    const res = await transport(url, init);
    if (!new URL(url, "http://localhost").pathname.endsWith("/log/checkpoint")) return res;
    const note = rewrite(await res.text());
    if (note === null) {
      const error = { code: "not_found", message: "No log here" };
      return Response.json({ error }, { status: 404 });
    }
    return new Response(note, { headers: { "content-type": "text/plain; charset=utf-8" } });
  };
}

/** The checkpoint `seed` signs over `hashes` (block hashes, genesis first), under its own origin. */
export function checkpointOver(seed: Uint8Array, hashes: readonly string[]): string {
  return signCheckpoint({
    origin: derivedOrigin(serverPublicKey(seed)),
    size: hashes.length,
    root: merkleRoot(hashes.map(logLeafHash)),
  }, seed);
}

/** A witness: its key name and seed, its cosignature/v1 key and that key's vkey text. */
export type TestWitness = { name: string; seed: Uint8Array; key: VerifierKey; vkey: string };

/** A fresh witness named `name`. */
export function makeWitness(name: string): TestWitness {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const key = signerKey({ name, seed }, COSIGNATURE_V1_TYPE);
  return { name, seed, key, vkey: formatVerifierKey(key) };
}

/** `witness`'s cosignature/v1 line over the checkpoint of `note`, made at `timestamp` (seconds). */
export function cosignatureLine(
  witness: TestWitness,
  note: string,
  timestamp = Math.floor(Date.now() / 1000),
): NoteSignature {
  return signCosignature(parseNote(note).text, witness, timestamp);
}

/** `line` as a signature line's text, `— <name> <base64>`, without its newline. */
export function signatureLineText(line: NoteSignature): string {
  return formatNote({ text: "-\n", signatures: [line] }).trimEnd().split("\n").at(-1)!;
}

/**
 * Has `witness` cosign the checkpoint the ledger at `target` (an app or a base URL; `base` its API
 * prefix) serves now, as a witness would: it reads the checkpoint and posts its line to
 * `POST {base}/log/cosignature`. Answers the note it cosigned and the timestamp (seconds).
 */
export async function cosignServed(
  target: Parameters<typeof call>[0],
  witness: TestWitness,
  base = "/api",
): Promise<{ note: string; timestamp: number }> {
  const note = (await call(target, "GET", `${base}/log/checkpoint`)).body as string;
  const timestamp = Math.floor(Date.now() / 1000);
  const { size } = parseCheckpoint(parseNote(note).text);
  const cosignature = signatureLineText(cosignatureLine(witness, note, timestamp));
  const answer = await call(target, "POST", `${base}/log/cosignature`, {
    vkey: witness.vkey,
    size,
    cosignature,
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return { note, timestamp };
}
