/**
 * `POST /api/vote` (protocol §4): the rulebook of a vote (lib/protocol/check_vote.ts) over this
 * server's facts, stopping at the first broken rule — the cheap refusals first (a round outside its
 * voting phase 409, unregistered member 403, a ring not one group 400, used tag 409), then every protocol §2 check on the verifier; 202 only once the vote is
 * durably committed into the block it names, and 503 `busy` from a saturated verifier before
 * anything is stored.
 * @module
 */
import { Hono } from "hono";
import { checkVote, type VoteFinding } from "../../lib/protocol/check_vote.ts";
import { VoteSubmission } from "../../lib/protocol/schemas.ts";
import { bodyDeadline } from "./body_deadline.ts";
import { parseJson } from "./common.ts";
import { type ApiError, duplicateTag, invalidRequest, quote, refusal } from "../errors.ts";
import type { CheckedKeyRecord, Store } from "../store/mod.ts";
import type { Verifier } from "../verifier/types.ts";

/**
 * Routes under `/api/vote`, verifying on `verifier`. With `choices` (a round's, protocol §4.9), a
 * payload that is not exactly one of them is refused before any verification. A body that takes
 * longer than `bodyDeadlineMs` to arrive is refused (./body_deadline.ts).
 */
export function createVoteApp(
  store: Store,
  verifier: Verifier,
  { choices = [], bodyDeadlineMs }: { choices?: readonly string[]; bodyDeadlineMs?: number } = {},
): Hono {
  const app = new Hono();

  app.post("/", bodyDeadline(bodyDeadlineMs), async (c) => {
    const { publicKeys, signature, tag, payload } = await parseJson(c, VoteSubmission);
    const vote = { payload, signature, publicKeys };
    // Membership and the tag are read (one round trip) before any curve arithmetic: strangers in
    // the ring and replayed tags cost no verification. The commit checks the tag again, so a race
    // between two copies stays safe.
    // A gated ledger (a round, protocol §4.9) answers its phase record with the members: a vote
    // outside its voting phase is refused there, and its ring must be one of its groups.
    let tagUsed: boolean | null = null;
    let phase: unknown = undefined;
    const gate = store.gate();
    const { findings } = await checkVote(vote, {
      choices,
      tag,
      members: async (keys) => {
        const inputs = await store.voteInputs([...keys], tag);
        tagUsed = inputs.tagUsed;
        phase = inputs.gate;
        const refused = gate?.admitVote(phase);
        if (refused) throw refused;
        return inputs.members;
      },
      ...(gate?.isGroup
        ? {
          group: (members: readonly CheckedKeyRecord[]) =>
            gate.isGroup!(phase, members.map((member) => member.id)),
        }
        : {}),
      tagUse: async (used) =>
        (used === tag && tagUsed !== null ? tagUsed : await store.isTagUsed(used))
          ? { height: null }
          : null,
      verify: (decoded, { members }) =>
        verifier.verify(decoded, payload, (members ?? []).map((record) => record?.pre ?? null)),
      stopAtFirst: true,
    });
    if (findings.length > 0) throw refusalOf(findings[0]);
    const accepted = await store.submitVote(vote, tag);
    return c.json(accepted, 202);
  });

  return app;
}

/** The answer to a vote that breaks a rule: its status, code and message (protocol §4.3). */
function refusalOf(finding: VoteFinding): ApiError {
  switch (finding.kind) {
    case "payload-too-long":
      return refusal(
        "payload_too_large",
        `Payload has ${finding.length} characters, more than ${finding.max}`,
      );
    case "not-a-choice":
      return notAChoice(finding.payload, finding.choices);
    case "malformed-signature":
      return refusal("invalid_signature", `Signature is malformed: ${finding.reason}`);
    case "ring-mismatch":
      return invalidRequest("publicKeys must equal signature.ring, in the same order");
    case "tag-mismatch":
      return invalidRequest(`tag "${quote(finding.tag)}" must equal signature.I`);
    case "unregistered-member":
      return refusal(
        "unregistered_key",
        `Ring member "${quote(finding.key)}" is not in the key directory`,
      );
    case "not-a-group":
      return refusal(
        "not_a_group",
        "The ring is not one of this round's groups: sign over your whole group, in id order " +
          "(GET groups)",
      );
    case "duplicate-tag":
      return duplicateTag(finding.tag);
    case "invalid-signature":
      return refusal("invalid_signature", `Signature does not verify: ${finding.reason}`);
  }
}

/** 400 `not_a_choice`: `payload` is none of the round's `choices`, listed in the body. */
function notAChoice(payload: string, choices: readonly string[]): ApiError {
  return refusal(
    "not_a_choice",
    `Payload "${quote(payload)}" is not one of this round's choices: ${
      choices.map((choice) => `"${quote(choice)}"`).join(", ")
    }`,
    { extra: { choices: [...choices] } },
  );
}
