// `POST /api/vote` (protocol §4): validates the submission, verifies the ring signature with every
// check of protocol §2, checks the ring against the key directory, and answers 202 only once the
// vote is durably committed into the block it names.
import { Hono } from "hono";
import { bytesToHex } from "../lib/protocol/bytes.ts";
import { createMemberCache } from "../lib/protocol/member_cache.ts";
import { sameRing } from "../lib/protocol/same_ring.ts";
import {
  checkRing,
  decodeSignature,
  type Member,
  type MemberCache,
  type RingCheck,
  type RingSignature,
} from "../lib/protocol/ring_signature.ts";
import {
  codePointLength,
  MAX_PAYLOAD_CODE_POINTS,
  VoteSubmission,
} from "../lib/protocol/schemas.ts";
import { parseJson } from "./api_common.ts";
import { invalidRequest, quote, refusal } from "./errors.ts";
import type { Store } from "./store.ts";

/**
 * Where a verification records the ring members it checked. The API settles it once per request:
 * kept only after every ring member is known to be registered, dropped otherwise, so unregistered
 * keys (free for anyone to make) never take a cache's memory or its table budget. A verifier
 * holding members elsewhere (a worker thread) registers its own `onSettle` callback.
 */
export type MemberStaging = MemberCache & { onSettle(settle: (keep: boolean) => void): void };

/**
 * Verifies a decoded signature over `payload`, reading and filling `members` (checked ring
 * members, staged until the API settles them); async so it can move off the request thread.
 */
export type VerifyVote = (
  signature: RingSignature,
  payload: string,
  members?: MemberStaging,
) => Promise<RingCheck>;

/** The verifier the API uses by default: every protocol §2 check, on this thread. */
export function verifyVote(
  signature: RingSignature,
  payload: string,
  members?: MemberCache,
): Promise<RingCheck> {
  return Promise.resolve(checkRing(signature, payload, { members }));
}

/**
 * A view of `members` whose new entries wait in a staging area until the request is settled:
 * `settle(true)` moves them into `members` and `settle(false)` forgets them; callbacks registered
 * with `onSettle` hear the same answer.
 */
function stagedMembers(members: MemberCache): MemberStaging & { settle(keep: boolean): void } {
  const staged = new Map<string, Member>();
  const listeners: ((keep: boolean) => void)[] = [];
  let settled = false;
  return {
    get: (key) => members.get(key) ?? staged.get(key),
    set: (key, member) => void staged.set(key, member),
    onSettle: (settle) => void listeners.push(settle),
    settle(keep) {
      if (settled) return;
      settled = true;
      if (keep) staged.forEach((member, key) => members.set(key, member));
      staged.clear();
      for (const listener of listeners) listener(keep);
    },
  };
}

/** Routes under `/api/vote`; `members` remembers checked registered keys across requests. */
export function createVoteApp(
  store: Store,
  verify: VerifyVote = verifyVote,
  members: MemberCache = createMemberCache(),
): Hono {
  const app = new Hono();

  app.post("/", async (c) => {
    const submission = await parseJson(c, VoteSubmission);
    const { publicKeys, signature, tag, payload } = submission;
    const length = codePointLength(payload);
    if (length > MAX_PAYLOAD_CODE_POINTS) {
      throw refusal(
        "payload_too_large",
        `Payload has ${length} characters, more than ${MAX_PAYLOAD_CODE_POINTS}`,
      );
    }
    let decoded: RingSignature;
    try {
      decoded = decodeSignature(signature);
    } catch (error) {
      throw refusal("invalid_signature", `Signature is malformed: ${(error as Error).message}`);
    }
    const ring = decoded.ring.map(bytesToHex);
    if (!sameRing(publicKeys, ring)) {
      throw invalidRequest("publicKeys must equal signature.ring, in the same order");
    }
    if (bytesToHex(decoded.tag) !== tag) {
      throw invalidRequest(`tag "${quote(tag)}" must equal signature.I`);
    }
    const staged = stagedMembers(members);
    let registered = false;
    try {
      const check = await verify(decoded, payload, staged);
      if (!check.ok) {
        throw refusal("invalid_signature", `Signature does not verify: ${check.reason}`);
      }
      const missing = await store.unregisteredKeys(publicKeys);
      if (missing.length > 0) {
        throw refusal(
          "unregistered_key",
          `Ring member "${quote(missing[0])}" is not in the key directory`,
        );
      }
      registered = true;
    } finally {
      staged.settle(registered);
    }
    const accepted = await store.submitVote({ payload, signature, publicKeys }, tag);
    return c.json(accepted, 202);
  });

  return app;
}
