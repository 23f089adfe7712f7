/**
 * The ledger over Deno KV (protocol §5): the {@link Store} the API and the sealer call, made of the
 * key directory (./directory.ts), vote submission, the bulletin-board reads (./ledger.ts) and the
 * sealing steps (./sealing.ts) over the keys of one prefix (./layout.ts): the election's ledger, or
 * the attack lab's practice ledger (protocol §4.7).
 * @module
 */
import { ensureLedger } from "./genesis.ts";
import type { StoreCards } from "./cards.ts";
import { bytesToBase64 } from "../../lib/protocol/bytes.ts";
// The wire shapes of protocol §4: the store answers in them, so the API passes them on unchanged.
import type * as wire from "../../lib/protocol/schemas.ts";
import {
  type KeyPrecomputation,
  PRECOMPUTATION_BYTES,
} from "../../lib/protocol/key_precomputation.ts";
import { createLruCache } from "../../lib/protocol/member_cache.ts";
import { refusal } from "../errors.ts";
import { type CosignatureStore, createCosignatureStore } from "./cosignatures.ts";
import {
  type CheckedKeyRecord,
  createKeyIdReader,
  createRegistrar,
  keyById,
  type KeyIdReader,
  keyPage,
  lookupKeys,
} from "./directory.ts";
import { keyRecordSecret } from "./key_record_mac.ts";
import { GET_MANY_LIMIT, readRetrying } from "./kv_calls.ts";
import { type BatchOptions } from "./batches.ts";
import {
  type CapacityBound,
  type CardAdmission,
  type CardUseRecord,
  type KeyIdRecord,
  type KvLedger,
  ledgerKeys,
} from "./layout.ts";
import {
  blockRange,
  blockVotes,
  createStatusReader,
  openBlockVotes,
  type StatusAnswer,
  tagUse,
  tally,
  type TallyCache,
  voteProof,
} from "./ledger.ts";
import {
  appendBlock,
  type ClosedBlock,
  closedBlock,
  closeNext,
  closeOpenBlock,
  mapBlockVotes,
  pendingBlock,
  type ProofToStore,
  type SealStep,
  writeProofs,
  writeProofsAndBlock,
} from "./sealing.ts";
import {
  guardKeys,
  type GuardMemo,
  type LedgerGate,
  readWithGuard,
  submitVote,
  type VoteGuarding,
} from "./votes.ts";

export type { CheckedKeyRecord, ClosedBlock, LedgerGate, ProofToStore, SealStep, StatusAnswer };

