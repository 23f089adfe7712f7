/**
 * Browser-safe. The check of a fork-evidence file (protocol §4.5, §4.10), shared by the command
 * line and the board: either form — two signed heads, or two checkpoints no consistency proof
 * joins — and its key compared with the server key the checker trusts.
 * @module
 */
import { checkForkEvidence } from "../../protocol/head.ts";
import {
  checkLogForkEvidence,
  LOG_FORK_EVIDENCE_KIND,
  type LogForkEvidence,
  logForkEvidence,
} from "../../protocol/log_evidence.ts";
import { ApiCallError } from "../api_client.ts";
import { hexToBytes } from "../../protocol/bytes.ts";
import { openCheckpoint } from "../../protocol/checkpoint.ts";
import { ED25519_TYPE, parseNote, verifierKey } from "../../protocol/note.ts";
import type { JsonBounds } from "../bounded_json.ts";

/**
 * What a fork-evidence file may be before it is parsed (../bounded_json.ts): two notes of at most
 * 20,000 characters and a proof of at most 128 hashes fit in 100,000 characters; the heads' form
 * nests three levels (the file, `heads`, a head).
 */
export const EVIDENCE_BOUNDS: JsonBounds = { maxChars: 100_000, maxDepth: 3 };

/**
 * What a proven fork shows: two heads at one `height` (`heads`), or two checkpoints of log
 * `origin` at `sizes` with two roots at one size (`same-size`) or whose enclosed consistency
 * proof fails (`failed-proof`).
 */
export type ProvenFork =
  | { form: "heads"; height: number }
  | { form: "same-size" | "failed-proof"; origin: string; sizes: [number, number] };

/**
 * The verdict on a fork-evidence file: `fork` when it proves one by its key, with whether that key
 * is `trustedKey` (null when the checker trusts none); `no-fork` with the reason.
 */
export type EvidenceVerdict =
  | ProvenFork & { kind: "fork"; key: string; keyMatches: boolean | null }
  | { kind: "no-fork"; reason: string }
  | { kind: "unsettled"; origin: string; sizes: [number, number]; key: string; reason: string };

/**
 * Checks `evidence` (parsed JSON) by its `kind`: checkpoint evidence with
 * {@link checkLogForkEvidence}, anything else as two signed heads with {@link checkForkEvidence};
 * then compares its key with the server key the checker trusts, so the command line and the
 * board say the same. Never throws.
 */
export function checkEvidence(evidence: unknown, trustedKey: string | null): EvidenceVerdict {
  const kind = (evidence as { kind?: unknown } | null)?.kind;
  let proven: ProvenFork;
  if (kind === LOG_FORK_EVIDENCE_KIND) {
    const check = checkLogForkEvidence(evidence);
    if (!check.ok) return { kind: "no-fork", reason: check.reason };
    proven = { form: check.form, origin: check.origin, sizes: check.sizes };
  } else {
    const check = checkForkEvidence(evidence);
    if (!check.ok) return { kind: "no-fork", reason: check.reason };
    proven = { form: "heads", height: check.height };
  }
  const { key } = evidence as { key: string };
  const keyMatches = trustedKey === null ? null : key === trustedKey.toLowerCase();
  return { ...proven, kind: "fork", key, keyMatches };
}

/** What settling asks of the server: its log's checkpoint and a consistency proof. */
export type EvidenceServer = {
  checkpoint(): Promise<string>;
  consistencyProof(oldSize: number, newSize: number): Promise<string[]>;
};

/**
 * Settles the `failed-proof` form by the server's own answer. A consistency proof carries no
 * signature, so anyone can pair two honest checkpoints with a proof that fails: the enclosed proof
 * alone proves nothing. The server asked must be the one that signed them: its checkpoint must open
 * under the evidence's key and origin, at least as large as the larger one. Then the fork is proven
 * when its proof between the two sizes fails too, or when it refuses that proof (4xx but 408 and
 * 429: it signed both checkpoints and cannot join them), and refuted when its proof joins them.
 * Without a server, or without a usable answer, the verdict is `unsettled`. Other verdicts are
 * answered as they are. Never throws.
 */
export async function settleEvidence(
  verdict: EvidenceVerdict,
  evidence: unknown,
  server: EvidenceServer | null,
): Promise<EvidenceVerdict> {
  if (verdict.kind !== "fork" || verdict.form !== "failed-proof") return verdict;
  const { origin, sizes, key } = verdict;
  const [small, large] = sizes[0] < sizes[1] ? sizes : [sizes[1], sizes[0]];
  const unsettled = (reason: string): EvidenceVerdict => ({
    kind: "unsettled",
    origin,
    sizes,
    key,
    reason,
  });
  if (server === null) {
    return unsettled(
      `the proof in the file fails, but a proof carries no signature: only the server's own ` +
        `consistency proof from ${small} to ${large} can settle it (give the server's URL)`,
    );
  }
  try {
    const current = await server.checkpoint();
    const name = parseNote(current).text.split("\n", 1)[0];
    const opened = openCheckpoint(current, verifierKey(name, ED25519_TYPE, hexToBytes(key, 32)));
    if (!opened || opened.origin !== origin) {
      return unsettled(`the server asked is not the log ${origin} signed by ${key}`);
    }
    if (opened.size < large) {
      return unsettled(
        `the server asked holds ${opened.size} blocks, fewer than the ${large} it signed: ask ` +
          "the server that signed them",
      );
    }
  } catch (error) {
    return unsettled(`the server's checkpoint could not be read: ${(error as Error).message}`);
  }
  let proof: string[];
  try {
    proof = await server.consistencyProof(small, large);
  } catch (error) {
    const refused = error instanceof ApiCallError && error.status >= 400 && error.status < 500 &&
      error.status !== 408 && error.status !== 429;
    if (!refused) return unsettled(`the server could not be asked: ${(error as Error).message}`);
    return verdict; // it signed both checkpoints and will not prove one extends the other
  }
  const { checkpoints } = evidence as LogForkEvidence;
  const served = checkLogForkEvidence(logForkEvidence(key, checkpoints, proof));
  if (served.ok) return verdict; // the server's own proof fails too
  return {
    kind: "no-fork",
    reason: `the server's own consistency proof from ${small} to ${large} joins the checkpoints`,
  };
}
