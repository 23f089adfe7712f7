/**
 * Browser-safe. What an audit that passed leaves for the next one of the same ledger (page §10.8):
 * the verified head and every block's header, the key directory, every tag and vote id with its
 * block, and the tally's counts. A later audit holds the chain to it — the remembered head must
 * still be served at its height, hash for hash, and the blocks below it are the remembered ones, as
 * each links to the one before — and reads and verifies only what was sealed since.
 * @module
 */
import type { BlockRecord } from "../../protocol/schemas.ts";
import type { DirectoryEntry, Page } from "../api_client.ts";
import type { AuditSource } from "./source.ts";

/** A block as remembered: its whole header, with its head signature. */
export type RememberedBlock = BlockRecord & { head_signature: string };

/**
 * What a passing audit of one ledger verified, everything a later audit needs of it: the server
 * key, the head (`height`, `hash`), every block up to it, the key directory in id order, how many
 * votes the blocks hold, the block of every tag and of every vote id, and the tally's counts.
 */
export type AuditMemory = {
  key: string;
  height: number;
  hash: string;
  blocks: RememberedBlock[];
  keys: string[];
  votes: number;
  tags: Map<string, number>;
  voteIds: Map<string, number>;
  tally: Map<string, number>;
  /** When the audit that verified it ended, ms since the epoch. */
  verifiedAt: number;
};

/** The version of the memory's form; a memory of another version is not used. */
export const AUDIT_MEMORY_VERSION = 2;

/** What a passing audit hands over to build its {@link AuditMemory}. */
export type VerifiedLedger = {
  key: string;
  blocks: readonly BlockRecord[];
  keys: Iterable<string>;
  tags: ReadonlyMap<string, number>;
  voteIds: ReadonlyMap<string, number>;
  tally: readonly { payload: string; count: number }[];
  verifiedAt: number;
};

/**
 * The memory of a ledger an audit verified whole. Throws TypeError for a block without its head
 * signature, which no passing audit has.
 */
export function memoryOf(verified: VerifiedLedger): AuditMemory {
  const { blocks } = verified;
  const head = blocks[blocks.length - 1];
  const tally = new Map(verified.tally.map((t) => [t.payload, t.count]));
  return {
    key: verified.key,
    height: head.height,
    hash: head.hash,
    blocks: blocks.map((block) => {
      const { height, timestamp, merkle_root, prev_hash, hash, size, head_signature } = block;
      if (head_signature === undefined) throw new TypeError(`block ${height} is not signed`);
      return { height, timestamp, merkle_root, prev_hash, hash, size, head_signature };
    }),
    keys: [...verified.keys],
    votes: [...tally.values()].reduce((sum, n) => sum + n, 0),
    tags: new Map(verified.tags),
    voteIds: new Map(verified.voteIds),
    tally,
    verifiedAt: verified.verifiedAt,
  };
}

/** The memory as stored: structured-clonable, with its version. */
export type StoredMemory = AuditMemory & { version: number };

/**
 * `value` as an {@link AuditMemory} when it has the form this version writes (what a browser's
 * storage gives back is checked, not trusted to be whole); null otherwise.
 */
export function readAuditMemory(value: unknown): AuditMemory | null {
  if (typeof value !== "object" || value === null) return null;
  const m = value as Partial<StoredMemory>;
  const hex = (s: unknown) => typeof s === "string" && /^[0-9a-f]{64}$/.test(s);
  const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  const heights = (map: unknown) =>
    map instanceof Map && [...map.values()].every((h) => count(h) && h >= 1 && h <= m.height!);
  const ok = m.version === AUDIT_MEMORY_VERSION && hex(m.key) && count(m.height) &&
    hex(m.hash) && count(m.votes) && count(m.verifiedAt) &&
    Array.isArray(m.blocks) && m.blocks.length === m.height! + 1 &&
    m.blocks.every((b, i) =>
      b?.height === i && hex(b.hash) && hex(b.prev_hash) && hex(b.merkle_root) &&
      count(b.timestamp) && count(b.size) && /^[0-9a-f]{128}$/.test(b.head_signature)
    ) &&
    m.blocks[m.height!].hash === m.hash &&
    Array.isArray(m.keys) && m.keys.every(hex) &&
    heights(m.tags) && heights(m.voteIds) && m.tags!.size === m.votes &&
    m.voteIds!.size === m.votes && m.tally instanceof Map &&
    [...m.tally.values()].reduce((sum, n) => sum + n, 0) === m.votes;
  if (!ok) return null;
  const { version: _, ...memory } = m as StoredMemory;
  return memory;
}