/** The ledger operations the API and the sealer call. */
export interface Store {
  /**
   * Registers `key` with the next id, storing `pre` (its precomputation) with it; 409
   * `duplicate_key` if it is registered already.
   */
  registerKey(key: string, pre?: KeyPrecomputation, card?: CardAdmission): Promise<wire.KeyRecord>;
  /**
   * A carded round's card set (protocol §2.11): every key needs a card of it, bound in the commit
   * that registers the key (409 `card_used` for a card that admitted another key). Null: open.
   */
  cards(): StoreCards | null;
  /** The key card `cardKey` admitted, with the first answer's `total`, or null. */
  cardUse(cardKey: string): Promise<CardUseRecord | null>;
  /** The key with id `id`; 404 `unknown_key` if there is none. */
  keyById(id: number): Promise<wire.KeyRecord>;
  /** Up to `limit` keys from id `offset + 1`, and the directory size. */
  keyPage(offset: number, limit: number): Promise<wire.KeyPage>;
  /**
   * The stored record of each of `keys` (id, and precomputation if bound to the key by its MAC),
   * null where not registered. Records read or written here are kept in memory within the store's
   * record budget.
   */
  lookupKeys(keys: string[]): Promise<(CheckedKeyRecord | null)[]>;
  /** Key records held in memory now, and the most the record budget allows. */
  recordStats(): { held: number; capacity: number };
  /** True when a vote with `tag` is stored already. */
  isTagUsed(tag: string): Promise<boolean>;
  /**
   * What a vote's intake reads before any curve arithmetic: the record of each ring member, as
   * {@link Store.lookupKeys} answers them, and whether `tag` has voted. One round trip when the
   * members not held in memory, the tag and the guard fit one `getMany`.
   */
  voteInputs(
    keys: string[],
    tag: string,
  ): Promise<
    { members: (CheckedKeyRecord | null)[]; tagUsed: boolean; gate: unknown; gateRead: boolean }
  >;
  /**
   * The gate every registration and vote commit checks (./votes.ts), or null; `voteInputs`
   * answers its entry's value (`gate`, undefined without one): read with the members
   * (`gateRead`), or as last read when the members, the tag and the guard fill a `getMany`.
   */
  gate(): LedgerGate | null;
  /** Reads the guard and the gate's entry afresh; answers the entry's value (null: none). */
  readGate(): Promise<unknown>;
  /** Reads `also` with the guard and the gate's entry in one `getMany`; answers `also`'s entries. */
  readGateWith(also: Deno.KvKey[]): Promise<Deno.KvEntryMaybe<unknown>[]>;
  /**
   * Gates this ledger's later registrations and votes with `gate`: the rounds of a database gate
   * the election's ledger with its closing (server/store/rounds.ts).
   */
  setGate(gate: LedgerGate): void;
  /** Commits a verified vote into the open block; 409 `duplicate_tag` if the tag has voted. */
  submitVote(vote: wire.VoteRecord, tag: string): Promise<wire.VoteAccepted>;
  /**
   * The head block and the open block; what this process last read, marked `stale`, when the
   * database does not answer in time (protocol §5.5).
   */
  status(): Promise<StatusAnswer>;
  /** The open block's height and the votes waiting in it (counted up to 1,000). */
  openBlock(): Promise<{ height: number; votes: number }>;
  /** The sealed block at `height`, or null. */
  block(height: number): Promise<wire.BlockRecord | null>;
  /** Up to `limit` sealed blocks from height `from`, and the head height. */
  blocks(from: number, limit: number): Promise<wire.BlockList>;
  /** A sealed vote with its stored proof; 404 `unknown_vote` or `block_not_sealed`. */
  voteProof(height: number, voteId: string): Promise<wire.VoteProof>;
  /** Up to `limit` votes of sealed block `height` from leaf `offset`; 404 `unknown_block`. */
  blockVotes(height: number, offset: number, limit: number): Promise<wire.BlockVotes>;
  /** Counts per payload over sealed votes, count descending. */
  tally(): Promise<wire.Tally>;
  /** Which vote used `tag`; 404 `unknown_tag`. */
  tagUse(tag: string): Promise<wire.TagRecord>;
  /** The seed of the server's head-signing key, made once at first start (protocol §4). */
  serverSeed(): Uint8Array;
  /** The height of a block closed but not finalized (a crash, or another sealer), or null. */
  pendingBlock(): Promise<number | null>;
  /**
   * Close (one commit): moves the guard from N to N+1 and fixes `["seal", N]` at `now`, only
   * when block N holds a vote. Returns the height to finalize: N, or a block another process
   * closed meanwhile; null when there is nothing to close.
   */
  closeOpenBlock(now: number): Promise<number | null>;
  /**
   * What a sealer tick finalizes next, in the read close makes anyway: a block closed but not
   * finalized (`pending`), else the block this call closes as {@link Store.closeOpenBlock} does,
   * with its close record when this call's commit closed it; null when there is nothing to do.
   */
  closeNext(now: number): Promise<SealStep | null>;
  /** The block at `height` if it is sealed already, else its close record; throws if not closed. */
  closedBlock(height: number): Promise<{ sealed: wire.BlockRecord } | ClosedBlock>;
  /** `leafOf` of every vote of block `height`, in leaf (vote id) order, with the vote ids. */
  mapBlockVotes<T>(
    height: number,
    leafOf: (vote: wire.VoteRecord) => T,
  ): Promise<{ voteIds: string[]; leaves: T[] }>;
  /**
   * Stores every proof of block `height`, and its leaf index every `LEAF_STRIDE` leaves, in
   * commits within the KV limits.
   */
  writeProofs(
    height: number,
    proofs: Iterable<ProofToStore>,
    options?: BatchOptions,
  ): Promise<void>;
  /**
   * Writes `block` and moves the head to it in one commit checked against both; returns the
   * stored block (this one, or an identical one a concurrent sealer wrote). Given the `closed`
   * record of the block, the commit checks the head as read there instead of reading it again.
   */
  appendBlock(block: wire.BlockRecord, closed?: ClosedBlock): Promise<wire.BlockRecord>;
  /**
   * Stores every proof of block `height` and its leaf index in commits within the KV limits, the
   * last of them also writing `block` and the head, checked as {@link Store.appendBlock} checks
   * them; returns the stored block.
   */
  writeProofsAndBlock(
    block: wire.BlockRecord,
    proofs: Iterable<ProofToStore>,
    options?: { closed?: ClosedBlock; batch?: BatchOptions },
  ): Promise<wire.BlockRecord>;
  /** What this ledger keeps of its witnesses: their cosignatures and push records (§4.10). */
  readonly cosignatures: CosignatureStore;
}

