/**
 * Vote submission into a ledger (protocol §5 "Submit"): the guard entries every vote commit
 * checks, read with a vote's own keys and remembered for the next commit, the ledger's gate (a
 * round's phase, the election's closing) checked in the same commit, and the commit itself.
 * @module
 */
import type * as wire from "../../lib/protocol/schemas.ts";
import { duplicateTag } from "../errors.ts";
import {
  absent,
  type CapacityBound,
  type KvLedger,
  type OpenRecord,
  type TagUse,
  type VoteCountRecord,
  type VoteRef,
} from "./layout.ts";
import { backoff, MAX_ATTEMPTS, readRetrying, tryCommit } from "./kv_calls.ts";
import { landed, setWork } from "./work.ts";

/**
 * A KV entry outside the ledger that every registration and vote commit of the ledger checks, and
 * what its value admits: a round's phase record (join, voting, closed), or the election's closing.
 * Because the commit checks the entry, a key or vote that passed every earlier check but commits
 * after the entry changed is refused, whichever process wrote the change.
 */
export type LedgerGate = {
  /** The entry every registration and vote commit checks. */
  key: Deno.KvKey;
  /**
   * Null to admit a registration given the entry's value, else its refusal; "again" when it
   * changed the entry first (voting opened at its deadline), so that it is read again.
   */
  admitKey(value: unknown): Promise<Error | null | "again">;
  /** Null to admit a vote given the entry's value, else its refusal. */
  admitVote(value: unknown): Error | null;
  /**
   * Whether the ids of a ring's members, in ring order, are exactly one group given the entry's
   * value (protocol §2.8); absent: any ring.
   */
  isGroup?(value: unknown, ids: readonly number[]): boolean;
};

/** The guard, a bounded ledger's vote count and the gate's entry (each null when not kept). */
export type GuardEntries = {
  open: Deno.KvEntryMaybe<OpenRecord>;
  count: Deno.KvEntryMaybe<VoteCountRecord> | null;
  gate: Deno.KvEntryMaybe<unknown> | null;
};

/**
 * The entries a vote commit checks besides its own keys, as this process last read them. A vote
 * commit starts from them instead of reading them again: they change only when a block closes
 * (in a bounded ledger, with each vote; in a gated one, with its phase), and the commit checks
 * them anyway, so one that is out of date costs a failed commit and a read, never a wrong write.
 */
export type GuardMemo = { last: GuardEntries | null };

/** What a vote's reads and commit need of its ledger: whether it counts votes, and its gate. */
export type VoteGuarding = { bounded: boolean; gate: LedgerGate | null };

/** The keys of {@link GuardEntries}, to read after a vote's own keys in one `getMany`. */
export function guardKeys({ keys }: KvLedger, { bounded, gate }: VoteGuarding): Deno.KvKey[] {
  return [keys.open(), ...(bounded ? [keys.voteCount()] : []), ...(gate ? [gate.key] : [])];
}

/**
 * The later of two reads of one gate entry, by versionstamp: a gate entry only moves forward (a
 * round's phase, the election's closing), so a read answered after a fresher one, sent before
 * it, never takes the remembered entry back. An absent entry is older than any present one.
 */
function laterRead(
  a: Deno.KvEntryMaybe<unknown> | null,
  b: Deno.KvEntryMaybe<unknown>,
): Deno.KvEntryMaybe<unknown> {
  return a !== null && (a.versionstamp ?? "") > (b.versionstamp ?? "") ? a : b;
}

/**
 * Reads `before` and the guard entries in one `getMany`; answers the entries of `before` and
 * remembers the guard's in `guard`. The gate's entry remembered is the latest read of it
 * ({@link laterRead}); a read without the gate keeps the one remembered.
 */
export async function readWithGuard(
  ledger: KvLedger,
  { before, guarding, guard }: {
    before: Deno.KvKey[];
    guarding: VoteGuarding;
    guard: GuardMemo;
  },
): Promise<Deno.KvEntryMaybe<unknown>[]> {
  const entries = await readRetrying(() =>
    ledger.kv.getMany<unknown[]>([...before, ...guardKeys(ledger, guarding)])
  );
  const [open, ...rest] = entries.slice(before.length);
  // Read now, after the read's answer came: what another read remembered meanwhile.
  const known = guard.last?.gate ?? null;
  guard.last = {
    open: open as Deno.KvEntryMaybe<OpenRecord>,
    count: guarding.bounded ? rest.shift() as Deno.KvEntryMaybe<VoteCountRecord> : null,
    gate: guarding.gate ? laterRead(known, rest.shift()!) : known,
  };
  return entries.slice(0, before.length);
}

/**
 * Commits a verified vote into the open block (protocol §5 "Submit"): one commit that checks the
 * guard is unchanged, the tag unused and the vote id unused, and sets the vote, its reference
 * and the tag. The guard is the one last read (`guard`; read afresh if none). After a failed or
 * thrown commit it reads back the reference (landed: answer it), the tag (taken: 409) and the
 * guard, and otherwise retries into the open block. A ledger with a vote `capacity` also checks
 * and counts its votes in that commit, so its bound is exact; a gated ledger checks its gate's
 * entry there, and refuses the vote when the entry's value does not admit it.
 */
export async function submitVote(
  ledger: KvLedger,
  { vote, tag, voteId, capacity, gate, guard }: {
    vote: wire.VoteRecord;
    tag: string;
    voteId: string;
    capacity?: CapacityBound;
    gate: LedgerGate | null;
    guard: GuardMemo;
  },
): Promise<wire.VoteAccepted> {
  const { kv, keys } = ledger;
  const guarding = { bounded: capacity !== undefined, gate };
  for (let attempt = 0;; attempt++) {
    if (guard.last === null || (gate !== null && guard.last.gate === null)) {
      await readWithGuard(ledger, { before: [], guarding, guard });
    }
    const { open, count, gate: gateEntry } = guard.last!;
    if (!open.value) throw new Error("The ledger has no open block");
    const height = open.value.height;
    const op = kv.atomic()
      .check(open)
      .check(absent(keys.tag(tag)))
      .check(absent(keys.voteRef(voteId)))
      .set(keys.vote(height, voteId), vote)
      .set(keys.voteRef(voteId), { height } satisfies VoteRef)
      .set(keys.tag(tag), { voteId, height } satisfies TagUse);
    setWork(op, ledger, height);
    if (gate && gateEntry) {
      const refused = gate.admitVote(gateEntry.value);
      if (refused) throw refused;
      op.check(gateEntry);
    }
    if (capacity && count) {
      const total = count.value?.total ?? 0;
      // A count never goes down: one read at the bound, however long ago, is final.
      if (total >= capacity.max) throw capacity.refuse(capacity.max);
      op.check(count).set(keys.voteCount(), { total: total + 1 } satisfies VoteCountRecord);
    }
    const res = await tryCommit(op);
    if (res?.ok) return landed(ledger, { voteId, blockId: height }, res.versionstamp);
    const [ref, used] = await readWithGuard(ledger, {
      before: [keys.voteRef(voteId), keys.tag(tag)],
      guarding,
      guard,
    });
    if (ref.value) return landed(ledger, { voteId, blockId: (ref.value as VoteRef).height });
    if (used.value) throw duplicateTag(tag);
    if (attempt >= MAX_ATTEMPTS) throw new Error("Vote commit kept conflicting");
    await backoff(attempt);
  }
}