/** `memory` as stored, with its version. */
export function storedMemory(memory: AuditMemory): StoredMemory {
  return { ...memory, version: AUDIT_MEMORY_VERSION };
}

/**
 * The audit's source over `api`, the key directory answered from `memory` up to its last key:
 * the server is asked for that last key (which must be the remembered one, else the audit stops:
 * the directory does not extend the remembered one) and for the keys after it, nothing else. The
 * blocks below the remembered head are answered from `memory` too unless `readAllBlocks` (an audit
 * of everything again): the server is asked for the remembered head and the blocks after it, which
 * the audit holds to the memory (the head's hash, the link to the block below). Every other call is
 * the server's.
 */
export function memorySource(
  api: AuditSource,
  memory: AuditMemory,
  { readAllBlocks = false }: { readAllBlocks?: boolean } = {},
): AuditSource {
  const held = memory.keys.length;
  let served: number | null = null;
  let probed: Promise<number> | null = null;
  /** The server's answer for the remembered head's height, for its chain's length. */
  let headProbe: Promise<Page<BlockRecord>> | null = null;

  /** The server's directory size, once its key `held` is the remembered one. */
  function servedKeys(): Promise<number> {
    probed ??= (async () => {
      const probe = await api.keys(Math.max(held - 1, 0), 1);
      const [theirs] = probe.items;
      if (held > 0 && (theirs?.id !== held || theirs.key !== memory.keys[held - 1])) {
        throw new Error(
          `key directory: key ${held} is ${theirs?.key ?? "not listed"} at the server, but ` +
            `${memory.keys[held - 1]} in this browser's memory of its last audit: the server's ` +
            "directory does not extend the remembered one",
        );
      }
      return probe.total;
    })();
    return probed;
  }

  return {
    serverKey: () => {
      // A new run of the audit asks the directory's size and the chain's length again.
      [served, probed, headProbe] = [null, null, null];
      return api.serverKey();
    },
    checkpoint: () => api.checkpoint(),
    blockStatus: () => api.blockStatus(),
    async keys(offset, limit): Promise<Page<DirectoryEntry>> {
      let total = served ?? await servedKeys();
      const items: DirectoryEntry[] = [];
      for (let id = offset + 1; id <= Math.min(held, offset + limit); id++) {
        items.push({ id, key: memory.keys[id - 1] });
      }
      const from = offset + items.length;
      if (items.length < limit && from < total) {
        const more = await api.keys(from, limit - items.length);
        items.push(...more.items);
        total = more.total;
      }
      served = total;
      return { items, total };
    },
    async blocks(offset, limit): Promise<Page<BlockRecord>> {
      const below = readAllBlocks ? 0 : memory.height;
      if (offset >= below) return api.blocks(offset, limit);
      const items: BlockRecord[] = memory.blocks.slice(offset, Math.min(below, offset + limit));
      if (items.length < limit) {
        const more = await api.blocks(below, limit - items.length);
        return { items: [...items, ...more.items], total: more.total };
      }
      headProbe ??= api.blocks(below, 1);
      return { items, total: (await headProbe).total };
    },
    blockVotes: (height) => api.blockVotes(height),
    tally: () => api.tally(),
  };
}
