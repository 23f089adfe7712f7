/**
 * The phases of a round (protocol §4.9): keys join, then voting opens, then the next round closes
 * it. Each is one KV entry per round, its phase record, that every registration and vote commit of
 * the round checks (its {@link LedgerGate}); voting opens in one commit that checks the round's key
 * counter and writes `keysAtOpen`, so no key is "before" the opening in one process and "after" it
 * in another. The election (round 1) has a phase record too, written once, when a later round
 * closes it.
 * @module
 */
import { ringIsGroup, roundGroups } from "../../lib/protocol/groups.ts";
import type * as wire from "../../lib/protocol/schemas.ts";
import { ROUND_MIN_VOTERS } from "../../lib/protocol/schemas.ts";
import { refusal } from "../errors.ts";
import { type KeyCountRecord, ledgerKeys } from "./layout.ts";
import { backoff, MAX_ATTEMPTS, readRetrying, tryCommit } from "./kv_calls.ts";
import type { LedgerGate } from "./votes.ts";

/** First part of every key of the rounds' own records; no ledger key starts with it. */
export const ROUNDS_PREFIX = "rounds";
/** First part of the keys of every round's ledger but the first: ["round", id, …]. */
export const ROUND_LEDGER_PREFIX = "round";

/** The KV prefix of round `id`'s ledger; round 1 is the election's, with no prefix. */
export function roundPrefix(id: number): Deno.KvKey {
  return id === 1 ? [] : [ROUND_LEDGER_PREFIX, id];
}

/**
 * A round as stored: what `POST /api/rounds` was given, its interval and when it started. A
 * record stored before rounds had phases lacks `minVoters`: such a round votes from its start,
 * in any ring, as it did then ({@link isLegacy}).
 */
export type RoundRecord = {
  id: number;
  question: string;
  choices: string[];
  createdAt: number;
  blockIntervalMs: number;
  minVoters?: number;
  joinSeconds?: number;
  lateJoiners?: boolean;
  /** A carded round's card set (protocol §2.11); none for a round open to any key. */
  cards?: RoundCardSet;
};

/** A round's card set as its record keeps it: id, hash (hex, the genesis `prev_hash`), count. */
export type RoundCardSet = { set: string; sha256: string; count: number };

/**
 * The value under {@link phaseKey}: still joining past a join deadline that found too few keys
 * (voting then opens by the presenter only), voting open since `openedAt` with `keysAtOpen` keys,
 * or closed by round `closedBy` (keeping what the opening fixed, null when it closed while
 * joining). No entry: the round is joining (round 1: voting).
 */
export type PhaseRecord =
  | { phase: "join"; keysAtOpen: null; openedAt: null }
  | { phase: "voting"; keysAtOpen: number; openedAt: number }
  | { phase: "closed"; keysAtOpen: number | null; openedAt: number | null; closedBy: number };

/**
 * Where round `id`'s phase record is: beside its round record, so that the one listing of the
 * rounds reads both.
 */
export function phaseKey(id: number): Deno.KvKey {
  return [ROUNDS_PREFIX, "round", id, "phase"];
}

/** True for a round started before rounds had phases: voting from its start, without groups. */
export const isLegacy = (record: RoundRecord) => record.minVoters === undefined;

/** The fewest keys that open voting in `record`'s round. */
export const minVotersOf = (record: RoundRecord) => record.minVoters ?? ROUND_MIN_VOTERS.fallback;

/** When voting opens by itself in `record`'s round, ms since the epoch; null: the presenter's. */
export function joinDeadline(record: RoundRecord): number | null {
  return record.joinSeconds === undefined ? null : record.createdAt + record.joinSeconds * 1000;
}

/** 409 `round_closed`: round `id` was closed by round `current`. */
export function roundClosed(id: number, current: number): Error {
  return refusal(
    "round_closed",
    `Round ${id} is over and takes no more keys or votes: the current round is ${current}`,
    { extra: { current } },
  );
}

/** 409 `voting_not_open`: round `id` is still in its join phase. */
function votingNotOpen(id: number): Error {
  return refusal(
    "voting_not_open",
    `Voting in round ${id} has not opened yet: keys are still joining`,
  );
}

/** 409 `too_few_voters`: `joined` keys, fewer than `minVoters`. */
function tooFewVoters(joined: number, minVoters: number): Error {
  const needed = minVoters - joined;
  return refusal(
    "too_few_voters",
    `Voting opens with at least ${minVoters} keys: ${joined} joined, ${needed} more needed`,
    { extra: { needed, joined, minVoters } },
  );
}

/** The phase record of round `id` as read, or null (joining; for round 1, voting). */
export async function readPhase(kv: Deno.Kv, id: number): Promise<PhaseRecord | null> {
  return (await readRetrying(() => kv.get<PhaseRecord>(phaseKey(id)))).value;
}

/**
 * Opens voting in `record`'s round, in one commit that checks the phase record and the round's
 * key counter and writes `keysAtOpen` = the counter. Idempotent: an open round answers its record.
 * With fewer than `minVoters` keys, the presenter's call (`manual`) is refused 409
 * `too_few_voters`; the join deadline's (not `manual`) writes that the deadline found too few,
 * so that voting never opens by itself later, once the count is reached. Answers the phase record
 * now stored (null: none); a closed round is refused 409 `round_closed`.
 */
