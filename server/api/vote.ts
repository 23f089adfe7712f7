/**
 * `POST /api/vote` (protocol §4): the cheap refusals first (unregistered member 403, used tag 409),
 * then every protocol §2 check on the verifier; 202 only once the vote is durably committed into
 * the block it names, and 503 `busy` from a saturated verifier before anything is stored.
 * @module
 */
import { Hono } from "hono";
import { bytesToHex } from "../../lib/protocol/bytes.ts";
import { type RingSignature } from "../../lib/protocol/ring_signature.ts";
import { decodeSignature } from "../../lib/protocol/signature_wire.ts";
import { sameRing } from "../../lib/protocol/same_ring.ts";
import {
  codePointLength,
  MAX_PAYLOAD_CODE_POINTS,
  VoteSubmission,
} from "../../lib/protocol/schemas.ts";
import { parseJson } from "./common.ts";
import { duplicateTag, invalidRequest, quote, refusal } from "../errors.ts";
import type { Store } from "../store/mod.ts";
import type { Verifier } from "../verifier/types.ts";

/**
 * Routes under `/api/vote`, verifying on `verifier`. With `choices` (a round's, protocol §4.9), a
 * payload that is not exactly one of them is refused before any verification.
 */
export function createVoteApp(
  store: Store,
  verifier: Verifier,
  { choices = [] }: { choices?: readonly string[] } = {},
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
    if (choices.length > 0 && !choices.includes(payload)) throw notAChoice(payload, choices);
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
    // Two reads before any curve arithmetic: strangers in the ring and replayed tags cost no
    // verification. The commit checks the tag again, so a race between two copies stays safe.
    const records = await store.lookupKeys(publicKeys);
    const missing = records.findIndex((record) => record === null);
    if (missing >= 0) {
      throw refusal(
        "unregistered_key",
        `Ring member "${quote(publicKeys[missing])}" is not in the key directory`,
      );
    }
    if (await store.isTagUsed(tag)) throw duplicateTag(tag);
    const members = records.map((record) => record?.pre ?? null);
    const check = await verifier.verify(decoded, payload, members);
    if (!check.ok) {
      throw refusal("invalid_signature", `Signature does not verify: ${check.reason}`);
    }
    const accepted = await store.submitVote({ payload, signature, publicKeys }, tag);
    return c.json(accepted, 202);
  });

  return app;
}

/** 400 `not_a_choice`: `payload` is none of the round's `choices`, listed in the body. */
function notAChoice(payload: string, choices: readonly string[]): Error {
  return refusal(
    "not_a_choice",
    `Payload "${quote(payload)}" is not one of this round's choices: ${
      choices.map((choice) => `"${quote(choice)}"`).join(", ")
    }`,
    { extra: { choices: [...choices] } },
  );
}
