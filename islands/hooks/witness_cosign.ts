/**
 * A witnessing page's cosignatures (page §10.13): each checkpoint its watch accepted without any
 * problem is cosigned with the page's witness key and submitted, again every
 * {@link COSIGN_REFRESH_MS}; never one that a consistency proof does not join to the one it
 * cosigned last on this ledger, in any tab.
 * @module
 */
import type { ApiClient } from "../../lib/client/api_client.ts";
import type { ChainCheck } from "../../lib/client/log/chain_check.ts";
import type { HeadStorage } from "../../lib/client/log/heads.ts";
import { bytesToBase64, equalBytes } from "../../lib/protocol/bytes.ts";
import { verifyConsistency } from "../../lib/protocol/merkle_verify.ts";
import {
  COSIGNATURE_V1_TYPE,
  decodeBase64Strict,
  formatNote,
  formatVerifierKey,
  type NoteSigner,
  parseNote,
  signCosignature,
  signerKey,
} from "../../lib/protocol/note.ts";

/**
 * Browser-storage key (per ledger) of what this browser's witness cosigned last:
 * `{vkey, size, root}` (base64 root).
 */
export const WITNESS_COSIGNED_KEY = "ringvote/witness-cosigned";

/** What the witness `vkey` cosigned last in `storage`, or null. */
function lastCosigned(storage: HeadStorage, vkey: string): { size: number; root: string } | null {
  try {
    const stored = JSON.parse(storage.getItem(WITNESS_COSIGNED_KEY) ?? "null");
    return stored?.vkey === vkey && Number.isSafeInteger(stored.size) &&
        typeof stored.root === "string"
      ? { size: stored.size, root: stored.root }
      : null;
  } catch {
    return null;
  }
}

/**
 * True when the checkpoint `next` extends the one a witness cosigned `last` (the same root at the
 * same size, else the server's consistency proof verifies); otherwise why it does not.
 */
async function joinsLast(
  api: ApiClient,
  last: { size: number; root: string },
  next: { size: number; root: Uint8Array },
): Promise<true | string> {
  const lastRoot = decodeBase64Strict(last.root);
  if (next.size < last.size) return `it cosigned the larger history of ${last.size} blocks`;
  if (next.size === last.size) {
    return equalBytes(lastRoot, next.root)
      ? true
      : `it cosigned another history of ${last.size} blocks: a fork`;
  }
  try {
    const proof = (await api.consistencyProof(last.size, next.size)).map((h) =>
      decodeBase64Strict(h)
    );
    return verifyConsistency({
        oldSize: last.size,
        newSize: next.size,
        oldRoot: lastRoot,
        newRoot: next.root,
        proof,
      })
      ? true
      : `no proof joins it to the history of ${last.size} blocks it cosigned: a fork`;
  } catch (error) {
    return `the proof from the ${last.size} blocks it cosigned could not be read: ${
      (error as Error).message
    }`;
  }
}

/** A witness re-cosigns the checkpoint it cosigned last once its cosignature is this old. */
export const COSIGN_REFRESH_MS = 60_000;

/** What a witnessing page (the projector's board) did last: the size it cosigned, and when. */
export type WitnessActivity =
  | { kind: "cosigned"; size: number; at: number }
  | { kind: "refused"; size: number; reason: string };

/**
 * The cosigning step of a watch with `witness` (none: it does nothing): given each check, it
 * cosigns and submits the checkpoint accepted, `onWitness` hearing how it went, while `live()`.
 */
export function witnessCosigner(
  api: ApiClient,
  { storage, witness, live, onWitness }: {
    storage: HeadStorage;
    witness: NoteSigner | null;
    live: () => boolean;
    onWitness?: (activity: WitnessActivity) => void;
  },
): (check: ChainCheck) => Promise<void> {
  let cosigned: { size: number; root: string; at: number } | null = null;
  return async (check: ChainCheck) => {
    const checkpoint = check.log?.checkpoint;
    if (!witness || !checkpoint || check.fork || check.alerts.length > 0) return;
    const root = bytesToBase64(checkpoint.root);
    const now = Date.now();
    const same = cosigned?.size === checkpoint.size && cosigned.root === root;
    if (same && now - cosigned!.at < COSIGN_REFRESH_MS) return;
    const vkey = formatVerifierKey(signerKey(witness, COSIGNATURE_V1_TYPE));
    const refused = (reason: string) =>
      onWitness?.({ kind: "refused", size: checkpoint.size, reason });
    // What this witness cosigned last on this ledger, in any tab: it never cosigns a checkpoint
    // that a consistency proof does not join to it.
    const last = lastCosigned(storage, vkey);
    if (last !== null && !same) {
      const joined = await joinsLast(api, last, { size: checkpoint.size, root: checkpoint.root });
      if (joined !== true) return refused(joined);
    }
    const text = parseNote(checkpoint.note).text;
    const line = signCosignature(text, witness, Math.floor(now / 1000));
    const cosignature = formatNote({ text, signatures: [line] }).slice(text.length + 1, -1);
    try {
      const kept = await api.submitCosignature({ vkey, size: checkpoint.size, cosignature });
      if (!live()) return;
      storage.setItem(
        WITNESS_COSIGNED_KEY,
        JSON.stringify({ vkey, size: checkpoint.size, root }),
      );
      cosigned = { size: checkpoint.size, root, at: now };
      if (!kept.stored) {
        return refused(
          "the server verified the cosignature but did not keep it (it keeps a bounded number " +
            "of witnesses it was not told to trust)",
        );
      }
      onWitness?.({ kind: "cosigned", size: checkpoint.size, at: now });
    } catch (error) {
      refused((error as Error).message);
    }
  };
}
