/**
 * Browser-safe. The election record (protocol §4.8, `ringvote/v1/election-record`): the fixed byte
 * form of each NDJSON line, the writer that tees the audit's reads into a sink, and the unchecked
 * walk that writes a chain's record (the board's download).
 * @module
 */
import * as z from "zod/mini";
import {
  BlockRecord,
  type BlockStatus,
  describeIssues,
  Hex32,
  MAX_PAGE_LIMIT,
  type Tally,
  TallyEntry,
  VoteId,
  VoteRecord,
} from "../../protocol/schemas.ts";
import { checkJsonBounds, JsonBoundsError } from "../bounded_json.ts";
import { MAX_CHECKPOINT_CHARS } from "./log_checks.ts";
import { type AuditSource, pageRequests } from "./reads.ts";
import { type BlockVoteEntry, type DirectoryEntry, pagesOf } from "../api_client.ts";

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

const HeaderLine = z.object({
  kind: z.literal(RECORD_KIND),
  key: Hex32,
  height,
  hash,
  timestamp,
  head_signature,
});
const CheckpointLine = z.object({
  kind: z.literal("checkpoint"),
  note: z.string().check(z.minLength(1), z.maxLength(MAX_CHECKPOINT_CHARS)),
});
const KeyLine = z.object({ kind: z.literal("key"), id: z.int().check(z.gte(1)), key: Hex32 });
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

/** `head_signature` as the record writes it: the field, or nothing when none was served. */
const signed = (sig: string | undefined) => (sig === undefined ? {} : { head_signature: sig });

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
      });
    case "checkpoint":
      return stringify({ kind: line.kind, note: line.note });
    case "key":
      return stringify({ kind: line.kind, id: line.id, key: line.key });
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

/** Where a record is written: appended to line by line, emptied when the audit starts again. */
export type RecordSink = {
  write(text: string): void | Promise<void>;
  restart(): void | Promise<void>;
};

/**
 * Tees what the audit reads through `api` into `sink`, as a record: `source` is the client to
 * audit through, `finish` writes the end line once the audit is over and answers the counts. A
 * new run of the audit (it starts again when the chain grows) empties the sink and writes afresh,
 * so the record is exactly the last run's reads. The checkpoint, read before the head, is written
 * right after the header; a checkpoint that could not be read is not written. Votes pages are
 * written in the order they were asked for, as the audit takes them, and a page after a short
 * page of its block is dropped, as the audit drops it.
 */
export function recordWriter(
  api: AuditSource,
  sink: RecordSink,
): { source: AuditSource; finish(): Promise<RecordCounts> } {
  let queue: Promise<void> = Promise.resolve();
  const inOrder = (step: () => void | Promise<void>) => {
    queue = queue.then(step);
    return queue;
  };
  let key: string | null = null;
  let header = false;
  /** The checkpoint read before the header was written, to be written after it. */
  let checkpoint: string | null = null;
  let counts: RecordCounts = { keys: 0, blocks: 0, votes: 0 };
  let ended = new Set<number>();
  const write = (line: RecordLine) => sink.write(encodeLine(line));

  const source: AuditSource = {
    async serverKey() {
      const answer = await api.serverKey();
      await inOrder(async () => {
        await sink.restart();
        [key, header, checkpoint, counts, ended] = [
          answer.key,
          false,
          null,
          { keys: 0, blocks: 0, votes: 0 },
          new Set(),
        ];
      });
      return answer;
    },
    async checkpoint() {
      const note = await api.checkpoint();
      await inOrder(() => {
        if (header) return write({ kind: "checkpoint", note });
        checkpoint = note;
      });
      return note;
    },
    async blockStatus() {
      const status = await api.blockStatus();
      await inOrder(async () => {
        if (header || key === null) return;
        header = true;
        await write(headerOf(key, status));
        if (checkpoint !== null) await write({ kind: "checkpoint", note: checkpoint });
      });
      return status;
    },
    keys: async (offset, limit) => {
      const page = await api.keys(offset, limit);
      await inOrder(async () => {
        for (const { id, key } of page.items) await write({ kind: "key", id, key });
        counts.keys += page.items.length;
      });
      return page;
    },
    blocks: async (offset, limit) => {
      const page = await api.blocks(offset, limit);
      await inOrder(async () => {
        for (const b of page.items) await write({ kind: "block", ...blockFields(b) });
        counts.blocks += page.items.length;
      });
      return page;
    },
    blockVotes: (h) => (offset, limit) => {
      // Asked for now, written in this order once answered: the audit's parallel reads.
      const answer = api.blockVotes(h)(offset, limit);
      const written = inOrder(async () => {
        const page = await answer.catch(() => null);
        if (page === null || ended.has(h)) return;
        if (page.items.length < limit) ended.add(h);
        for (const entry of page.items) await write(voteLine(h, entry));
        counts.votes += page.items.length;
      });
      return written.then(() => answer);
    },
    async tally() {
      const tally = await api.tally();
      await inOrder(() => write(tallyLine(tally)));
      return tally;
    },
  };
  return {
    source,
    async finish() {
      await inOrder(() => header ? write({ kind: "end", ...counts }) : undefined);
      return counts;
    },
  };
}

