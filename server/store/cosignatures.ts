/**
 * What one ledger keeps of its witnesses in KV, under its prefix (protocol §4.10): the latest
 * verified cosignature of each witness key and the witnesses the presenter pinned, in one entry
 * `["cosig", "latest"]` checked by every write, and what pushing to each witness of
 * `WITNESS_POLICY` came to, `["witness", vkey]`. Only a cosignature that verifies over the
 * checkpoint text of its size, and is not from the future, is kept.
 * @module
 */
import { equalBytes } from "../../lib/protocol/bytes.ts";
import {
  formatVerifierKey,
  type NoteSignature,
  parseVerifierKey,
  type VerifierKey,
  verifyCosignature,
} from "../../lib/protocol/note.ts";
import type { WitnessProblem } from "../../lib/protocol/schemas.ts";
import { backoff, MAX_ATTEMPTS, readRetrying, tryCommit } from "./kv_calls.ts";
import { type KvLedger } from "./layout.ts";

/**
 * Most witness keys a ledger keeps cosignatures of, besides those of `WITNESS_POLICY`: anyone may
 * submit one, so the entry stays bounded (16 lines and the log's own fit a note many times over).
 * A new key beyond it drops the kept key whose cosignature is the oldest.
 */
export const MAX_WITNESS_KEYS = 16;
/**
 * Most witnesses the presenter may pin (the room's projector, say): a new pin beyond it drops the
 * oldest pin. Pinned witnesses, like those of `WITNESS_POLICY`, are never dropped for a stranger.
 */
export const MAX_PINNED_WITNESSES = 4;
/** How far in the future a cosignature's timestamp may be and still be kept, in seconds. */
export const MAX_FUTURE_SECONDS = 300;

/** A verified cosignature as kept: whose, over which checkpoint, when, and its signature line. */
export type StoredCosignature = {
  /** The witness's cosignature/v1 vkey, in its canonical text. */
  vkey: string;
  size: number;
  root: Uint8Array;
  /** The cosignature's timestamp, POSIX seconds. */
  timestamp: number;
  line: NoteSignature;
};

/**
 * The value of `["cosig", "latest"]`: the kept cosignatures, in vkey order, and the vkeys the
 * presenter pinned, oldest first (absent before the first pin).
 */
export type CosignatureSetRecord = { cosignatures: StoredCosignature[]; pinned?: string[] };

/** The value of `["witness", vkey]`: the size the witness was last known at, what went wrong. */
export type WitnessPushRecord = {
  /** From its last 200 (the size it cosigned) or 409 (the size it holds); null before either. */
  size: number | null;
  /** Evidence against the log or the witness (422, a fork, an unverifiable 200); null if none. */
  alarm: WitnessProblem | null;
  /** The last failure that is no alarm (no answer, a timeout, another status); null if none. */
  error: WitnessProblem | null;
};

/** The checkpoint a cosignature is checked against: its note text, size and root. */
export type CheckpointBody = { text: string; size: number; root: Uint8Array };

/** What {@link CosignatureStore.keep} came to. */
export type KeepResult =
  | { kind: "kept"; timestamp: number; stored: boolean }
  | { kind: "bad"; reason: string }
  /** A valid cosignature from a clock ahead of ours: not kept now, but no sign of a bad witness. */
  | { kind: "early"; reason: string };

