/**
 * Browser-safe. The election record (protocol §4.8, `ringvote/v1/election-record`): the writer
 * that tees the audit's reads into a sink, and the unchecked walk that writes a chain's record (the
 * board's download); the lines themselves are in ./record_lines.ts.
 * @module
 */
import {
  type BlockRecord,
  type BlockStatus,
  MAX_PAGE_LIMIT,
  type Tally,
} from "../../protocol/schemas.ts";
import { type AuditSource, pageRequests } from "./reads.ts";
import { type BlockVoteEntry, type DirectoryEntry, pagesOf } from "../api_client.ts";
import type { RoundGroupRule } from "./groups.ts";
import type { RoundCardsRead } from "./cards.ts";
import {
  blockFields,
  encodeLine,
  RECORD_KIND,
  type RecordCounts,
  type RecordLine,
  signed,
} from "./record_lines.ts";

export {
  blockFields,
  encodeLine,
  LINE_ORDER,
  lineValue,
  MAX_LINE_BYTES,
  MAX_LINE_DEPTH,
  parseLine,
  RECORD_KIND,
  type RecordCounts,
  type RecordLine,
  RecordLineError,
} from "./record_lines.ts";

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
  let groups: Promise<RoundGroupRule | null> | null = null;
  let cards: Promise<RoundCardsRead | null> | null = null;
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
      // A round's group rule goes in the header: read once, before it is written.
      groups ??= api.groupRule ? api.groupRule() : null;
      const rule = await groups;
      // So does a carded round's card set (protocol §2.11).
      cards ??= api.cards ? api.cards() : null;
      const set = await cards;
      await inOrder(async () => {
        if (header || key === null) return;
        header = true;
        await write(headerOf(key, status, rule, set));
        if (checkpoint !== null) await write({ kind: "checkpoint", note: checkpoint });
      });
      return status;
    },
    ...(api.groupRule ? { groupRule: () => groups ?? api.groupRule!() } : {}),
    ...(api.cards ? { cards: () => cards ?? api.cards!() } : {}),
    keys: async (offset, limit) => {
      const page = await api.keys(offset, limit);
      await inOrder(async () => {
        for (const { id, key, card } of page.items) {
          await write({ kind: "key", id, key, ...(card ? { card } : {}) });
        }
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

/**
 * The header line: the server key, the head the record was taken at and, in a round's record, its
 * group rule (protocol §2.8) and, in a carded round's, its card set (§2.11).
 */
function headerOf(
  key: string,
  status: BlockStatus,
  groups: RoundGroupRule | null,
  cards: RoundCardsRead | null,
): RecordLine {
  const { height, hash, timestamp, head_signature } = status;
  const rule = groups === null ? {} : { groups };
  const set = cards === null ? {} : { cards: { round: cards.round, ...cards.set } };
  return {
    kind: RECORD_KIND,
    key,
    height,
    hash,
    timestamp,
    ...signed(head_signature),
    ...rule,
    ...set,
  };
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
