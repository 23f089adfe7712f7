/**
 * Browser-safe. The check of a fork-evidence file (protocol §4.5), shared by the command line and
 * the board: the proof itself, and its key compared with the server key the checker trusts.
 * @module
 */
import { checkForkEvidence } from "../../protocol/head.ts";

/**
 * The verdict on a fork-evidence file (protocol §4.5): `fork` when it proves one by its key, with
 * whether that key is `trustedKey` (null when the checker trusts none); `no-fork` with the reason.
 */
export type EvidenceVerdict =
  | { kind: "fork"; height: number; key: string; keyMatches: boolean | null }
  | { kind: "no-fork"; reason: string };

/**
 * Checks `evidence` (parsed JSON) with {@link checkForkEvidence} and compares its key with the
 * server key the checker trusts, so the command line and the board say the same. Never throws.
 */
export function checkEvidence(evidence: unknown, trustedKey: string | null): EvidenceVerdict {
  const check = checkForkEvidence(evidence);
  if (!check.ok) return { kind: "no-fork", reason: check.reason };
  const { key } = evidence as { key: string };
  const keyMatches = trustedKey === null ? null : key === trustedKey.toLowerCase();
  return { kind: "fork", height: check.height, key, keyMatches };
}
