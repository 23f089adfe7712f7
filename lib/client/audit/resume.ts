/**
 * Browser-safe. An audit resumed from what was audited before (protocol §4.6, §4.8): a record's
 * votes checked without their ring signatures, the server's chain checked to extend what was
 * remembered, and the audit run with the remembered part answered from memory, so only what the
 * server added since is verified in full.
 * @module
 */
import type { BlockRecord, VoteRecord } from "../../protocol/schemas.ts";
import type { BlockVoteEntry, DirectoryEntry, Page } from "../api_client.ts";
import { auditLedger, type AuditOptions, type AuditReport } from "./audit.ts";
import { blockFields, encodeLine } from "./election_record.ts";
import { type RecordSource, recordSource } from "./election_record_source.ts";
import type { AuditSource } from "./reads.ts";
import { unverifiedVote, type VoteChecker, type VoteVerification } from "./vote_checks.ts";

/** The head an earlier audit ended at: the server key, its height and its block's hash. */
export type RememberedHead = { key: string; height: number; hash: string };

/**
 * What one vote shows on its own without its ring signature: its leaf hash. The rulebook then
 * judges its signature's one wire form, its ring and its tag (lib/protocol/check_vote.ts), as for
 * every vote. Never throws.
 */
export function checkVoteWithoutSignature(vote: VoteRecord): VoteVerification {
  return unverifiedVote(vote);
}

/** A checker of votes without their ring signatures ({@link checkVoteWithoutSignature}). */
export const checkerWithoutSignatures: VoteChecker = (votes) =>
  Promise.resolve(votes.map(checkVoteWithoutSignature));

/** How many votes of the last run were verified in full, and how many were remembered. */
export type ResumeCounts = { verified: number; remembered: number };

/**
 * Votes the audit's source answered from memory, each with its remembered finding, or null for
 * a vote whose finding is to be made again without its ring signature (a record's votes).
 */
export type RememberedVotes = WeakMap<VoteRecord, VoteVerification | null>;

/**
 * A checker verifying in full, with `full`, only the votes not in `remembered`; the others are
 * answered from memory. `counts` counts both since the last `reset`.
 */
export function rememberingChecker(
  full: VoteChecker,
  remembered: RememberedVotes,
): { checker: VoteChecker; counts: ResumeCounts; reset(): void } {
  const counts: ResumeCounts = { verified: 0, remembered: 0 };
  const checker: VoteChecker = async (votes) => {
    const fresh = votes.filter((v) => !remembered.has(v));
    const findings = fresh.length > 0 ? await full(fresh) : [];
    counts.verified += fresh.length;
    counts.remembered += votes.length - fresh.length;
    let k = 0;
    return votes.map((v) =>
      remembered.has(v) ? remembered.get(v) ?? checkVoteWithoutSignature(v) : findings[k++]
    );
  };
  return {
    checker,
    counts,
    reset() {
      [counts.verified, counts.remembered] = [0, 0];
    },
  };
}

/**
 * Whether the server's chain extends a remembered head: its key is the one the head was signed
 * under, its chain is at least as high, and its block at that height has the remembered hash
 * (the blocks below are then the remembered ones, as every block links to the one before).
 */
export type Extension =
  | { kind: "extends"; height: number }
  | { kind: "other-key"; served: string }
  | { kind: "went-back"; height: number }
  | { kind: "rewritten"; served: string }
  | { kind: "unread"; reason: string };

/** Asks the server at `api` whether its chain extends `head` ({@link Extension}). */
export async function checkExtension(api: AuditSource, head: RememberedHead): Promise<Extension> {
  try {
    const { key } = await api.serverKey();
    if (key !== head.key) return { kind: "other-key", served: key };
    const { height } = await api.blockStatus();
    if (height < head.height) return { kind: "went-back", height };
    const [block] = (await api.blocks(head.height, 1)).items;
    if (block?.height !== head.height) return { kind: "went-back", height: head.height - 1 };
    if (block.hash !== head.hash) return { kind: "rewritten", served: block.hash };
    return { kind: "extends", height };
  } catch (error) {
    return { kind: "unread", reason: (error as Error).message };
  }
}

