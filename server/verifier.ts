// The verifier the API uses for its two expensive computations: a vote's ring verification and a
// new key's checks and precomputation (lib/protocol/key_precomputation.ts). Two implementations
// share one interface: a pool of worker threads (server/verify_pool.ts), and, where there is no
// `Worker` global (an edge runtime), this thread, in short slices between event-loop turns so
// that other requests are answered in between. Both hold at most `maxQueued` jobs: beyond that
// they refuse with 503 `busy` before anything is stored (protocol §4), and both keep decoded
// members in one least-recently-used cache whose byte budget is the whole process's.
import { bytesToHex, hexToBytes } from "../lib/protocol/bytes.ts";
import {
  isPrecomputationOf,
  type KeyPrecomputation,
  memberFromPrecomputation,
  precomputeKey,
} from "../lib/protocol/key_precomputation.ts";
import { createMemberCache, DEFAULT_MEMBER_BUDGET } from "../lib/protocol/member_cache.ts";
import {
  checkRing,
  type Member,
  type MemberCache,
  type RingCheck,
  type RingSignature,
  signRing,
} from "../lib/protocol/ring_signature.ts";
import { keyPairFromSeed } from "../lib/protocol/keys.ts";
import { busy } from "./errors.ts";
import { nextTurn } from "./event_loop.ts";

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

/**
 * The pool of worker threads where the runtime has `Worker` (one per core), else this thread's
 * verifier: the choice main.ts makes, so an edge runtime without workers still verifies.
 */
export async function createVerifier(opts: VerifierOptions = {}): Promise<Verifier> {
  if (typeof globalThis.Worker !== "function") return createInProcessVerifier(opts);
  const { createVerifyPool } = await import("./verify_pool.ts");
  return createVerifyPool(opts);
}

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
   * Settles once every verifying thread has compiled its code (see {@link warmUp}): a server
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

/**
 * Members of a verification: those the cache holds, else decoded from their precomputation (and
 * remembered), else left to checkRing's own checks. Keyed by hex public key.
 */
function knownMembers(
  cache: MemberCache,
  { signature, members }: { signature: RingSignature; members: (KeyPrecomputation | null)[] },
): MemberCache {
  const known = new Map<string, Member>();
  signature.ring.forEach((bytes, i) => {
    const stored = members[i];
    if (!stored || !(bytes instanceof Uint8Array) || bytes.length !== 32) return;
    if (!isPrecomputationOf(stored, bytes)) return;
    const hex = bytesToHex(bytes);
    let member = cache.get(hex);
    if (!member) {
      member = memberFromPrecomputation(stored);
      cache.set?.(hex, member);
    }
    known.set(hex, member);
  });
  return known;
}

/** Runs one job on this thread over `cache`; throws what checkRing or the key decoder throws. */
export function runJob<J extends VerifierJob>(job: J, cache: MemberCache): JobResult<J> {
  if (job.type === "verify") {
    const members = knownMembers(cache, job);
    return checkRing(job.signature, job.payload, { members }) as JobResult<J>;
  }
  let bytes: Uint8Array;
  try {
    bytes = hexToBytes(job.key, 32, "key");
  } catch (error) {
    return `key is not 32 bytes of lowercase hex: ${(error as Error).message}` as JobResult<J>;
  }
  return precomputeKey(bytes) as JobResult<J>;
}

/**
 * Runs both kinds of job on a fixed ring of 8 until V8 has compiled their code, so the first
 * votes after a start are as fast as later ones (a cold thread verifies its first few dozen votes
 * about a third slower). About 0.3 s. Returns false unless the thread accepts its own signature
 * every time and refuses it with one response changed: only a broken build does either.
 */
export function warmUp(rounds = 30): boolean {
  const seeds = Array.from({ length: 8 }, (_, i) => new Uint8Array(32).fill(i + 1));
  const keys = seeds.map((seed) => keyPairFromSeed(seed).publicKey);
  const members = keys.map((key) => runJob({ type: "precompute", key: bytesToHex(key) }, noCache));
  const message = "warm-up";
  const signature = signRing({ ring: keys, seed: seeds[0], message });
  const job = {
    type: "verify" as const,
    signature,
    payload: message,
    members: members.map((m) => (typeof m === "string" ? null : m)),
  };
  let ok = true;
  for (let i = 0; i < rounds; i++) ok &&= runJob(job, noCache).ok;
  const altered = signature.r.map((r) => r.slice());
  altered[3][0] ^= 1;
  return ok && !runJob({ ...job, signature: { ...signature, r: altered } }, noCache).ok;
}

const noCache: MemberCache = { get: () => undefined };

/** Longest stretch of in-process jobs between two event-loop turns, in ms (plus one job). */
const SLICE_MS = 20;

/**
 * The verifier for runtimes without workers: jobs run on this thread in arrival order, in slices
 * of SLICE_MS between event-loop turns, so a status request waits at most a slice and one job (a
 * ring-8 verification takes a few ms).
 */
export function createInProcessVerifier(opts: VerifierOptions = {}): Verifier {
  const maxQueued = opts.maxQueued ?? DEFAULT_MAX_QUEUED;
  const cache = createMemberCache({ budgetBytes: opts.memberBudgetBytes ?? DEFAULT_MEMBER_BUDGET });
  const jobs: { run(): void; reject(error: Error): void }[] = [];
  let running = false;
  let closed = false;

  async function drain(): Promise<void> {
    running = true;
    while (jobs.length > 0) {
      // A timer turn costs up to 4 ms once timers nest (the HTML timer clamp), so jobs run in
      // slices of SLICE_MS rather than one per turn.
      await nextTurn();
      const started = performance.now();
      while (jobs.length > 0 && performance.now() - started < SLICE_MS) jobs.shift()!.run();
    }
    running = false;
  }

  function submit<J extends VerifierJob>(job: J): Promise<JobResult<J>> {
    if (closed) return Promise.reject(new Error("The verifier is closed"));
    if (jobs.length >= maxQueued) return Promise.reject(verifierBusy());
    const answer = new Promise<JobResult<J>>((resolve, reject) => {
      jobs.push({
        run() {
          try {
            resolve(runJob(job, cache));
          } catch (error) {
            reject(error);
          }
        },
        reject,
      });
    });
    if (!running) drain();
    return answer;
  }

  return {
    verify: (signature, payload, members = []) =>
      submit({ type: "verify", signature, payload, members }),
    precompute: (key) => submit({ type: "precompute", key }),
    memberStats: () => Promise.resolve({ held: cache.size, capacity: cache.capacity }),
    ready: Promise.resolve(),
    get queued() {
      return jobs.length;
    },
    close() {
      closed = true;
      for (const job of jobs.splice(0)) job.reject(new Error("The verifier is closed"));
    },
  };
}
