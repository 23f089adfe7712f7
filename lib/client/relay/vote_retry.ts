/**
 * Browser-safe. What a relayed phone does after each answer to its vote (protocol §7.4): a vote
 * refused 503 `busy` goes again after `Retry-After` plus a random delay of up to one sealing
 * interval, through the relay; a vote lost to a relay 504 (or a network error) is looked up by its
 * tag after the next seal, and the same bytes are sent again only when the tag is absent. The same
 * signed bytes every time, never a new signature: one ballot, which the tag enforces too. Sends
 * are capped; past the cap the phone shows that it is waiting. Pure: clock and random passed in.
 * @module
 */

/** Most sends of one vote, the first included. */
export const MAX_VOTE_SENDS = 5;

/** `Retry-After` assumed when a 503 `busy` carries none, seconds. */
export const DEFAULT_RETRY_AFTER_S = 5;

/** How long after the next seal tick a phone looks its tag up: 1 s, plus up to 2 s at random. */
export const TAG_CHECK_DELAY_MS = { after: 1_000, spread: 2_000 };

/** A source of numbers uniform in [0, 1), as `Math.random`. */
export type Random = () => number;

/** How a relayed vote's send ended. */
export type VoteOutcome =
  | { kind: "accepted" }
  | { kind: "busy"; retryAfterS: number }
  | { kind: "relay-timeout" }
  | { kind: "duplicate" }
  | { kind: "refused"; code: string };

/** What to do next with a vote. */
export type VoteStep =
  /** Its ballot is in: read where (the tag lookup answers its block) and its proof. */
  | { kind: "done" }
  /** Send the same bytes again, through the relay, at `at`. */
  | { kind: "resend"; at: number }
  /** Look the tag up (`GET …/tag/{tag}`, through the relay) at `at`. */
  | { kind: "check-tag"; at: number }
  /** Sent as often as allowed: the phone shows it is waiting, and sends nothing more. */
  | { kind: "waiting"; reason: string }
  /** Refused for good (a 4xx other than `duplicate_tag`). */
  | { kind: "failed"; reason: string };

/**
 * The outcome of one relayed send: `status` the inner answer's (null when the relay answered 504,
 * or the request failed or timed out), `code` its error code, `retryAfter` its header. A 503 is
 * `busy` (nothing stored); 408, 429, any other 5xx and no answer leave the vote in doubt; any other
 * 4xx but 409 `duplicate_tag` refuses it.
 */
export function classifyVoteAnswer(
  { status, code, retryAfter }: {
    status: number | null;
    code?: string;
    retryAfter?: string | null;
  },
): VoteOutcome {
  if (status === 202 || status === 200) return { kind: "accepted" };
  if (status === 503) {
    const seconds = Number(retryAfter);
    const retryAfterS = retryAfter && Number.isFinite(seconds) && seconds >= 0
      ? Math.min(seconds, 120)
      : DEFAULT_RETRY_AFTER_S;
    return { kind: "busy", retryAfterS };
  }
  if (status === 409 && code === "duplicate_tag") return { kind: "duplicate" };
  // In doubt: no answer, a relay's or a proxy's failure, a deadline, a limit on the way, or a
  // server error after which the vote may be stored. Its tag is looked up before anything else.
  if (status === null || status === 408 || status === 429 || status >= 500) {
    return { kind: "relay-timeout" };
  }
  return { kind: "refused", code: code ?? `status ${status}` };
}

/** `random()` checked to lie in [0, 1). */
function uniform(random: Random): number {
  const u = random();
  if (!(u >= 0 && u < 1)) throw new RangeError(`the random source gave ${u}, not in [0, 1)`);
  return u;
}

/** The step after `sends` sends (the last one ending in `outcome`), at `now`. */
export function nextVoteStep(
  { outcome, sends, now, nextSealAt, intervalMs }: {
    outcome: VoteOutcome;
    sends: number;
    now: number;
    /** The round's next seal tick (the state read's `open.nextSealAt`), ms since the epoch. */
    nextSealAt: number;
    intervalMs: number;
  },
  random: Random,
): VoteStep {
  switch (outcome.kind) {
    case "accepted":
      return { kind: "done" };
    case "duplicate":
      // The tag has voted: the ballot is in (an earlier send got through). Read where.
      return { kind: "check-tag", at: now };
    case "refused":
      return { kind: "failed", reason: `the server refused the vote: ${outcome.code}` };
    case "relay-timeout": {
      const seal = Math.max(nextSealAt, now);
      const at = seal + TAG_CHECK_DELAY_MS.after + uniform(random) * TAG_CHECK_DELAY_MS.spread;
      return { kind: "check-tag", at };
    }
    case "busy": {
      if (sends >= MAX_VOTE_SENDS) return waiting(sends);
      const at = now + outcome.retryAfterS * 1000 + uniform(random) * intervalMs;
      return { kind: "resend", at };
    }
  }
}

/**
 * The step after a tag lookup at `now`: `found` (the tag's vote is stored) is done; absent, the
 * same bytes again within one sealing interval, unless sent `MAX_VOTE_SENDS` times already.
 */
export function tagCheckStep(
  { found, sends, now, intervalMs }: {
    found: boolean;
    sends: number;
    now: number;
    intervalMs: number;
  },
  random: Random,
): VoteStep {
  if (found) return { kind: "done" };
  if (sends >= MAX_VOTE_SENDS) return waiting(sends);
  return { kind: "resend", at: now + (1 - uniform(random)) * intervalMs };
}

/** The waiting step after `sends` sends. */
function waiting(sends: number): VoteStep {
  return {
    kind: "waiting",
    reason: `Sent ${sends} times without an answer: waiting, and sending no other ballot.`,
  };
}
