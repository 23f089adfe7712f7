/**
 * Browser-safe. A page's witnesses (page §10.13): the cosignatures of the policy's witnesses on
 * each checkpoint read counted, the largest one a quorum cosigned kept, and every size accepted
 * above it timed, until it waits longer than its bound and is `unwitnessed`.
 * @module
 */
import { type SignedNote, verifyCosignature } from "../../protocol/note.ts";
import { type LogMemory, type LogProblem, MAX_PENDING } from "./log_memory.ts";
import { serializePolicy, type WitnessPolicy } from "./witness_policy.ts";

/**
 * How far a cosignature's timestamp may be from this browser's clock, either way, and still count
 * (page §10.13): a witness cosigns each new checkpoint and cosigns the same one again every
 * minute, so only a witness that stopped, or a clock ten minutes wrong, falls outside it.
 */
export const COSIGNATURE_FRESH_MS = 600_000;

/** What is added to two sealing intervals to make the bound of `unwitnessed` (page §10.13). */
export const WITNESS_MARGIN_MS = 15_000;

/** The sealing interval the bound is computed from is taken as at most this (a server could lie). */
export const MAX_WITNESS_INTERVAL_MS = 60_000;

/**
 * How long a page waits for a quorum cosignature of a checkpoint it accepted before it raises
 * `unwitnessed`: two sealing intervals (at most {@link MAX_WITNESS_INTERVAL_MS} each) plus
 * {@link WITNESS_MARGIN_MS}; at most 135 s.
 */
export function unwitnessedBoundMs(sealIntervalMs: number): number {
  const interval = Math.min(Math.max(sealIntervalMs, 1_000), MAX_WITNESS_INTERVAL_MS);
  return 2 * interval + WITNESS_MARGIN_MS;
}
/** Where the page stands with its witnesses; null without a policy. */
export type WitnessView = {
  status: "witnessed" | "waiting" | "unwitnessed";
  /** The largest checkpoint size cosigned by the quorum (0 when none yet). */
  size: number;
  /** The policy's witnesses that cosigned the checkpoint just read, freshly. */
  cosigners: string[];
  quorum: number;
};

/**
 * The witness view after `read` (a checkpoint read and checked, or null when none was): its fresh
 * quorum cosignatures move `witnessed` up; each accepted size above it waits (`pending`), and the
 * oldest waiting past `boundMs` is `unwitnessed`.
 */
export function witnessView(
  memory: LogMemory,
  policy: WitnessPolicy | null,
  read: { parsed: SignedNote; note: string; size: number } | null,
  boundMs: number,
  now: number,
): { memory: LogMemory; view: WitnessView | null; problem: LogProblem | null } {
  if (policy === null) return { memory, view: null, problem: null };
  const next = { ...memory };
  // What another policy's witnesses cosigned says nothing under this one: counted afresh.
  const counted = serializePolicy(policy);
  if (next.policy !== counted) {
    Object.assign(next, { policy: counted, witnessed: null, pending: [] });
  }
  let cosigners: string[] = [];
  if (read) {
    cosigners = policy.witnesses.filter((key) => {
      try {
        const cosigned = verifyCosignature(read.parsed, key);
        return cosigned && Math.abs(cosigned.timestamp * 1000 - now) <= COSIGNATURE_FRESH_MS;
      } catch {
        return false;
      }
    }).map((key) => key.name);
    if (cosigners.length >= policy.quorum && read.size >= (next.witnessed?.size ?? 0)) {
      next.witnessed = { size: read.size, note: read.note };
    }
  }
  const witnessedSize = next.witnessed?.size ?? 0;
  const pending = next.pending.filter((p) => p.size > witnessedSize);
  if (next.size > witnessedSize && !pending.some((p) => p.size === next.size)) {
    // When full, the newest entry stands for the new size too, keeping its older time.
    if (pending.length < MAX_PENDING) pending.push({ size: next.size, at: now });
    else pending[pending.length - 1] = { ...pending[pending.length - 1], size: next.size };
  }
  next.pending = pending;
  const waitedMs = pending.length === 0 ? 0 : now - pending[0].at;
  const status = pending.length === 0
    ? "witnessed"
    : waitedMs > boundMs
    ? "unwitnessed"
    : "waiting";
  const view = { status, size: witnessedSize, cosigners, quorum: policy.quorum } as const;
  const problem: LogProblem | null = status === "unwitnessed"
    ? { kind: "unwitnessed", size: pending[0].size, waitedMs }
    : null;
  return { memory: next, view, problem };
}