/** The witness state of one ledger. */
export type CosignatureStore = {
  /**
   * Verifies `line` as `key`'s cosignature/v1 over `checkpoint` with a timestamp at most
   * {@link MAX_FUTURE_SECONDS} after `now` (ms), then keeps it unless the one kept for `key` is of
   * a larger size, or of the same size and no older (`stored: false`). A new key beyond
   * {@link MAX_WITNESS_KEYS} keys not pinned — in `pinned` (vkeys) or by {@link pin} — drops the
   * cosignature of one over a smaller tree, or is not kept (`stored: false`). A key not pinned
   * that signs under the log's name, under a pinned witness's name and key ID, or under those of
   * a kept cosignature of another key, is refused; a pinned key's cosignature drops a stranger's
   * kept under its name and key ID. Throws TypeError/RangeError for a malformed key or line.
   */
  keep(
    checkpoint: CheckpointBody,
    { line, key, now, pinned }: {
      line: NoteSignature;
      key: VerifierKey;
      now: number;
      pinned?: ReadonlySet<string>;
    },
  ): Promise<KeepResult>;
  /** Every kept cosignature, in vkey order. */
  all(): Promise<StoredCosignature[]>;
  /**
   * Pins the witness of `vkey` (its canonical text): its cosignature is never dropped for a
   * stranger's, nor may a stranger sign under its name and key ID. Beyond
   * {@link MAX_PINNED_WITNESSES}, the oldest pin goes. Answers the pins, oldest first.
   */
  pin(vkey: string): Promise<string[]>;
  /** The vkeys pinned with {@link pin}, oldest first. */
  pins(): Promise<string[]>;
  /** The kept cosignature lines over the checkpoint of `size` and `root`, in vkey order. */
  linesFor(size: number, root: Uint8Array): Promise<NoteSignature[]>;
  /** The push record of the witness of `vkey`, or null. */
  pushRecord(vkey: string): Promise<WitnessPushRecord | null>;
  /** Writes the push record of `vkey` that `update` makes from the one stored (null if none). */
  updatePushRecord(
    vkey: string,
    update: (record: WitnessPushRecord | null) => WitnessPushRecord,
  ): Promise<void>;
};

/** The witness state of the ledger `{kv, keys}`. */
export function createCosignatureStore({ kv, keys }: KvLedger): CosignatureStore {
  const read = () => readRetrying(() => kv.get<CosignatureSetRecord>(keys.cosignatures()));
  const all = async () => (await read()).value?.cosignatures ?? [];

  return {
    async keep(checkpoint, { line, key, now, pinned = new Set() }) {
      const verified = verifyCosignature({ text: checkpoint.text, signatures: [line] }, key);
      if (verified === false) {
        const byKey = line.name === key.name && equalBytes(line.keyId, key.keyId);
        return {
          kind: "bad",
          reason: byKey
            ? `the cosignature does not verify over the checkpoint of size ${checkpoint.size}`
            : `the line is signed by "${line.name.slice(0, 80)}", not by the key of the vkey`,
        };
      }
      const origin = checkpoint.text.slice(0, checkpoint.text.indexOf("\n"));
      const { timestamp } = verified;
      const limit = Math.floor(now / 1000) + MAX_FUTURE_SECONDS;
      if (timestamp > limit) {
        return {
          kind: "early",
          reason: `the timestamp ${timestamp} is more than ${MAX_FUTURE_SECONDS} s in the future`,
        };
      }
      const candidate: StoredCosignature = {
        vkey: formatVerifierKey(key),
        size: checkpoint.size,
        root: checkpoint.root.slice(),
        timestamp,
        line: { name: line.name, keyId: line.keyId.slice(), signature: line.signature.slice() },
      };
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const entry = await read();
        const kept = entry.value?.cosignatures ?? [];
        const pins = entry.value?.pinned ?? [];
        const trusted = new Set([...pinned, ...pins]);
        const isPinned = trusted.has(candidate.vkey);
        // A stranger may not sign under the log's name, nor under the name and key ID of a pinned
        // witness or of another kept key: its line, served beside theirs, would make readers
        // reject the whole note. A pinned witness's line drops such a stranger's instead.
        const others = kept.filter((c) => c.vkey !== candidate.vkey);
        if (!isPinned && impersonates(line, origin, trusted, others)) {
          return {
            kind: "bad",
            reason: "the line takes the name and key ID of the log, or of a witness it keeps",
          };
        }
        const same = kept.find((c) => c.vkey === candidate.vkey);
        if (same !== undefined && !isNewer(candidate, same)) {
          return { kind: "kept", timestamp, stored: false };
        }
        const next = bounded(
          [...others.filter((c) => !isPinned || !sameName(c.line, line)), candidate],
          candidate.vkey,
          trusted,
        );
        if (!next.some((c) => c.vkey === candidate.vkey)) {
          return { kind: "kept", timestamp, stored: false };
        }
        const record: CosignatureSetRecord = { cosignatures: next, pinned: pins };
        const res = await tryCommit(
          kv.atomic().check(entry).set(keys.cosignatures(), record),
        );
        if (res?.ok) return { kind: "kept", timestamp, stored: true };
        await backoff(attempt);
      }
      throw new Error("Keeping a cosignature lost every race");
    },
    all,
    async pin(vkey) {
      const key = parseVerifierKey(vkey);
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const entry = await read();
        const pins = [...(entry.value?.pinned ?? []).filter((p) => p !== vkey), vkey]
          .slice(-MAX_PINNED_WITNESSES);
        // A stranger's line under the pinned witness's name and key ID goes: readers would reject
        // a note carrying both.
        const cosignatures = (entry.value?.cosignatures ?? []).filter((c) =>
          c.vkey === vkey || !(c.line.name === key.name && equalBytes(c.line.keyId, key.keyId))
        );
        const res = await tryCommit(
          kv.atomic().check(entry).set(keys.cosignatures(), { cosignatures, pinned: pins }),
        );
        if (res?.ok) return pins;
        await backoff(attempt);
      }
      throw new Error("Pinning a witness lost every race");
    },
    async pins() {
      return (await read()).value?.pinned ?? [];
    },
    async linesFor(size, root) {
      return (await all())
        .filter((c) => c.size === size && equalBytes(c.root, root))
        .map((c) => c.line);
    },
    async pushRecord(vkey) {
      return (await readRetrying(() => kv.get<WitnessPushRecord>(keys.witnessPush(vkey)))).value;
    },
    async updatePushRecord(vkey, update) {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const entry = await readRetrying(() => kv.get<WitnessPushRecord>(keys.witnessPush(vkey)));
        const res = await tryCommit(
          kv.atomic().check(entry).set(keys.witnessPush(vkey), update(entry.value)),
        );
        if (res?.ok) return;
        await backoff(attempt);
      }
      throw new Error("Writing a witness push record lost every race");
    },
  };
}

