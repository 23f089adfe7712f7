// Browser-safe. Every wire shape of the HTTP API (protocol §4), requests and answers, as zod/mini
// schemas: the server validates with them at the edge and the page validates before it submits.
import * as z from "zod/mini";
import { HEX32_PATTERN } from "./bytes.ts";
import { CardAdmissionWire, CardSetId } from "./card_schemas.ts";

/** Largest vote payload, in Unicode code points (protocol §4). */
export const MAX_PAYLOAD_CODE_POINTS = 1000;
/** Largest request body the server parses, in bytes (protocol §4). */
export const MAX_BODY_BYTES = 64 * 1024;
/** Largest `limit` of any paged read (protocol §4). */
export const MAX_PAGE_LIMIT = 100;

/** Number of Unicode code points of `text`, the unit of the payload limit. */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** 32 bytes as 64 lowercase hex characters: public keys, tags, scalars, hashes. */
export const Hex32 = z.string().check(
  z.regex(HEX32_PATTERN, "must be 64 lowercase hex characters"),
);
/** 64 bytes as 128 lowercase hex characters: Ed25519 signatures. */
export const Hex64 = z.string().check(
  z.regex(/^[0-9a-f]{128}$/, "must be 128 lowercase hex characters"),
);
/** A vote id: 16 random bytes, base64url without padding. */
export const VoteId = z.string().check(
  z.regex(/^[A-Za-z0-9_-]{22}$/, "must be 22 base64url characters"),
);
export const Count = z.int().check(z.gte(0, "must be a non-negative integer"));
export const Id = z.int().check(z.gte(1, "must be a positive integer"));

/** Body of `POST /api/pki/key`; `name` is a placeholder the server does not keep. */
export const KeyRegistration = z.object({
  key: Hex32,
  name: z.optional(z.string().check(z.maxLength(200, "must be at most 200 characters"))),
  /** A carded round's admission (protocol §2.11); refused in a round without cards. */
  card: z.optional(CardAdmissionWire),
});
/** Answer of `POST /api/pki/key` (201) and `GET /api/pki/key/id/{id}`. */
export const KeyRecord = z.object({
  id: Id,
  key: Hex32,
  total: Count,
  card: z.optional(CardAdmissionWire),
});
/** Answer of `GET /api/pki/key/offset/{o}/limit/{l}`. */
export const KeyPage = z.object({
  keys: z.array(z.object({ id: Id, key: Hex32, card: z.optional(CardAdmissionWire) })),
  total: Count,
});

/** The wire form of a ring signature, once `JSON.parse`d (protocol §2). */
export const SignatureWire = z.object({
  c0: Hex32,
  r: z.array(Hex32),
  I: Hex32,
  ring: z.array(Hex32),
});
/** A vote as stored and proven: `publicKeys` in ring order as submitted (protocol §3–§4). */
export const VoteRecord = z.object({
  payload: z.string(),
  signature: z.string(),
  publicKeys: z.array(Hex32),
});
/**
 * A vote payload as submitted: well-formed Unicode, since UTF-8 would turn a lone surrogate into
 * U+FFFD and one signature would cover several payload strings (protocol §4).
 */
export const Payload = z.string().check(
  z.refine((text) => text.isWellFormed(), "must be well-formed Unicode (no lone surrogates)"),
);
/**
 * Body of `POST /api/vote`. The payload limit is checked separately
 * (`MAX_PAYLOAD_CODE_POINTS`) because it has its own status, 413.
 */
export const VoteSubmission = z.object({
  // Ring size (2..64) is a verifier rule (protocol §2): refused as invalid_signature, not here.
  publicKeys: z.array(Hex32),
  signature: z.string().check(z.minLength(1, "must not be empty")),
  tag: Hex32,
  payload: Payload,
});
/** Answer of `POST /api/vote` (202). */
export const VoteAccepted = z.object({ voteId: VoteId, blockId: Id });

