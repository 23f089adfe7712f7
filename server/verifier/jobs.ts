/**
 * One verifier job run on the calling thread, as a worker or the in-process verifier runs it:
 * a vote's ring verification over cached members, or a key's checks and precomputation.
 * @module
 */
import { bytesToHex, hexToBytes } from "../../lib/protocol/bytes.ts";
import {
  isPrecomputationOf,
  type KeyPrecomputation,
  memberFromPrecomputation,
  precomputeKey,
} from "../../lib/protocol/key_precomputation.ts";
import {
  checkRing,
  type Member,
  type MemberCache,
  type RingSignature,
  signRing,
} from "../../lib/protocol/ring_signature.ts";
import { keyPairFromSeed } from "../../lib/protocol/keys.ts";
import type { JobResult, VerifierJob } from "./types.ts";

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
