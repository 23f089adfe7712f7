/**
 * Browser-safe. An election record (protocol §4.8) as a source of the one audit, read once front to
 * back from a stream as the audit asks; `auditRecord` adds what only a record can get wrong.
 * @module
 */
import type { BlockRecord } from "../../protocol/schemas.ts";
import type { BlockVoteEntry, DirectoryEntry } from "../api_client.ts";
import { auditLedger, type AuditOptions, type AuditReport } from "./audit.ts";
import type { RecordFinding } from "./findings.ts";
import type { AuditSource } from "./reads.ts";
import {
  blockFields,
  LINE_ORDER,
  lineValue,
  MAX_LINE_BYTES,
  parseLine,
  RECORD_KIND,
  type RecordLine,
  RecordLineError,
} from "./election_record.ts";

export { MAX_LINE_BYTES };

/**
 * Why a record without a checkpoint line (one written before records carried it, protocol §4.8)
 * gives the audit no checkpoint: a failure of its own, the rest of the record audited as ever.
 */
const NO_CHECKPOINT = "the record holds no checkpoint line after its header: it was written " +
  "before records carried the log's checkpoint (protocol §4.8), so its log cannot be checked";

/** Lines out of place reported one by one; the rest are counted in one line. */
const OUT_OF_PLACE_SHOWN = 10;

/** Raw lines of a byte stream: each line's bytes without its `\n`, numbered from 1. */
type LineReader = {
  next(): Promise<{ n: number; bytes: Uint8Array; terminated: boolean } | null>;
  cancel(): Promise<void>;
};

/** Splits `input` at every `\n` byte as it is read: only the current line is held. */
function lineReader(input: ReadableStream<Uint8Array>): LineReader {
  const reader = input.getReader();
  let chunk: Uint8Array = new Uint8Array(0);
  let at = 0;
  let n = 0;
  let done = false;
  return {
    async next() {
      const parts: Uint8Array[] = [];
      let length = 0;
      for (;;) {
        const nl = chunk.indexOf(10, at);
        const part = chunk.subarray(at, nl === -1 ? chunk.length : nl);
        parts.push(part);
        length += part.length;
        at = nl === -1 ? chunk.length : nl + 1;
        if (nl !== -1) return { n: ++n, bytes: join(parts, length), terminated: true };
        if (length > MAX_LINE_BYTES) {
          throw new RecordLineError(n + 1, `longer than ${MAX_LINE_BYTES} bytes`);
        }
        const read = done ? null : await reader.read();
        if (read === null || read.done) {
          done = true;
          return length === 0 ? null : { n: ++n, bytes: join(parts, length), terminated: false };
        }
        [chunk, at] = [read.value, 0];
      }
    },
    async cancel() {
      await reader.cancel().catch(() => {});
    },
  };
}