/** A block record (protocol §3). */
export const BlockRecord = z.object({
  height: Count,
  timestamp: Count,
  merkle_root: Hex32,
  prev_hash: Hex32,
  hash: Hex32,
  size: Count,
  /** The server's signature over the head (protocol §4 "Signed heads"); additive to v1. */
  head_signature: z.optional(Hex64),
});
// The head's fields in the answers below are the block record's own.
const { height, hash, timestamp, head_signature } = BlockRecord.shape;
/** Answer of `GET /api/block/hash/id/{height}`: a block record's height and hash. */
export const BlockHash = z.object({ height, hash });
/** Answer of `GET /api/block/status`: the head block's height, hash and time, and the open block. */
export const BlockStatus = z.object({ height, hash, timestamp, head_signature, openBlock: Id });
/** Answer of `GET /api/block/id/{blockId}/vote/{voteId}`. */
export const VoteProof = z.object({
  vote: VoteRecord,
  index: Count,
  path: z.array(Hex32),
  block: BlockRecord,
});
/** Answer of `GET /api/blocks`. */
export const BlockList = z.object({ blocks: z.array(BlockRecord), height: Count });
/** Answer of `GET /api/block/id/{height}/votes`. */
export const BlockVotes = z.object({
  votes: z.array(z.object({ voteId: VoteId, index: Count, vote: VoteRecord })),
  total: Count,
});
/** One line of the tally: a payload and how many sealed votes carry it. */
export const TallyEntry = z.object({ payload: z.string(), count: Id });
/** Answer of `GET /api/tally`. */
export const Tally = z.object({ total: Count, results: z.array(TallyEntry) });
/** Answer of `GET /api/tag/{tag}`. */
export const TagRecord = z.object({ voteId: VoteId, blockId: Id });
/** Answer of `GET /api/server-key`: the hex Ed25519 key that signs block heads. */
export const ServerKey = z.object({ key: Hex32 });
/** A block head with the server's signature (protocol §4 "Signed heads"). */
export const SignedHead = z.object({ height: Count, hash: Hex32, head_signature: Hex64 });
/** The `kind` field naming a fork-evidence file. */
export const FORK_EVIDENCE_KIND = "ringvote/v1/fork-evidence";
/** Fork evidence: two heads signed by `key` at one height with different hashes. */
export const ForkEvidence = z.object({
  kind: z.literal(FORK_EVIDENCE_KIND),
  key: Hex32,
  heads: z.tuple([SignedHead, SignedHead]),
});
/** Every error answer; some codes add fields (`duplicate_key` carries `id`). */
export const ErrorBody = z.object({
  error: z.looseObject({ code: z.string(), message: z.string() }),
});

export type KeyRegistration = z.infer<typeof KeyRegistration>;
export type KeyRecord = z.infer<typeof KeyRecord>;
export type KeyPage = z.infer<typeof KeyPage>;
export type SignatureWire = z.infer<typeof SignatureWire>;
export type VoteRecord = z.infer<typeof VoteRecord>;
export type VoteSubmission = z.infer<typeof VoteSubmission>;
export type VoteAccepted = z.infer<typeof VoteAccepted>;
export type BlockRecord = z.infer<typeof BlockRecord>;
export type BlockStatus = z.infer<typeof BlockStatus>;
export type BlockHash = z.infer<typeof BlockHash>;
export type VoteProof = z.infer<typeof VoteProof>;
export type BlockList = z.infer<typeof BlockList>;
export type BlockVotes = z.infer<typeof BlockVotes>;
export type TallyEntry = z.infer<typeof TallyEntry>;
export type Tally = z.infer<typeof Tally>;
export type TagRecord = z.infer<typeof TagRecord>;
export type ServerKey = z.infer<typeof ServerKey>;
export type SignedHead = z.infer<typeof SignedHead>;
export type ForkEvidence = z.infer<typeof ForkEvidence>;
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Most choices of a round, fewest (protocol §4.9); `[]` is a free-text round. */
export const ROUND_CHOICES = { min: 2, max: 12 } as const;
/** A round's sealing interval bounds and default, ms (protocol §4.9). */
export const ROUND_INTERVAL_MS = { min: 1_000, max: 3_600_000, fallback: 15_000 } as const;
/** Bounds and default of a round's `minVoters`: the fewest keys that may open voting (§4.9). */
export const ROUND_MIN_VOTERS = { min: 8, max: 64, fallback: 8 } as const;
/** Bounds of a round's `joinSeconds`: how long after its start voting may open by itself, s. */
export const ROUND_JOIN_SECONDS = { min: 10, max: 600 } as const;
/** The phases of a round (protocol §4.9): keys join, then votes, then the next round starts. */
export const ROUND_PHASES = ["join", "voting", "closed"] as const;

/** An integer from `min` to `max`, both included. */
function boundedInt({ min, max }: { min: number; max: number }) {
  return z.int().check(z.gte(min, `must be at least ${min}`), z.lte(max, `must be at most ${max}`));
}

/** Text trimmed of surrounding white space, then of `min` to `max` code points. */
function trimmedText(min: number, max: number) {
  return z.pipe(
    z.string().check(z.trim()),
    z.string().check(
      z.refine((text) => text.isWellFormed(), "must be well-formed Unicode (no lone surrogates)"),
      z.refine((text) => {
        const n = codePointLength(text);
        return n >= min && n <= max;
      }, `must be ${min} to ${max} characters once trimmed`),
    ),
  );
}