/** Options of {@link createStore}. */
export type StoreOptions = {
  /** Clock for the genesis timestamp, ms since the epoch. */
  now?: () => number;
  /** Source of vote ids; 16 random bytes, base64url, by default. */
  newVoteId?: () => string;
  /** Bytes of key records kept in memory; {@link DEFAULT_RECORD_BUDGET} by default. */
  recordBudgetBytes?: number;
  /** The prefix of every key of this ledger (protocol §5.2); none for the election's. */
  prefix?: Deno.KvKey;
  /**
   * The most keys and votes this ledger holds, and the refusal beyond them (the attack lab's
   * practice ledger, protocol §4.7). Votes are unbounded when absent; keys are bounded by
   * {@link ELECTION_KEY_CAPACITY} when no bound is given.
   */
  capacity?: LedgerCapacity;
  /** The entry every registration and vote commit checks, and what it admits (./votes.ts). */
  gate?: LedgerGate;
  /** A carded round's card set: its genesis commits to it and every key needs a card of it. */
  cards?: StoreCards;
};

/** Bounds of a ledger: its key directory and its accepted votes, each with its refusal. */
export type LedgerCapacity = { keys?: CapacityBound; votes?: CapacityBound };

/**
 * The most keys the election's directory holds (protocol §4.2): a large hall's worth, and about
 * 1 GB of key records at rest; one more is refused with 409 `directory_full`.
 */
export const ELECTION_KEY_CAPACITY = 100_000;

/** The bound of a directory of at most `max` keys, refused with 409 `directory_full`. */
export function directoryBound(max: number): CapacityBound {
  return {
    max,
    refuse: (bound) =>
      refusal(
        "directory_full",
        `This ledger's key directory is full: it holds at most ${bound} keys`,
        { extra: { max: bound } },
      ),
  };
}

/**
 * Default memory for key records on the request thread: 16 MiB, about 3,700 keys. With the
 * verifier's member budget (lib/protocol/member_cache.ts) it makes the process's one bound on
 * per-key memory, whatever the directory size or the core count.
 */
export const DEFAULT_RECORD_BUDGET = 16 * 1024 * 1024;

/** Heap bytes of one cached key record: its precomputation, the key string and the map entry. */
export const RECORD_BYTES = PRECOMPUTATION_BYTES + 512;

/**
 * A store over `kv`. Creates the genesis block, the guard and the head once, at first start;
 * later starts (and other processes sharing the database) find them in place.
 */
