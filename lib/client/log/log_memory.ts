/**
 * Browser-safe. What a page keeps of a ledger's log between visits (protocol §4.5): the checkpoint
 * it accepted, the sizes waiting for its witnesses, the blocks proven included; and the words of
 * what a check of the log can find wrong.
 * @module
 */
import * as z from "zod/mini";

/** Browser-storage key of a ledger's log view (one JSON value, beside the remembered heads). */
export const SEEN_LOG_KEY = "ringvote/seen-log";

/** Most blocks remembered as proven included; the highest are kept. */
export const MAX_PROVEN = 4_096;

/** What a page keeps of a ledger's log between visits. */
export type LogMemory = {
  /** The ledger key (hex) and the log's origin the accepted checkpoint is signed by and under. */
  key: string | null;
  origin: string | null;
  /** The accepted checkpoint: the note as served, its size and root (base64). */
  note: string | null;
  size: number;
  root: string | null;
  /** The largest accepted checkpoint that was witnessed by the policy's quorum, as served. */
  witnessed: { size: number; note: string } | null;
  /**
   * The sizes accepted above the witnessed one, each with when this browser first accepted it
   * (ms), oldest first, at most {@link MAX_PENDING}: each waits for a quorum cosignature of a
   * checkpoint at least as large.
   */
  pending: { size: number; at: number }[];
  /** Blocks proven included in an accepted checkpoint, as `height:hash`, oldest first. */
  proven: string[];
  /** The witness policy `witnessed` and `pending` were counted under (serialized), or null. */
  policy?: string | null;
};

const Stored = z.object({
  key: z.nullable(z.string()),
  origin: z.nullable(z.string()),
  note: z.nullable(z.string()),
  size: z.number(),
  root: z.nullable(z.string()),
  witnessed: z.nullable(z.object({ size: z.number(), note: z.string() })),
  pending: z.array(z.object({ size: z.number(), at: z.number() })),
  proven: z.array(z.string()),
  policy: z.optional(z.nullable(z.string())),
});

/** A memory that has accepted nothing. */
export function emptyLogMemory(): LogMemory {
  return {
    key: null,
    origin: null,
    note: null,
    size: 0,
    root: null,
    witnessed: null,
    pending: [],
    proven: [],
  };
}

/** Most sizes waiting for a cosignature a page keeps; the oldest, which the bound is about. */
export const MAX_PENDING = 64;

/** The log memory from storage; an empty one when absent or unreadable. */
export function parseLogMemory(stored: string | null): LogMemory {
  if (stored === null) return emptyLogMemory();
  try {
    const parsed = Stored.safeParse(JSON.parse(stored));
    return parsed.success ? parsed.data : emptyLogMemory();
  } catch {
    return emptyLogMemory();
  }
}

/**
 * Why what the server shows does not hold up against the log: the checkpoint is not signed by the
 * ledger key (`unsigned`), is smaller than the accepted one (`rollback`), is malformed or names
 * another log (`inconsistent`); a block shown is not in the log (`not-extended`); a proof needed
 * was refused or a block shown stays above every checkpoint (`withheld`); a request got no answer
 * in time (`unchecked`); no quorum cosigned in time (`unwitnessed`).
 */
export type LogProblem =
  | { kind: "unsigned"; reason: string }
  | { kind: "rollback"; size: number; remembered: number }
  | { kind: "inconsistent"; reason: string }
  | { kind: "not-extended"; height: number; hash: string; size: number }
  | { kind: "withheld"; what: string; reason: string }
  | { kind: "unchecked"; reason: string }
  | { kind: "unwitnessed"; size: number; waitedMs: number };