/** Body of `POST /api/rounds` (protocol §4.9): a question, its choices (none for free text). */
export const RoundStart = z.object({
  question: trimmedText(1, 200),
  choices: z.array(trimmedText(1, 100)).check(
    z.refine(
      (choices) =>
        choices.length === 0 ||
        (choices.length >= ROUND_CHOICES.min && choices.length <= ROUND_CHOICES.max),
      `must be empty (free text) or hold ${ROUND_CHOICES.min} to ${ROUND_CHOICES.max} choices`,
    ),
    z.refine((choices) => new Set(choices).size === choices.length, "must be distinct"),
  ),
  blockIntervalMs: z.optional(
    z.int().check(
      z.gte(ROUND_INTERVAL_MS.min, `must be at least ${ROUND_INTERVAL_MS.min}`),
      z.lte(ROUND_INTERVAL_MS.max, `must be at most ${ROUND_INTERVAL_MS.max}`),
    ),
  ),
  minVoters: z.optional(boundedInt(ROUND_MIN_VOTERS)),
  joinSeconds: z.optional(boundedInt(ROUND_JOIN_SECONDS)),
  lateJoiners: z.optional(z.boolean()),
  /** The card set whose cards alone admit keys (protocol §2.11). */
  cards: z.optional(CardSetId),
});
/** A round's phase: `join`, `voting` or `closed` (protocol §4.9). */
export const RoundPhase = z.enum(ROUND_PHASES);
/** A list of key ids, ascending: a group, or the pending keys. */
export const KeyIds = z.array(Id);
/** One round as listed by `GET /api/rounds`. */
export const RoundInfo = z.object({
  id: Id,
  question: z.string(),
  choices: z.array(z.string()),
  createdAt: Count,
  blockIntervalMs: Id,
  phase: RoundPhase,
  minVoters: Id,
  lateJoiners: z.boolean(),
  /** When voting opened, ms since the epoch; null before. */
  openedAt: z.nullable(Count),
  /** `createdAt + joinSeconds * 1000`; null when the presenter alone opens voting. */
  joinDeadline: z.nullable(Count),
  /** True once the presenter declared the round's votes relayed (protocol §7.4); no address. */
  relayed: z.boolean(),
  /** A carded round's card set id (protocol §2.11); absent (read as null) for an open round. */
  cards: z.optional(CardSetId),
});
/**
 * Answer of `GET /api/rounds/{id}/groups` (protocol §2.8): the round's partition into rings and
 * the keys in no group yet; `keysAtOpen` is null (and both lists empty) before voting opens.
 */
export const RoundGroups = z.object({
  phase: RoundPhase,
  keysAtOpen: z.nullable(Count),
  groups: z.array(KeyIds),
  pending: KeyIds,
  /** Votes a second the server's verifier is set to take (`VERIFY_RATE`, protocol §6). */
  verifyRate: z.optional(z.number().check(z.positive("must be positive"))),
  /** The send window W the server computes (protocol §7.4); null before voting opens. */
  sendWindowMs: z.optional(z.nullable(Count)),
});
/** Answer of `POST /api/rounds/{id}/voting`: voting is open, with the opening's groups. */
export const VotingOpened = z.object({ phase: z.literal("voting"), groups: z.array(KeyIds) });
/** Answer of `GET /api/rounds`: every round by ascending id and the current one. */
export const RoundList = z.object({ current: Id, rounds: z.array(RoundInfo) });
/** Answer of `POST /api/rounds` (201). */
export const RoundCreated = z.object({ id: Id });
/** Answer of `GET /api/rounds/{id}/block/open`: the open block and the next seal tick. */
export const OpenBlock = z.object({
  height: Id,
  votes: Count,
  intervalMs: Id,
  nextSealAt: Count,
});
export type RoundStart = z.infer<typeof RoundStart>;
export type RoundInfo = z.infer<typeof RoundInfo>;
export type RoundList = z.infer<typeof RoundList>;
export type RoundPhase = z.infer<typeof RoundPhase>;
export type RoundGroups = z.infer<typeof RoundGroups>;
export type VotingOpened = z.infer<typeof VotingOpened>;
export type OpenBlock = z.infer<typeof OpenBlock>;

/** Longest witness vkey accepted (protocol §4.10), so that what a ledger keeps stays bounded. */
export const MAX_VKEY_LENGTH = 500;
/** Longest cosignature line accepted: a 72-byte cosignature and a key name of some 500 bytes. */
export const MAX_COSIGNATURE_LINE_LENGTH = 700;