function join(parts: Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A record as the audit's source, and `close`, which ends the reading and says what was wrong. */
export type RecordSource = AuditSource & {
  /** Stops reading; answers the record's own failures (lines out of place, the end line). */
  close(): Promise<RecordFinding[]>;
};

/**
 * The record in `input` as an {@link AuditSource}. Each call reads on from where the last one
 * stopped; calls are served one at a time in the order made (the audit asks for votes pages in
 * chain order, several at once). A malformed line, or a line where §4.8 allows none of its kind,
 * throws a {@link RecordLineError}, which the audit reports as the line that stopped it.
 */
export function recordSource(input: ReadableStream<Uint8Array>): RecordSource {
  const lines = lineReader(input);
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let peeked: { line: RecordLine | null } | { error: unknown } | null = null;
  let last = -1; // rank in LINE_ORDER of the last line taken
  let lineNo = 0;
  let header: Extract<RecordLine, { kind: typeof RECORD_KIND }> | null = null;
  let keys: DirectoryEntry[] | null = null;
  const counts = { keys: 0, blocks: 0, votes: 0 };
  const sizes = new Map<number, number>();
  const asked = new Set<number>();
  const outOfPlace: RecordFinding[] = [];
  let unshown = 0;
  let tallied = false;

  /** The next line, parsed and in its place in the order; null at the end of the bytes. */
  async function peek(): Promise<RecordLine | null> {
    if (peeked === null) {
      try {
        peeked = await readLine();
      } catch (error) {
        peeked = { error };
      }
    }
    if ("error" in peeked) throw peeked.error;
    return peeked.line;
  }

  async function readLine(): Promise<{ line: RecordLine | null }> {
    const raw = await lines.next();
    if (raw === null) return { line: null };
    lineNo = raw.n;
    let text: string;
    try {
      text = decoder.decode(raw.bytes);
    } catch {
      throw new RecordLineError(raw.n, "not UTF-8");
    }
    if (!raw.terminated) {
      throw new RecordLineError(
        raw.n,
        "the file ends inside this line: it has no \\n (truncated?)",
      );
    }
    const line = raw.n === 1 ? headerLine(text) : parseLine(text, raw.n);
    const rank = LINE_ORDER.indexOf(line.kind);
    const once = line.kind === RECORD_KIND || line.kind === "checkpoint" || line.kind === "tally" ||
      line.kind === "end";
    if (rank < last || (rank === last && once)) {
      throw new RecordLineError(
        raw.n,
        `a "${line.kind}" line cannot follow a "${LINE_ORDER[last]}" line: the order is the ` +
          "header, the checkpoint, the keys, the blocks, the votes, the tally, the end line",
      );
    }
    last = rank;
    return { line };
  }

  /** The first line, which must be the header: a file starting otherwise is not a record. */
  function headerLine(text: string): RecordLine {
    const kind = (lineValue(text, 1) as { kind?: unknown } | null)?.kind;
    if (kind !== undefined && kind !== RECORD_KIND) {
      throw new RecordLineError(
        1,
        `expected the header line {"kind":"${RECORD_KIND}",…}, got the kind ` +
          `${JSON.stringify(kind)}: this file is not an election record`,
      );
    }
    return parseLine(text, 1);
  }

  /** Takes the line {@link peek} answered. */
  function take(): RecordLine {
    const taken = peeked !== null && "line" in peeked ? peeked.line : null;
    if (taken === null) throw new Error("take() without a line");
    peeked = null;
    if (taken.kind === "key") counts.keys++;
    else if (taken.kind === "block") counts.blocks++;
    else if (taken.kind === "vote") counts.votes++;
    return taken;
  }

  /** The next line, which must be of `kind`. */
  async function expect<K extends RecordLine["kind"]>(
    kind: K,
  ): Promise<Extract<RecordLine, { kind: K }>> {
    const line = await peek();
    if (line === null) {
      throw new Error(
        lineNo === 0
          ? "record: the file is empty; expected the header line"
          : `record: the file ends after line ${lineNo} (truncated?); expected the "${kind}" line`,
      );
    }
    if (line.kind !== kind) {
      throw new RecordLineError(lineNo, `expected the "${kind}" line, got a "${line.kind}" line`);
    }
    return take() as Extract<RecordLine, { kind: K }>;
  }

  /** Skips the lines before `kind`'s, which no call will read: each is a failure. */
  async function skipTo(kind: RecordLine["kind"]) {
    const rank = LINE_ORDER.indexOf(kind);
    for (let line = await peek(); line !== null; line = await peek()) {
      if (LINE_ORDER.indexOf(line.kind) >= rank) return;
      take();
      misplaced(line);
    }
  }

  /** A line taken that no call reads: a failure, the first few one by one. */
  function misplaced(line: RecordLine) {
    if (outOfPlace.length === OUT_OF_PLACE_SHOWN) {
      unshown++;
      return;
    }
    const at = lineNo;
    outOfPlace.push(
      line.kind === "vote"
        ? { kind: "record-misplaced-vote", line: at, voteId: line.voteId, height: line.height }
        : line.kind === "block"
        ? {
          kind: "record-misplaced-block",
          line: at,
          height: line.height,
          head: header?.height ?? null,
        }
        : { kind: "record-misplaced-line", line: at, lineKind: line.kind },
    );
  }

  async function readHeader() {
    header ??= await expect(RECORD_KIND);
    return header;
  }

  let queue: Promise<unknown> = Promise.resolve();
  /** Runs `read` after every call made before it: one cursor, read in call order. */
  function serial<T>(read: () => Promise<T>): Promise<T> {
    const result = queue.then(read);
    queue = result.catch(() => {});
    return result;
  }

  return {
    serverKey: () => serial(async () => ({ key: (await readHeader()).key })),
    checkpoint: () =>
      serial(async () => {
        await readHeader();
        if ((await peek())?.kind !== "checkpoint") throw new Error(NO_CHECKPOINT);
        return (take() as Extract<RecordLine, { kind: "checkpoint" }>).note;
      }),
    // A round's record holds its group rule in its header (protocol §2.8); round 1's none.
    groupRule: () => serial(async () => (await readHeader()).groups ?? null),
    // A carded round's record holds its card set in its header (protocol §2.11).
    cards: () =>
      serial(async () => {
        const cards = (await readHeader()).cards;
        if (cards === undefined) return null;
        const { round, set, count, sha256, keys } = cards;
        return { round, set: { set, count, sha256, keys } };
      }),
    blockStatus: () =>
      serial(async () => {
        const { height, hash, timestamp, head_signature } = await readHeader();
        const signed = head_signature === undefined ? {} : { head_signature };
        return { height, hash, timestamp, ...signed, openBlock: height + 1 };
      }),
    keys: (offset, limit) =>
      serial(async () => {
        await readHeader();
        if (keys === null) {
          // The whole directory at once, for its size: the audit holds every key anyway.
          keys = [];
          for (let line = await peek(); line?.kind === "key"; line = await peek()) {
            const { id, key, card } = take() as Extract<RecordLine, { kind: "key" }>;
            keys.push({ id, key, ...(card ? { card } : {}) });
          }
        }
        return { items: keys.slice(offset, offset + limit), total: keys.length };
      }),
    blocks: (_offset, limit) =>
      serial(async () => {
        const head = await readHeader();
        keys = null;
        await skipTo("block");
        const items: BlockRecord[] = [];
        for (let line = await peek(); line?.kind === "block"; line = await peek()) {
          if (items.length === limit) break;
          const block = blockFields(take() as Extract<RecordLine, { kind: "block" }>);
          sizes.set(block.height, block.size);
          items.push(block);
        }
        return { items, total: head.height + 1 };
      }),
    blockVotes: (height: number) => (_offset: number, limit: number) =>
      serial(async () => {
        await skipTo("vote");
        asked.add(height);
        const items: BlockVoteEntry[] = [];
        for (let line = await peek(); line?.kind === "vote"; line = await peek()) {
          if (line.height !== height && !asked.has(line.height)) break; // a later block's
          if (line.height === height && items.length === limit) break;
          take();
          if (line.height !== height) misplaced(line);
          else {
            const { voteId, index, payload, signature, publicKeys } = line;
            items.push({ voteId, index, vote: { payload, signature, publicKeys } });
          }
        }
        return { items, total: sizes.get(height) ?? items.length };
      }),
    tally: () =>
      serial(async () => {
        await skipTo("tally");
        const { total, results } = await expect("tally");
        tallied = true;
        return { total, results };
      }),
    close: () => serial(() => closeRecord()),
  };

  /** The end line and nothing after it, once the tally was read; then stops reading. */
  async function closeRecord(): Promise<RecordFinding[]> {
    const failures = [...outOfPlace];
    if (unshown > 0) failures.push({ kind: "record-more-misplaced", count: unshown });
    try {
      if (tallied) {
        const end = await expect("end");
        const [k, b, v] = [counts.keys, counts.blocks, counts.votes];
        if (end.keys !== k || end.blocks !== b || end.votes !== v) {
          failures.push({
            kind: "record-end-counts",
            line: lineNo,
            end: { keys: end.keys, blocks: end.blocks, votes: end.votes },
            held: { keys: k, blocks: b, votes: v },
          });
        }
        if (await peek() !== null) failures.push({ kind: "record-after-end", line: lineNo });
      }
    } catch (error) {
      failures.push({ kind: "record-unreadable", reason: (error as Error).message });
    } finally {
      await lines.cancel();
    }
    return failures;
  }
}

/**
 * Audits the record in `input` offline with {@link auditLedger} — the same phases and report as
 * for a server — plus the record's own failures ({@link RecordSource.close}).
 */
export async function auditRecord(
  input: ReadableStream<Uint8Array>,
  opts: AuditOptions = {},
): Promise<AuditReport> {
  const source = recordSource(input);
  const report = await auditLedger(source, opts);
  const failures = await source.close();
  report.failures.push(...failures);
  report.ok = report.failures.length === 0;
  return report;
}
