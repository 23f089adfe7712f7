/**
 * Browser-safe. The one rulebook of a vote (protocol §4.3, §2.7): whether a vote may stand, asked
 * by the server before it stores one and by the audit of every vote stored. Each broken rule is a
 * typed finding; the facts a rule needs beside the vote (the key directory, the tags used, the
 * verifier) are passed in, so the same rules run over KV and verifier threads or over what an
 * audit read.
 * @module
 */
import { bytesToHex } from "./bytes.ts";
import type { RingCheck, RingSignature } from "./ring_signature.ts";
import { sameRing } from "./same_ring.ts";
import { codePointLength, MAX_PAYLOAD_CODE_POINTS, type VoteRecord } from "./schemas.ts";
import { decodeSignature } from "./signature_wire.ts";

/** A value now, or once a promise settles. */
export type Awaitable<T> = T | Promise<T>;

/** A rule of protocol §4.3 that a vote breaks, in the order the rules are checked. */
export type VoteFinding =
  /** More than {@link MAX_PAYLOAD_CODE_POINTS} code points (413 `payload_too_large`). */
  | { kind: "payload-too-long"; length: number; max: number }
  /** Not one of a round's choices (protocol §4.9; 400 `not_a_choice`). */
  | { kind: "not-a-choice"; payload: string; choices: readonly string[] }
  /** Not the one wire form of a signature (§2.9; 400 `invalid_signature`). */
  | { kind: "malformed-signature"; reason: string }
  /** `publicKeys` are not the signature's ring, in its order (400 `invalid_request`). */
  | { kind: "ring-mismatch" }
  /** The submission's `tag` is not the signature's `I` (400 `invalid_request`). */
  | { kind: "tag-mismatch"; tag: string }
  /** A ring member that is not in the key directory (403 `unregistered_key`). */
  | { kind: "unregistered-member"; key: string }
  /** A round vote's ring that is not exactly one of the round's groups (§2.8; 400 `not_a_group`). */
  | { kind: "not-a-group" }
  /** The tag voted before; at `height` when known (409 `duplicate_tag`). */
  | { kind: "duplicate-tag"; tag: string; height: number | null }
  /** A verifier check of §2.7 fails (400 `invalid_signature`); `reason` says which. */
  | { kind: "invalid-signature"; reason: string };

/** One kind of {@link VoteFinding}. */
export type VoteFindingKind = VoteFinding["kind"];

/**
 * The facts the rules need beside the vote. A fact not given is a rule not checked here: the
 * audit, for one, verifies signatures on its workers before it asks, and a round's choices are
 * known to its server only.
 */
export type VoteFacts<M> = {
  /** The round's choices (protocol §4.9); none or empty: any payload. */
  choices?: readonly string[];
  /** The `tag` a submission names beside its signature (protocol §4.3). */
  tag?: string;
  /** Each key's directory record, in order, null for a key not registered. */
  members?: (keys: readonly string[]) => Awaitable<readonly (M | null)[]>;
  /**
   * Whether the ring's directory records, in ring order, are exactly one group of the round
   * (protocol §2.8); asked only when `members` found every key. Absent: any ring (round 1).
   */
  group?: (members: readonly M[]) => Awaitable<boolean>;
  /** Where `tag` voted before: `{height}` (null when not known) if it did, null if not. */
  tagUse?: (tag: string) => Awaitable<{ height: number | null } | null>;
  /** Every check of §2.7 over the ring's records, when `members` gave them; null otherwise. */
  verify?: (
    signature: RingSignature,
    check: { payload: string; members: readonly (M | null)[] | null },
  ) => Awaitable<RingCheck>;
  /** Stops at the first broken rule, as the server's intake does; otherwise finds them all. */
  stopAtFirst?: boolean;
};

/** What the rules found: every broken rule in rule order, the signature and its tag (hex). */
export type VoteCheck = {
  findings: VoteFinding[];
  /** The decoded signature; null when it is malformed. */
  signature: RingSignature | null;
  /** The signature's tag `I`, hex; null when the signature is malformed. */
  tag: string | null;
};

/**
 * Checks `vote` against every rule of protocol §4.3 in its order: the payload's length, the round's
 * choices, the signature's wire form, the ring and the tag named beside it, the ring's membership
 * in the directory, a round's group rule, the tag's earlier use, then every verifier check of §2.7. A malformed signature
 * ends the check (nothing after it can be read). Rejects only when a fact does (a saturated
 * verifier, an unreadable store).
 */
export async function checkVote<M>(vote: VoteRecord, facts: VoteFacts<M> = {}): Promise<VoteCheck> {
  const findings: VoteFinding[] = [];
  let signature: RingSignature | null = null;
  let tag: string | null = null;
  /** Records `finding`; true when the check ends there (the server's mode). */
  const broke = (finding: VoteFinding) => {
    findings.push(finding);
    return facts.stopAtFirst === true;
  };
  const answer = () => ({ findings, signature, tag });
  const { payload, publicKeys } = vote;
  const length = codePointLength(payload);
  if (length > MAX_PAYLOAD_CODE_POINTS) {
    if (broke({ kind: "payload-too-long", length, max: MAX_PAYLOAD_CODE_POINTS })) return answer();
  }
  const choices = facts.choices ?? [];
  if (choices.length > 0 && !choices.includes(payload)) {
    if (broke({ kind: "not-a-choice", payload, choices })) return answer();
  }
  try {
    signature = decodeSignature(vote.signature);
  } catch (error) {
    broke({ kind: "malformed-signature", reason: (error as Error).message });
    return answer();
  }
  tag = bytesToHex(signature.tag);
  if (!sameRing(publicKeys, signature.ring.map(bytesToHex))) {
    if (broke({ kind: "ring-mismatch" })) return answer();
  }
  if (facts.tag !== undefined && facts.tag !== tag) {
    if (broke({ kind: "tag-mismatch", tag: facts.tag })) return answer();
  }
  let members: readonly (M | null)[] | null = null;
  if (facts.members) {
    members = await facts.members(publicKeys);
    for (const [i, key] of publicKeys.entries()) {
      if (members[i] === null && broke({ kind: "unregistered-member", key })) return answer();
    }
    if (facts.group && members.every((member) => member !== null)) {
      const isGroup = await facts.group(members as readonly M[]);
      if (!isGroup && broke({ kind: "not-a-group" })) return answer();
    }
  }
  const used = facts.tagUse ? await facts.tagUse(tag) : null;
  if (used !== null && broke({ kind: "duplicate-tag", tag, height: used.height })) return answer();
  if (facts.verify) {
    const verdict = await facts.verify(signature, { payload, members });
    if (!verdict.ok) broke({ kind: "invalid-signature", reason: verdict.reason });
  }
  return answer();
}
