/**
 * Browser-safe. A page's whole check of the chain it is shown (protocol §4.5): the signed heads
 * against the ones remembered (heads.ts), the log's checkpoint against the one accepted and every
 * block shown proven in it (log_view.ts), and the links of blocks above the checkpoint followed
 * down to the remembered heads (head_links.ts); what may be remembered is stored.
 * @module
 */
import { hexToBytes } from "../../protocol/bytes.ts";
import { openCheckpoint } from "../../protocol/checkpoint.ts";
import { ED25519_TYPE, parseNote, verifierKey } from "../../protocol/note.ts";
import type { ForkEvidence, SignedHead } from "../../protocol/schemas.ts";
import type { ApiClient } from "../api_client.ts";
import { type AnyForkEvidence, type HeadAlert, headAlerts, logAlerts } from "./head_alerts.ts";
import { checkExtension } from "./head_links.ts";
import {
  type HeadObservation,
  type HeadStorage,
  observeHeads,
  parseSeenHeads,
  SEEN_HEADS_KEY,
  type SeenHeads,
  serializeSeenHeads,
  type ShownHead,
} from "./heads.ts";
import { parseLogMemory, SEEN_LOG_KEY } from "./log_memory.ts";
import { checkLog, type LogCheck } from "./log_view.ts";
import type { WitnessPolicy } from "./witness_policy.ts";

/** What one check of the chain a page is shown found (protocol §4.5). */
export type ChainCheck = {
  /** The shown heads' signatures and the heads remembered. */
  observed: HeadObservation;
  /** The log's check; null when the server key changed (nothing is compared then). */
  log: LogCheck | null;
  /** The first fork found, of either form. */
  fork: AnyForkEvidence | null;
  /** Every alert besides the fork, one per kind. */
  alerts: HeadAlert[];
};

/** How a page checks its chain: where it remembers, what it was shown, its witness policy. */
export type ChainCheckOptions = {
  storage: HeadStorage;
  shown?: readonly ShownHead[];
  /** The witness policy in force; none by default. */
  policy?: WitnessPolicy | null;
  /** The bound of `unwitnessed` ({@link unwitnessedBoundMs}); two minutes by default. */
  boundMs?: number;
  now?: number;
};

/**
 * A page's check of the chain it is shown (protocol §4.5): reads the log's checkpoint (and the
 * server key only on a first visit, or when the checkpoint does not verify under the key
 * remembered), checks the signatures of the `shown` heads against the remembered ones
 * ({@link observeHeads}), then the checkpoint against the remembered one and every shown head's
 * inclusion in it ({@link checkLog}). It stores what may be remembered — never after a fork or a
 * changed key, so the evidence stays reproducible and the old memory stays. From a remembered
 * size to any larger one a check costs two requests: the checkpoint and one consistency proof.
 */
export async function checkShownChain(
  api: ApiClient,
  { storage, shown = [], policy = null, boundMs = 120_000, now = Date.now() }: ChainCheckOptions,
): Promise<ChainCheck> {
  const seen = parseSeenHeads(storage.getItem(SEEN_HEADS_KEY));
  const startedFrom = storage.getItem(SEEN_LOG_KEY);
  const memory = parseLogMemory(startedFrom);
  const note = await api.checkpoint();
  let key = seen.key ?? memory.key;
  if (key === null || !signsCheckpoint(note, key)) key = (await api.serverKey()).key;
  const observed = observeHeads(seen, { key, shown });
  if (observed.keyChanged) {
    return { observed, log: null, fork: observed.fork, alerts: headAlerts(observed) };
  }
  const signedShown = shown.filter((head) => !observed.unsigned.includes(head));
  const log = await checkLog(api, { memory, key, note, shown: signedShown, policy, boundMs, now });
  const fork = observed.fork ?? log.fork ??
    await forkBelow(api, { key, seen, shown: signedShown, beyond: log.beyond });
  // Another tab of this browser may have accepted a checkpoint meanwhile: this check's view is
  // stored only over the one it started from, never over a newer one (the next check rereads).
  const unchanged = storage.getItem(SEEN_LOG_KEY) === startedFrom;
  if (!fork && unchanged) {
    storage.setItem(SEEN_HEADS_KEY, serializeSeenHeads(observed.seen));
    if (log.remember) storage.setItem(SEEN_LOG_KEY, JSON.stringify(log.memory));
  }
  return { observed, log, fork, alerts: [...headAlerts(observed), ...logAlerts(log.problems)] };
}

/**
 * The fork that the blocks shown above the checkpoint (`beyond`, among the signed `shown`) lead to:
 * their `prev_hash` links followed down to the remembered heads ({@link checkExtension}, within
 * its bounds), and every block read on the way observed against them. The log cannot prove such
 * blocks — not yet, or never, when a forked chain is shown beside an honest log — but two heads
 * signed for one height are evidence without it. Null when the links show no such pair.
 */
async function forkBelow(
  api: ApiClient,
  { key, seen, shown, beyond }: {
    key: string;
    seen: SeenHeads;
    shown: readonly ShownHead[];
    beyond: readonly { height: number; hash: string }[];
  },
): Promise<ForkEvidence | null> {
  if (beyond.length === 0 || seen.heads.length === 0) return null;
  const above = new Set(beyond.map((b) => `${b.height}:${b.hash}`));
  const heads = shown.filter((s) => above.has(`${s.height}:${s.hash}`)) as SignedHead[];
  const { blocks } = await checkExtension(api, { anchors: seen.heads, shown: heads });
  return observeHeads(seen, { key, shown: blocks }).fork;
}

/** True when `note` is a checkpoint signed by `key` (hex) under its own origin. */
function signsCheckpoint(note: string, key: string): boolean {
  try {
    const origin = parseNote(note).text.split("\n", 1)[0];
    return openCheckpoint(note, verifierKey(origin, ED25519_TYPE, hexToBytes(key, 32))) !== false;
  } catch {
    return false;
  }
}
