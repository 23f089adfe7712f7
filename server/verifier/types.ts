/**
 * What both verifiers share: the jobs and what they answer, the {@link Verifier} the API calls,
 * the messages between the pool and its workers, and the queue bound with its 503 `busy`.
 * @module
 */
import type { KeyPrecomputation } from "../../lib/protocol/key_precomputation.ts";
import type { RingCheck, RingSignature } from "../../lib/protocol/ring_signature.ts";
import { busy } from "../errors.ts";

/**
 * Work for a verifier. `verify` carries the stored precomputation of each ring member, in ring
 * order (null for a key stored without one: it is checked from its bytes); `precompute` a key
 * to register.
 */
export type VerifierJob =
  | {
    type: "verify";
    signature: RingSignature;
    payload: string;
    members: (KeyPrecomputation | null)[];
  }
  | { type: "precompute"; key: string };

/** What each kind of job answers. */
export type JobResult<J extends VerifierJob> = J extends { type: "verify" } ? RingCheck
  : KeyPrecomputation | string;

/** Verification as the API sees it, whichever thread does the work. */
export type Verifier = {
  /** Every protocol §2 check of `signature` over `payload`; see checkRing for what throws. */
  verify(
    signature: RingSignature,
    payload: string,
    members?: (KeyPrecomputation | null)[],
  ): Promise<RingCheck>;
  /** A key's registration checks and precomputation, or the reason it is refused. */
  precompute(key: string): Promise<KeyPrecomputation | string>;
  /** Decoded members held now, and the most the budget allows, over every thread. */
  memberStats(): Promise<MemberStats>;
  /**
   * Settles once every verifying thread has compiled its code (warmUp in ./jobs.ts): a server
   * starts answering after it, so no request waits for a cold thread. At once in-process.
   */
  readonly ready: Promise<void>;
  /** Jobs accepted and not yet answered. */
  readonly queued: number;
  close(): void;
};

/** How many decoded members a verifier holds, and how many its budget allows. */
export type MemberStats = { held: number; capacity: number };

/** Options shared by both verifiers. */
export type VerifierOptions = {
  /** Most jobs accepted and not yet answered; more are refused with 503 `busy`. */
  maxQueued?: number;
  /** Bytes of decoded members kept for the whole process (lib/protocol/member_cache.ts). */
  memberBudgetBytes?: number;
};

/**
 * Default bound of the queue: a few hundred requests wait at most about a second on two cores,
 * so a client is told to come back rather than left waiting longer.
 */
export const DEFAULT_MAX_QUEUED = 256;

/** Seconds a caller refused with 503 `busy` is asked to wait (`Retry-After`). */
export const BUSY_RETRY_AFTER_SECONDS = 1;

/** The 503 `busy` every verifier answers once `maxQueued` jobs wait, or a job cannot be run. */
export function verifierBusy(): Error {
  return busy(BUSY_RETRY_AFTER_SECONDS);
}

/** Messages to a verification worker. */
export type WorkerRequest =
  | { type: "configure"; memberBudgetBytes: number }
  | { type: "job"; id: number; job: VerifierJob }
  | { type: "stats"; id: number };

/** Messages from a verification worker, answering the job with the same id. */
export type WorkerReply =
  | { id: number; result: RingCheck | KeyPrecomputation | string }
  | { id: number; error: { name: string; message: string } }
  | { id: number; stats: MemberStats }
  | { ready: true };