export async function createStore(kv: Deno.Kv, options: StoreOptions = {}): Promise<Store> {
  const now = options.now ?? Date.now;
  const newVoteId = options.newVoteId ?? randomVoteId;
  const ledger: KvLedger = { kv, keys: ledgerKeys(options.prefix ?? []) };
  const { genesis, seed: serverSeed } = await ensureLedger(ledger, now(), options.cards?.sha256);
  const recordSecret = keyRecordSecret(serverSeed);
  const capacity = options.capacity;
  let gate = options.gate ?? null;
  const registrar = createRegistrar(ledger, {
    secret: recordSecret,
    capacity: capacity?.keys ?? directoryBound(ELECTION_KEY_CAPACITY),
    gate: () => gate,
  });
  const records = createLruCache<CheckedKeyRecord>(
    Math.floor((options.recordBudgetBytes ?? DEFAULT_RECORD_BUDGET) / RECORD_BYTES),
  );
  const readKeyIds = createKeyIdReader(ledger);
  const guard: GuardMemo = { last: null };
  const guarding = (): VoteGuarding => ({ bounded: capacity?.votes !== undefined, gate });
  /** True when a vote with `tag` is stored; the guard comes along, for the commit that follows. */
  const isTagUsed = async (tag: string) => {
    const [used] = await readWithGuard(ledger, {
      before: [ledger.keys.tag(tag)],
      guarding: guarding(),
      guard,
    });
    return used.versionstamp !== null;
  };
  const tallyCache: TallyCache = { height: 0, counts: new Map(), total: 0, pending: null };
  return {
    async registerKey(key, pre, card) {
      const registered = await registrar.register(key, pre, card);
      records.set(key, pre ? { id: registered.id, pre } : { id: registered.id });
      return registered;
    },
    cards: () => options.cards ?? null,
    cardUse: async (cardKey) =>
      (await readRetrying(() => kv.get<CardUseRecord>(ledger.keys.cardUse(cardKey)))).value,
    keyById: (id) => keyById(ledger, id),
    keyPage: (offset, limit) => keyPage(ledger, offset, limit),
    lookupKeys: (keys) => lookupKeys({ records, secret: recordSecret, read: readKeyIds }, keys),
    recordStats: () => ({ held: records.size, capacity: records.capacity }),
    isTagUsed,
    async voteInputs(keys, tag) {
      let tagUsed: boolean | null = null;
      // Members not held are read with the tag and the guard when they fit one getMany, else
      // beside the tag's read.
      let gateRead = true;
      const read: KeyIdReader = async (unread) => {
        const all = unread.length + 1 + guardKeys(ledger, guarding()).length;
        const known = guard.last?.gate ?? null;
        // A ring of 8 with the tag, the guard and the gate is one key over a getMany: the gate's
        // entry as last read stands in (the commit checks it; a refusal reads it again).
        if (gate !== null && known !== null && all === GET_MANY_LIMIT + 1) {
          const entries = await readWithGuard(ledger, {
            before: [...unread.map((key) => ledger.keys.keyId(key)), ledger.keys.tag(tag)],
            guarding: { ...guarding(), gate: null },
            guard,
          });
          guard.last!.gate ??= known;
          gateRead = false;
          tagUsed = entries[unread.length].versionstamp !== null;
          return entries.slice(0, unread.length).map((entry) => entry.value as KeyIdRecord | null);
        }
        if (all > GET_MANY_LIMIT) {
          const [records, used] = await Promise.all([readKeyIds(unread), isTagUsed(tag)]);
          tagUsed = used;
          return records;
        }
        const entries = await readWithGuard(ledger, {
          before: [...unread.map((key) => ledger.keys.keyId(key)), ledger.keys.tag(tag)],
          guarding: guarding(),
          guard,
        });
        tagUsed = entries[unread.length].versionstamp !== null;
        return entries.slice(0, unread.length).map((entry) => entry.value as KeyIdRecord | null);
      };
      const members = await lookupKeys({ records, secret: recordSecret, read }, keys);
      const used = tagUsed ?? await isTagUsed(tag);
      // Every path above read the guard afresh, and the gate unless `gateRead` says otherwise.
      return {
        members,
        tagUsed: used,
        gate: gate === null ? undefined : guard.last?.gate?.value ?? null,
        gateRead,
      };
    },
    gate: () => gate,
    async readGate() {
      await readWithGuard(ledger, { before: [], guarding: guarding(), guard });
      return guard.last?.gate?.value ?? null;
    },
    readGateWith: (also) => readWithGuard(ledger, { before: also, guarding: guarding(), guard }),
    setGate(next) {
      gate = next;
      guard.last = null;
    },
    submitVote: (vote, tag) =>
      submitVote(ledger, {
        vote,
        tag,
        voteId: newVoteId(),
        capacity: capacity?.votes,
        gate,
        guard,
      }),
    status: createStatusReader(ledger),
    openBlock: () => openBlockVotes(ledger),
    // The genesis block, read or made at start, never changes: it is answered from memory.
    block: async (height) =>
      height === 0
        ? genesis
        : (await readRetrying(() => kv.get<wire.BlockRecord>(ledger.keys.block(height)))).value,
    blocks: (from, limit) => blockRange(ledger, from, limit),
    voteProof: (height, voteId) => voteProof(ledger, height, voteId),
    blockVotes: (height, offset, limit) => blockVotes(ledger, height, offset, limit),
    tally: () => tally(ledger, tallyCache),
    tagUse: (tag) => tagUse(ledger, tag),
    serverSeed: () => serverSeed.slice(),
    cosignatures: createCosignatureStore(ledger),
    pendingBlock: () => pendingBlock(ledger),
    closeOpenBlock: (at) => closeOpenBlock(ledger, at),
    closeNext: (at) => closeNext(ledger, at),
    closedBlock: (height) => closedBlock(ledger, height),
    mapBlockVotes: (height, leafOf) => mapBlockVotes(ledger, height, leafOf),
    writeProofs: (height, proofs, batch) => writeProofs(ledger, height, proofs, batch),
    appendBlock: (block, closed) => appendBlock(ledger, block, closed),
    writeProofsAndBlock: (block, proofs, { closed, batch } = {}) =>
      writeProofsAndBlock(ledger, { proofs, block, closed, options: batch }),
  };
}

/** A fresh vote id: 16 random bytes as unpadded base64url (URL-safe, opaque). */
export function randomVoteId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return bytesToBase64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
