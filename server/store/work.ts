/**
 * How the sealers learn that there is work, without reading KV while there is none (protocol §5.3
 * "Work"). Every vote commit, in the same commit and so at no extra round trip, sets its ledger's
 * work record (the block it went into) and the database's work stamp, and notes its ledger in this
 * process once it has landed. A process seals what it noted on its next tick; it reads the stamp
 * now and then (server/work_watch.ts) to learn of votes other processes took, and, when the stamp
 * moved, the work records of the rounds to find which of them wait.
 * @module
 */
import type { KvLedger, OpenRecord, WorkRecord } from "./layout.ts";

/**
 * The database's work stamp: set by every vote commit of every ledger, so that its versionstamp
 * moves whenever a vote lands anywhere. No ledger key starts with `"work"`.
 */
export const WORK_STAMP_KEY: Deno.KvKey = ["work"];

/** The name of the election's ledger in this process's notes. */
export const ELECTION = "election";
/** The name of every generation of the attack lab's practice ledger in this process's notes. */
export const LAB = "lab";

/** The note name of the ledger under `prefix`: the election, the lab, or `round <id>`. */
export function ledgerName(prefix: Deno.KvKey): string {
  if (prefix.length === 0) return ELECTION;
  if (prefix[0] === "lab") return LAB;
  if (prefix[0] === "round") return `round ${String(prefix[1])}`;
  return JSON.stringify(prefix);
}

/** The ledgers a vote landed in, in this process, that no sealer has taken yet. */
const noted = new Set<string>();

/** Adds the work record of block `height` and the work stamp to a vote commit. */
export function setWork(
  op: Deno.AtomicOperation,
  { keys }: KvLedger,
  height: number,
): Deno.AtomicOperation {
  return op.set(keys.work(), { height } satisfies WorkRecord)
    .set(WORK_STAMP_KEY, { ledger: ledgerName(keys.prefix) });
}

/**
 * The latest versionstamp of this process's vote commits: the work stamp the latest of them set.
 * Versionstamps grow with every commit of the database, and compare as strings (fixed-length hex),
 * so the latest is kept whatever order the replies of concurrent commits come back in: a reply
 * that comes back after a later commit's never makes the stamp that later commit set look like
 * another process's. Kept per database handle: a versionstamp means nothing in another database.
 */
const ownStamps = new WeakMap<Deno.Kv, string>();

/**
 * Notes that a vote landed in `ledger` (after its commit, whose `versionstamp` is given when
 * known), and answers `accepted`.
 */
export function landed<T>({ kv, keys }: KvLedger, accepted: T, versionstamp?: string): T {
  noted.add(ledgerName(keys.prefix));
  const own = ownStamps.get(kv);
  if (versionstamp !== undefined && (own === undefined || versionstamp > own)) {
    ownStamps.set(kv, versionstamp);
  }
  return accepted;
}

/** True when the work stamp's `versionstamp` in `kv` is this process's last vote commit's there. */
export function isOwnStamp(kv: Deno.Kv, versionstamp: string | null): boolean {
  return versionstamp !== null && versionstamp === ownStamps.get(kv);
}

/** True, once, when a vote landed in ledger `name` since the last call. */
export function takeNoted(name: string): boolean {
  return noted.delete(name);
}

/** Notes ledger `name` again: a seal that failed is tried on the next tick. */
export function noteAgain(name: string): void {
  noted.add(name);
}

/** The rounds a vote landed in since the last call, by id, taken. */
export function takeNotedRounds(): number[] {
  const ids: number[] = [];
  for (const name of noted) {
    const match = /^round (\d+)$/.exec(name);
    if (match) {
      noted.delete(name);
      ids.push(Number(match[1]));
    }
  }
  return ids;
}

/**
 * True when the ledger whose guard, head and work record are these may have something to seal: a
 * block closed but not finalized, or a vote in the open block. Without a work record (a ledger
 * whose votes, if any, came before work records were kept) the answer is "maybe".
 */
export function mayHaveWork(
  open: OpenRecord | null,
  head: { height: number } | null,
  work: WorkRecord | null,
): boolean {
  if (open === null || head === null || work === null) return true;
  return open.height !== head.height + 1 || work.height >= open.height;
}