/** The header line: the server key and the head the record was taken at. */
function headerOf(key: string, status: BlockStatus): RecordLine {
  const { height, hash, timestamp, head_signature } = status;
  return { kind: RECORD_KIND, key, height, hash, timestamp, ...signed(head_signature) };
}

function voteLine(h: number, { voteId, index, vote }: BlockVoteEntry): RecordLine {
  return { kind: "vote", height: h, index, voteId, ...vote };
}

function tallyLine({ total, results }: Tally): RecordLine {
  return { kind: "tally", total, results };
}

/** Where a record being read from a server is: block `height` of the head's `of`. */
export type RecordProgress = { height: number; of: number };

/** How often {@link writeRecord} starts again when the chain grows under it. */
const MAX_WRITE_RUNS = 3;

/**
 * Writes the record of the chain `api` serves into `sink`, without checking it (the board's
 * download): the audit's reads, in its order, through {@link recordWriter} — the key, the log's
 * checkpoint, the head, the key directory, every block, every block's votes (pages bounded by its
 * size, ended by a short page), the tally — and the head again: when a block was sealed
 * meanwhile, the tally counts votes not read, so it starts again, a few times at most. Answers the
 * counts and the height. Throws the client's error when a read fails.
 */
export async function writeRecord(
  api: AuditSource,
  sink: RecordSink,
  { onProgress }: { onProgress?: (p: RecordProgress) => void } = {},
): Promise<RecordCounts & { height: number }> {
  for (let run = 1;; run++) {
    const { source, finish } = recordWriter(api, sink);
    await source.serverKey();
    await source.checkpoint();
    const { height } = await source.blockStatus();
    onProgress?.({ height: 0, of: height });
    for await (const _page of pagesOf<DirectoryEntry>(source.keys)) {
      // Written as read: the writer keeps nothing.
    }
    const blocks: BlockRecord[] = [];
    for await (const page of pagesOf(source.blocks, { count: height + 1 })) {
      blocks.push(...page.items);
    }
    // The audit's pages, bounded by each block's size and ended by a short page.
    const ended = new Set<number>();
    for (const { height: h, offset, due } of pageRequests(blocks, ended)) {
      if (offset === 0) onProgress?.({ height: h, of: height });
      const page = await source.blockVotes(h)(offset, MAX_PAGE_LIMIT);
      if (page.items.length < due) ended.add(h);
    }
    await source.tally();
    const now = (await source.blockStatus()).height;
    if (now === height) {
      const counts = await finish();
      onProgress?.({ height, of: height });
      return { ...counts, height };
    }
    if (run === MAX_WRITE_RUNS) {
      throw new Error(
        `The chain grew during each of ${MAX_WRITE_RUNS} reads of the record (now height ${now})`,
      );
    }
  }
}
