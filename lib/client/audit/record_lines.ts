/**
 * Browser-safe. The lines of an election record (protocol §4.8, `ringvote/v1/election-record`):
 * each kind's fields, the one byte form of each NDJSON line, and the parse that checks a line
 * against both.
 * @module
 */
import * as z from "zod/mini";
import {
  BlockRecord,
  describeIssues,
  Hex32,
  ROUND_MIN_VOTERS,
  TallyEntry,
  VoteId,
  VoteRecord,
} from "../../protocol/schemas.ts";
import { checkJsonBounds, JsonBoundsError } from "../bounded_json.ts";
import { CardAdmissionWire, CardSet } from "../../protocol/card_schemas.ts";
import { MAX_CHECKPOINT_CHARS } from "./log_checks.ts";

/** The `kind` of a record's first line, naming the format and its version. */
export const RECORD_KIND = "ringvote/v1/election-record";

/** The longest line a reader accepts, in bytes; a vote line is at most a few KiB. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/**
 * How deep a line's arrays and objects nest, at most: three, in the tally line (its object, its
 * `results`, a row). A line nesting deeper is refused before it is parsed (see ../bounded_json.ts).
 */
export const MAX_LINE_DEPTH = 3;

const { height, timestamp, hash, head_signature, merkle_root, prev_hash, size } = BlockRecord.shape;
const Count = size;

/** A round's group rule (protocol §2.8), in the header of a round's record. */
const GroupRuleField = z.object({
  keysAtOpen: z.nullable(Count),
  minVoters: z.int().check(z.gte(ROUND_MIN_VOTERS.min), z.lte(ROUND_MIN_VOTERS.max)),
  lateJoiners: z.boolean(),
});
const HeaderLine = z.object({
  kind: z.literal(RECORD_KIND),
  key: Hex32,
  height,
  hash,
  timestamp,
  head_signature,
  groups: z.optional(GroupRuleField),
  /** A carded round's card set and the round's id (protocol §2.11). */
  cards: z.optional(z.object({ round: z.int().check(z.gte(2)), ...CardSet.shape })),
});
const CheckpointLine = z.object({
  kind: z.literal("checkpoint"),
  note: z.string().check(z.minLength(1), z.maxLength(MAX_CHECKPOINT_CHARS)),
});
const KeyLine = z.object({
  kind: z.literal("key"),
  id: z.int().check(z.gte(1)),
  key: Hex32,
  card: z.optional(CardAdmissionWire),
});
const BlockLine = z.object({
  kind: z.literal("block"),
  height,
  timestamp,
  merkle_root,
  prev_hash,
  hash,
  size,
  head_signature,
});
const { payload, signature, publicKeys } = VoteRecord.shape;
const VoteLine = z.object({
  kind: z.literal("vote"),
  height,
  index: Count,
  voteId: VoteId,
  payload,
  signature,
  publicKeys,
});
const TallyLine = z.object({
  kind: z.literal("tally"),
  total: Count,
  results: z.array(TallyEntry),
});
const EndLine = z.object({ kind: z.literal("end"), keys: Count, blocks: Count, votes: Count });

/** The line schemas by kind, in the order their lines come in a record. */
const LINES = {
  [RECORD_KIND]: HeaderLine,
  checkpoint: CheckpointLine,
  key: KeyLine,
  block: BlockLine,
  vote: VoteLine,
  tally: TallyLine,
  end: EndLine,
} as const;

/** The kinds of line, in record order. */
export const LINE_ORDER = Object.keys(LINES) as RecordLine["kind"][];

/** One line of a record, parsed. */
export type RecordLine =
  | z.infer<typeof HeaderLine>
  | z.infer<typeof CheckpointLine>
  | z.infer<typeof KeyLine>
  | z.infer<typeof BlockLine>
  | z.infer<typeof VoteLine>
  | z.infer<typeof TallyLine>
  | z.infer<typeof EndLine>;

/** How many key, block and vote lines a record holds: what its end line says. */
export type RecordCounts = { keys: number; blocks: number; votes: number };

/** `head_signature` as a record line holds it: the field, or nothing when none was served. */
export const signed = (
  sig: string | undefined,
) => (sig === undefined ? {} : { head_signature: sig });