/**
 * Body of `POST {base}/log/cosignature` (protocol §4.10): a witness's cosignature/v1 vkey, the tree
 * size it cosigned, and its signature line `— <name> <base64>` as add-checkpoint answers it,
 * without the newline.
 */
export const CosignatureSubmission = z.object({
  vkey: z.string().check(z.minLength(1), z.maxLength(MAX_VKEY_LENGTH)),
  size: Count,
  cosignature: z.string().check(
    z.maxLength(MAX_COSIGNATURE_LINE_LENGTH),
    z.refine((line) => !line.includes("\n"), "must be one line, without its newline"),
  ),
});
/** Body of the presenter's `POST {base}/log/witnesses/pin`: the room's witness, a vkey. */
export const WitnessPin = z.object({
  vkey: z.string().check(z.minLength(1), z.maxLength(MAX_VKEY_LENGTH)),
});
/** Answer of `POST {base}/log/witnesses/pin`: the pinned witnesses' vkeys, oldest first. */
export const WitnessPins = z.object({ pinned: z.array(z.string()) });
/** Answer of `POST {base}/log/cosignature`: it verified; `stored` unless one as new is kept. */
export const CosignatureAccepted = z.object({ size: Count, timestamp: Count, stored: z.boolean() });
/**
 * What went wrong pushing to a witness (protocol §4.10). Alarms: `inconsistent` (422), `fork` (409
 * naming the size sent), `witness-ahead` (409 naming a size above the log's), `bad-cosignature` (a
 * 200 whose line does not verify). Errors: `no-answer`, `refused` (another status),
 * `unexpected-size` (a 409 without a size, or naming yet another one). With the witness's HTTP
 * status (0: no answer), its reason or ours in words, and when (ms).
 */
export const WitnessProblem = z.object({
  kind: z.enum([
    "inconsistent",
    "fork",
    "witness-ahead",
    "bad-cosignature",
    "no-answer",
    "refused",
    "unexpected-size",
  ]),
  status: Count,
  reason: z.string(),
  at: Count,
});
/**
 * A witness problem as the public sees it: its kind and status only. The reason in words, which
 * may name the witness's address or a network error, stays in the server's log.
 */
export const WitnessProblemShown = z.strictObject({
  kind: WitnessProblem.shape.kind,
  status: Count,
});
/** What pushing to one witness of `WITNESS_POLICY` has come to (protocol §4.10). */
export const WitnessStatus = z.object({
  name: z.string(),
  vkey: z.string(),
  lastSize: z.nullable(Count),
  lastCosignedAt: z.nullable(Count),
  alarm: z.nullable(WitnessProblemShown),
  error: z.nullable(WitnessProblemShown),
});
/** Answer of `GET {base}/log/witnesses`: the policy's witnesses, and the room's pinned vkeys. */
export const WitnessList = z.object({
  witnesses: z.array(WitnessStatus),
  pinned: z.array(z.string()),
});
export type CosignatureSubmission = z.infer<typeof CosignatureSubmission>;
export type CosignatureAccepted = z.infer<typeof CosignatureAccepted>;
export type WitnessProblem = z.infer<typeof WitnessProblem>;
export type WitnessProblemShown = z.infer<typeof WitnessProblemShown>;
export type WitnessStatus = z.infer<typeof WitnessStatus>;
export type WitnessList = z.infer<typeof WitnessList>;
export type WitnessPins = z.infer<typeof WitnessPins>;

/** Issues a description names one by one; the others are counted. */
export const DESCRIBED_ISSUES = 5;

/**
 * One line per issue, `path: message`, for a 400 answer or a console log: the first
 * {@link DESCRIBED_ISSUES}, then how many more (a body of thousands of wrong items gets a short
 * answer, not one line per item).
 */
export function describeIssues(error: z.core.$ZodError): string {
  const { issues } = error;
  const described = issues.slice(0, DESCRIBED_ISSUES).map((issue) => {
    const at = issue.path.length ? issue.path.join(".") : "body";
    return `${at}: ${issueMessage(issue)}`;
  });
  const more = issues.length - described.length;
  return described.join("; ") + (more > 0 ? `; and ${more} more` : "");
}

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.message && issue.message !== "Invalid input") return issue.message;
  switch (issue.code) {
    case "invalid_type":
      return `expected ${issue.expected}`;
    case "too_small":
      return `must be at least ${issue.minimum}`;
    case "too_big":
      return `must be at most ${issue.maximum}`;
    case "unrecognized_keys":
      return `unexpected keys ${issue.keys.join(", ")}`;
    default:
      return "is invalid";
  }
}
