// One verification thread of the pool (server/verify_pool.ts): runs every protocol §2 check with
// checkRing over its own member cache. Ring members a verification checked wait, staged under the
// request id, until the API settles the request: kept once it knows every member is registered,
// dropped otherwise, so keys nobody registered never take this thread's memory or table budget.
// A key the API has just registered is queued and admitted between verifications, in short
// slices, so its tables are usually built before its first vote.
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import {
  admitKey,
  createMemberCache,
  type MemberCacheOptions,
} from "../lib/protocol/member_cache.ts";
import { checkRing, type Member, type RingSignature } from "../lib/protocol/ring_signature.ts";
import type { WorkerReply, WorkerRequest } from "./verify_pool.ts";

/** Most requests whose members may wait to be settled; older ones are dropped beyond it. */
const MAX_PENDING = 4096;
/** Most registered keys waiting to be admitted; more are left to be tabled on first use. */
const MAX_ADMISSIONS = 100_000;
/** Longest stretch, in ms, spent admitting keys before queued verifications get their turn. */
const ADMIT_SLICE_MS = 8;

let members = createMemberCache();
const pending = new Map<number, Map<string, Member>>();
/**
 * Registered keys whose tables are still to be built, in arrival order. A timer for admitSome is
 * pending exactly while it is not empty.
 */
const admissions = new Set<string>();

/**
 * Builds tables for waiting keys in slices of at most ADMIT_SLICE_MS, yielding to the event loop
 * in between, so a burst of registrations delays a verification by one slice, not by the burst.
 */
function admitSome(): void {
  const started = performance.now();
  for (const key of admissions) {
    admissions.delete(key);
    admitKey(members, key);
    if (performance.now() - started >= ADMIT_SLICE_MS) break;
  }
  if (admissions.size > 0) setTimeout(admitSome, 0);
}

function verify(id: number, signature: RingSignature, payload: string): WorkerReply {
  const staged = new Map<string, Member>();
  const view = {
    get: (key: string) => members.get(key) ?? staged.get(key),
    set: (key: string, member: Member) => void staged.set(key, member),
  };
  try {
    const result = checkRing(signature, payload, { members: view });
    if (result.ok && staged.size > 0) {
      if (pending.size >= MAX_PENDING) pending.delete(pending.keys().next().value!);
      pending.set(id, staged);
    }
    return { id, result };
  } catch (error) {
    const { name, message } = error as Error;
    return { id, error: { name, message } };
  }
}

self.onmessage = (event: MessageEvent<WorkerRequest>) => {
  const request = event.data;
  switch (request.type) {
    case "configure":
      members = createMemberCache(request.cache satisfies MemberCacheOptions);
      break;
    case "verify":
      self.postMessage(verify(request.id, request.signature, request.payload));
      break;
    case "admit":
      if (admissions.size === 0) setTimeout(admitSome, 0);
      if (admissions.size < MAX_ADMISSIONS) admissions.add(request.key);
      break;
    case "settle": {
      const staged = pending.get(request.id);
      pending.delete(request.id);
      if (request.keep) staged?.forEach((member, key) => members.set(key, member));
      break;
    }
    case "stats":
      self.postMessage(
        {
          id: request.id,
          stats: {
            size: members.size,
            tabled: members.tabled,
            admitting: admissions.size,
            keys: [...members.keys()],
          },
        } satisfies WorkerReply,
      );
      break;
  }
};