/** True when `a` is over a larger tree than `b`, or over the same one and later. */
function isNewer(a: StoredCosignature, b: StoredCosignature): boolean {
  return a.size > b.size || (a.size === b.size && a.timestamp > b.timestamp);
}

/**
 * `cosignatures` in vkey order, at most {@link MAX_WITNESS_KEYS} of keys not in `pinned`: beyond
 * that, the unpinned cosignatures over smaller trees than `arriving`'s are dropped, smallest and
 * oldest first; when there are none, `arriving` itself is not kept. So fresh keys, which cost
 * nothing, can never push out a witness that cosigned a tree as large as theirs.
 */
function bounded(
  cosignatures: StoredCosignature[],
  arriving: string,
  pinned: ReadonlySet<string>,
): StoredCosignature[] {
  const unpinned = cosignatures.filter((c) => !pinned.has(c.vkey));
  const excess = unpinned.length - MAX_WITNESS_KEYS;
  if (excess <= 0) return cosignatures.sort((a, b) => compare(a.vkey, b.vkey));
  const size = cosignatures.find((c) => c.vkey === arriving)?.size ?? 0;
  const evictable = unpinned
    .filter((c) => c.vkey !== arriving && c.size < size)
    .sort((a, b) => a.size - b.size || a.timestamp - b.timestamp || compare(a.vkey, b.vkey));
  const dropped = new Set(evictable.slice(0, excess).map((c) => c.vkey));
  if (dropped.size < excess) dropped.add(arriving);
  return cosignatures.filter((c) => !dropped.has(c.vkey)).sort((a, b) => compare(a.vkey, b.vkey));
}

/**
 * True when `line` carries the log's name, or the name and key ID of a pinned witness or of a
 * kept cosignature of another key.
 */
function impersonates(
  line: NoteSignature,
  origin: string,
  pinned: ReadonlySet<string>,
  others: readonly StoredCosignature[],
): boolean {
  if (line.name === origin) return true;
  for (const vkey of pinned) {
    if (sameName(parseVerifierKey(vkey), line)) return true;
  }
  return others.some((c) => sameName(c.line, line));
}

/** True when two keys or lines have the same name and key ID: readers cannot tell them apart. */
function sameName(
  a: { name: string; keyId: Uint8Array },
  b: { name: string; keyId: Uint8Array },
): boolean {
  return a.name === b.name && equalBytes(a.keyId, b.keyId);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