export async function openVoting(
  kv: Deno.Kv,
  record: RoundRecord,
  { now, manual }: { now: () => number; manual: boolean },
): Promise<PhaseRecord | null> {
  const counter = ledgerKeys(roundPrefix(record.id)).keyCount();
  for (let attempt = 0;; attempt++) {
    const [phase, count] = await readRetrying(() =>
      kv.getMany<[PhaseRecord, KeyCountRecord]>([phaseKey(record.id), counter])
    );
    const stored = phase.value as PhaseRecord | null;
    if (stored?.phase === "closed") throw roundClosed(record.id, stored.closedBy);
    if (stored?.phase === "voting") return stored;
    // Past the deadline once: the presenter alone opens voting from now on.
    if (stored?.phase === "join" && !manual) return stored;
    const joined = (count.value as KeyCountRecord | null)?.total ?? 0;
    const few = joined < minVotersOf(record);
    if (few && manual) throw tooFewVoters(joined, minVotersOf(record));
    const opened: PhaseRecord = few
      ? { phase: "join", keysAtOpen: null, openedAt: null }
      : { phase: "voting", keysAtOpen: joined, openedAt: now() };
    // A commit that failed or threw may have landed: the next read answers what did.
    const res = await tryCommit(
      kv.atomic().check(phase).check(count).set(phaseKey(record.id), opened),
    );
    if (res?.ok) return opened;
    if (attempt >= MAX_ATTEMPTS) throw new Error("Opening voting kept conflicting");
    await backoff(attempt);
  }
}

/**
 * The phase record of `record`'s round, read; once its join deadline has passed while it is still
 * joining, voting is first opened there if enough keys joined, so that every process reading the
 * phase after the deadline sees one opening.
 */
export async function currentPhase(
  kv: Deno.Kv,
  record: RoundRecord,
  now: () => number,
): Promise<PhaseRecord | null> {
  const phase = await readPhase(kv, record.id);
  const deadline = joinDeadline(record);
  if (phase !== null || deadline === null || now() < deadline) return phase;
  try {
    return await openVoting(kv, record, { now, manual: false });
  } catch {
    // Closed meanwhile: what is stored now says so.
    return await readPhase(kv, record.id);
  }
}

/**
 * The gate of `record`'s round (2 and up): keys join until it closes (opening voting first once
 * the join deadline has passed), votes are taken while voting only, and a vote's ring must be one
 * group of the partition its phase record fixes.
 */
export function roundGate(kv: Deno.Kv, record: RoundRecord, now: () => number): LedgerGate {
  const rule = { minVoters: minVotersOf(record), lateJoiners: record.lateJoiners ?? false };
  const deadline = joinDeadline(record);
  return {
    key: phaseKey(record.id),
    async admitKey(value) {
      const phase = value as PhaseRecord | null;
      if (phase?.phase === "closed") return roundClosed(record.id, phase.closedBy);
      if (phase !== null || deadline === null || now() < deadline) return null;
      // The first key past the deadline settles the deadline's opening before it commits.
      try {
        await openVoting(kv, record, { now, manual: false });
        return "again";
      } catch (error) {
        return error as Error;
      }
    },
    admitVote(value) {
      const phase = value as PhaseRecord | null;
      if (phase === null && isLegacy(record)) return null;
      if (phase === null || phase.phase === "join") return votingNotOpen(record.id);
      if (phase.phase === "closed") return roundClosed(record.id, phase.closedBy);
      return null;
    },
    isGroup(value, ids) {
      if (isLegacy(record)) return true;
      const keysAtOpen = (value as PhaseRecord | null)?.keysAtOpen ?? null;
      return keysAtOpen !== null && ringIsGroup(ids, { keysAtOpen, ...rule });
    },
  };
}

/** The election's gate: it takes keys and votes until a later round closes it. */
export function electionGate(): LedgerGate {
  const admit = (value: unknown) => {
    const phase = value as PhaseRecord | null;
    return phase?.phase === "closed" ? roundClosed(1, phase.closedBy) : null;
  };
  return {
    key: phaseKey(1),
    admitKey: (value) => Promise.resolve(admit(value)),
    admitVote: admit,
  };
}

/** The closed record written for the round `closing` when round `next` starts. */
export function closedPhase(closing: PhaseRecord | null, next: number): PhaseRecord {
  return {
    phase: "closed",
    keysAtOpen: closing?.keysAtOpen ?? null,
    openedAt: closing?.openedAt ?? null,
    closedBy: next,
  };
}

/** A round's phase as listed: joining until its phase record says otherwise. */
export function phaseName(phase: PhaseRecord | null): wire.RoundPhase {
  return phase?.phase ?? "join";
}

/** The answer of `GET /api/rounds/{id}/groups` for `record`'s round with `total` keys. */
export function groupsOf(
  record: RoundRecord,
  phase: PhaseRecord | null,
  total: number,
): wire.RoundGroups {
  const keysAtOpen = phase?.keysAtOpen ?? null;
  if (keysAtOpen === null) return { phase: phaseName(phase), keysAtOpen, groups: [], pending: [] };
  const rule = { minVoters: minVotersOf(record), lateJoiners: record.lateJoiners ?? false };
  return { phase: phaseName(phase), keysAtOpen, ...roundGroups({ keysAtOpen, total, ...rule }) };
}

/** `record` as `GET /api/rounds` lists it, in `phase`. */
export function roundInfo(record: RoundRecord, phase: PhaseRecord | null): wire.RoundInfo {
  return {
    id: record.id,
    question: record.question,
    choices: record.choices,
    createdAt: record.createdAt,
    blockIntervalMs: record.blockIntervalMs,
    phase: phase === null && isLegacy(record) ? "voting" : phaseName(phase),
    minVoters: minVotersOf(record),
    lateJoiners: record.lateJoiners ?? false,
    openedAt: phase?.openedAt ?? null,
    joinDeadline: joinDeadline(record),
    relayed: false,
    ...(record.cards ? { cards: record.cards.set } : {}),
  };
}