/** An {@link Extension} that is not one, in words. */
export function extensionText(
  head: RememberedHead,
  found: Exclude<Extension, { kind: "extends" }>,
) {
  switch (found.kind) {
    case "other-key":
      return `the server answers key ${found.served}, but the remembered chain was signed under ` +
        `key ${head.key}`;
    case "went-back":
      return `the server's chain is at height ${found.height}, below the remembered height ` +
        `${head.height}: blocks are hidden or the chain went back`;
    case "rewritten":
      return `block ${head.height}: the server serves hash ${found.served}, but the remembered ` +
        `head at this height has hash ${head.hash}: the server's chain does not extend it`;
    case "unread":
      return `the server's chain could not be read: ${found.reason}`;
  }
}

/** What checking a record without its ring signatures found: the report, and the head read. */
export type CheckedRecord = { report: AuditReport; head: RememberedHead | null };

/**
 * Audits the record in `input` as `auditRecord` does — framing, key directory, hash chain, head
 * signatures, checkpoint, Merkle roots, membership, tags, sizes, tally, end line — but without
 * verifying the votes' ring signatures: for a record this auditor saved itself. Answers the report
 * and the head the record was taken at.
 */
export async function checkRecordWithoutSignatures(
  input: ReadableStream<Uint8Array>,
  opts: Omit<AuditOptions, "checker"> = {},
): Promise<CheckedRecord> {
  const source = recordSource(input);
  let head: RememberedHead | null = null;
  const report = await auditLedger({
    ...source,
    async blockStatus() {
      const status = await source.blockStatus();
      head = { key: "", height: status.height, hash: status.hash };
      return status;
    },
  }, { ...opts, checker: checkerWithoutSignatures });
  report.failures.push(...await source.close());
  report.ok = report.failures.length === 0;
  const read = head as RememberedHead | null;
  return {
    report,
    head: read === null || report.serverKey === null ? null : { ...read, key: report.serverKey },
  };
}

/** Options of {@link resumeFromRecord}: the audit's, and the saved record's head and bytes. */
export type ResumeOptions = AuditOptions & {
  /** The head the record was taken at ({@link checkRecordWithoutSignatures}). */
  head: RememberedHead;
  /** The record's bytes, opened afresh for each run of the audit. */
  open: () => ReadableStream<Uint8Array> | Promise<ReadableStream<Uint8Array>>;
  /** Wraps the audit's source, as the record writer does to save what the audit reads. */
  tee?: (source: AuditSource) => AuditSource;
};

/**
 * Audits the server at `api` as {@link auditLedger} does, the saved record answering for the
 * blocks up to its head: their keys, block records (each compared with the server's) and votes,
 * whose findings are made again without their ring signatures; every vote of a later block, and
 * every key registered since, are read from the server and verified in full. A server key other
 * than the record's stops the audit. Answers the report and how many votes were verified and
 * remembered.
 * Run it after {@link checkExtension} said the chain extends the record.
 */
export async function resumeFromRecord(
  api: AuditSource,
  { head, open, tee = (source) => source, ...opts }: ResumeOptions,
): Promise<{ report: AuditReport; counts: ResumeCounts }> {
  const full = opts.checker ?? (await import("./vote_checks.ts")).inThreadChecker();
  const remembered: RememberedVotes = new WeakMap();
  const { checker, counts, reset } = rememberingChecker(full, remembered);
  const source = recordBackedSource(api, { head, open, remembered, onRun: reset });
  try {
    const report = await auditLedger(tee(source), { ...opts, checker });
    return { report, counts };
  } finally {
    await source.close();
  }
}

/**
 * The audit's source for {@link resumeFromRecord}: the server at `api`, with the record's keys,
 * blocks and votes standing in for the server's up to `head`. A block the server serves otherwise,
 * or a key it no longer lists, stops the audit: the chain does not extend the record. The record
 * is opened again at the start of every run (`serverKey`), when `onRun` is called too.
 */