/** The one byte form of every line: JSON.stringify of the fields in this order, then `\n`. */
export function encodeLine(line: RecordLine): string {
  switch (line.kind) {
    case RECORD_KIND:
      return stringify({
        kind: line.kind,
        key: line.key,
        height: line.height,
        hash: line.hash,
        timestamp: line.timestamp,
        ...signed(line.head_signature),
        ...(line.groups === undefined ? {} : {
          groups: {
            keysAtOpen: line.groups.keysAtOpen,
            minVoters: line.groups.minVoters,
            lateJoiners: line.groups.lateJoiners,
          },
        }),
        ...(line.cards === undefined ? {} : {
          cards: {
            round: line.cards.round,
            set: line.cards.set,
            count: line.cards.count,
            sha256: line.cards.sha256,
            keys: line.cards.keys,
          },
        }),
      });
    case "checkpoint":
      return stringify({ kind: line.kind, note: line.note });
    case "key":
      return stringify({
        kind: line.kind,
        id: line.id,
        key: line.key,
        ...(line.card === undefined ? {} : { card: { key: line.card.key, sig: line.card.sig } }),
      });
    case "block":
      return stringify({ kind: line.kind, ...blockFields(line) });
    case "vote":
      return stringify({
        kind: line.kind,
        height: line.height,
        index: line.index,
        voteId: line.voteId,
        payload: line.payload,
        signature: line.signature,
        publicKeys: line.publicKeys,
      });
    case "tally":
      return stringify({
        kind: line.kind,
        total: line.total,
        results: line.results.map((r) => ({ payload: r.payload, count: r.count })),
      });
    case "end":
      return stringify({
        kind: line.kind,
        keys: line.keys,
        blocks: line.blocks,
        votes: line.votes,
      });
  }
}

const stringify = (value: unknown) => JSON.stringify(value) + "\n";

/** A block record's fields in their §3.3 order, `head_signature` last when there is one. */
export function blockFields(b: BlockRecord): BlockRecord {
  return {
    height: b.height,
    timestamp: b.timestamp,
    merkle_root: b.merkle_root,
    prev_hash: b.prev_hash,
    hash: b.hash,
    size: b.size,
    ...signed(b.head_signature),
  };
}

/** A line of a record that is not what §4.8 allows there; `line` is its 1-based number. */
export class RecordLineError extends Error {
  constructor(readonly line: number, what: string) {
    super(`record line ${line}: ${what}`);
    this.name = "RecordLineError";
  }
}

/**
 * Line `n` of a record (its text, without the `\n`), parsed and checked against its kind's fields
 * and its one byte form. Throws {@link RecordLineError} saying what was expected.
 */
export function parseLine(text: string, n: number): RecordLine {
  const value = lineValue(text, n);
  const kind = (value as { kind?: unknown } | null)?.kind;
  if (typeof kind !== "string" || !Object.hasOwn(LINES, kind)) {
    throw new RecordLineError(
      n,
      `expected a line whose "kind" is one of ${LINE_ORDER.map((k) => `"${k}"`).join(", ")}; got ` +
        JSON.stringify(kind ?? null),
    );
  }
  const parsed = LINES[kind as RecordLine["kind"]].safeParse(value);
  if (!parsed.success) {
    throw new RecordLineError(n, `a "${kind}" line: ${describeIssues(parsed.error)}`);
  }
  const line = parsed.data as RecordLine;
  if (encodeLine(line) !== text + "\n") {
    throw new RecordLineError(
      n,
      `a "${kind}" line not in its one form (protocol §4.8: these fields in this order, ` +
        "JSON.stringify's bytes, no other fields, no spaces)",
    );
  }
  return line;
}

/**
 * Line `n`'s JSON value, once its nesting is within {@link MAX_LINE_DEPTH} (checked first, in one
 * scan, so that a hostile line costs no more than its reading). Throws {@link RecordLineError}.
 */
export function lineValue(text: string, n: number): unknown {
  if (text === "") throw new RecordLineError(n, "an empty line, where a JSON object was expected");
  try {
    checkJsonBounds(text, { maxChars: MAX_LINE_BYTES, maxDepth: MAX_LINE_DEPTH });
    return JSON.parse(text);
  } catch (error) {
    const { message } = error as Error;
    throw new RecordLineError(
      n,
      error instanceof JsonBoundsError ? message : `not JSON (${message})`,
    );
  }
}