function recordBackedSource(
  api: AuditSource,
  { head, open, remembered, onRun }: {
    head: RememberedHead;
    open: ResumeOptions["open"];
    remembered: RememberedVotes;
    onRun: () => void;
  },
): AuditSource & { close(): Promise<void> } {
  let file: RecordSource | null = null;
  /** The record's key count, and the server's directory size once asked. */
  let held = 0;
  let served: number | null = null;
  /** The next of the record's blocks to compare with the server's. */
  let nextBlock = 0;
  const record = () => {
    if (file === null) throw new Error("the record is read only during a run of the audit");
    return file;
  };

  async function startRun() {
    await file?.close();
    file = recordSource(await open());
    onRun();
    [held, served, nextBlock] = [0, null, 0];
    // The record's reader serves its lines in order: its header and checkpoint come first.
    await file.serverKey();
    await file.checkpoint().catch(() => {});
    await file.blockStatus();
    held = (await file.keys(0, 0)).total;
  }

  /** The server's directory size, once it still lists the record's last key as the record does. */
  async function servedKeys(): Promise<number> {
    if (served !== null) return served;
    const probe = await api.keys(Math.max(held - 1, 0), 1);
    if (held > 0) {
      const [mine] = (await record().keys(held - 1, 1)).items;
      const [theirs] = probe.items;
      if (theirs?.id !== mine.id || theirs.key !== mine.key) {
        throw new Error(
          `key directory: key ${mine.id} is ${theirs?.key ?? "not listed"} at the server, but ` +
            `${mine.key} in the record: the server's directory does not extend the record's`,
        );
      }
    }
    served = probe.total;
    return served;
  }

  return {
    async serverKey() {
      const answer = await api.serverKey();
      if (answer.key !== head.key) {
        throw new Error(
          `the server answers key ${answer.key}, but the saved record was signed under key ` +
            head.key,
        );
      }
      await startRun();
      return answer;
    },
    checkpoint: () => api.checkpoint(),
    blockStatus: () => api.blockStatus(),
    // A round's group rule is the server's: fixed once voting opened (protocol §2.8).
    ...(api.groupRule ? { groupRule: api.groupRule } : {}),
    ...(api.cards ? { cards: api.cards } : {}),
    async keys(offset, limit): Promise<Page<DirectoryEntry>> {
      let total = await servedKeys();
      const items = offset < held
        ? (await record().keys(offset, Math.min(limit, held - offset))).items
        : [];
      const from = offset + items.length;
      if (items.length < limit && from < total) {
        const more = await api.keys(from, limit - items.length);
        items.push(...more.items);
        total = served = more.total;
      }
      return { items, total };
    },
    async blocks(offset, limit): Promise<Page<BlockRecord>> {
      const page = await api.blocks(offset, limit);
      for (const block of page.items) {
        if (block.height > head.height) continue;
        const [mine] = block.height === nextBlock ? (await record().blocks(0, 1)).items : [];
        nextBlock++;
        if (mine === undefined || blockLine(mine) !== blockLine(block)) {
          const held = mine === undefined ? "none" : `hash ${mine.hash}`;
          throw new Error(
            `block ${block.height}: the server's (hash ${block.hash}) is not the saved record's ` +
              `(${held}): the server's chain does not extend the saved record's`,
          );
        }
      }
      return page;
    },
    blockVotes: (height) => async (offset, limit): Promise<Page<BlockVoteEntry>> => {
      if (height > head.height) return await api.blockVotes(height)(offset, limit);
      const page = await record().blockVotes(height)(offset, limit);
      for (const { vote } of page.items) remembered.set(vote, null);
      return page;
    },
    tally: () => api.tally(),
    async close() {
      await file?.close();
      file = null;
    },
  };
}

/** A block record's one byte form, as a record holds it. */
function blockLine(block: BlockRecord): string {
  return encodeLine({ kind: "block", ...blockFields(block) });
}
