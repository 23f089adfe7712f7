/**
 * Browser-safe. The voters kept in this browser: storage key names (page §3), the voter list,
 * unique voter names, and ring sampling (protocol §2.8) with injected randomness.
 * @module
 */
import type { RandomBytes } from "../../protocol/ring_signature.ts";

/** The fixed storage key holding the voter list as one comma-separated string (page §3). */
export const VOTERS_KEY = "voters";

/** Placeholder name sent with every key registration: never the voter's name (page §7). */
export const REGISTRATION_NAME = "anonymous";

/** The entries of a voter's keys (page §3). */
export const KEY_ENTRIES = ["publicKey", "privateKey", "keyId"] as const;
/** The entries a vote leaves behind, cleared when the voter's keys are regenerated (page §4). */
export const VOTE_ENTRIES = ["voteId", "blockId", "voteContent", "voteSignature"] as const;
/** Every per-voter entry, in the order of page §3. */
export const VOTER_ENTRIES = [...KEY_ENTRIES, ...VOTE_ENTRIES] as const;
/** The per-voter storage entries of page §3. */
export type VoterEntry = typeof VOTER_ENTRIES[number];

/** Storage key of one voter entry: the entry name prefixed by the voter's namespace. */
export function storageKey(namespace: string, entry: VoterEntry): string {
  return `${namespace}:${entry}`;
}

/** Voter namespaces parsed from the stored comma-separated list; empty and repeated names dropped. */
export function parseVoterList(stored: string | null): string[] {
  if (!stored) return [];
  const seen = new Set<string>();
  for (const name of stored.split(",")) {
    const trimmed = name.trim();
    if (trimmed) seen.add(trimmed);
  }
  return [...seen];
}

/** The stored form of the voter list: one comma-separated string. */
export function serializeVoterList(namespaces: readonly string[]): string {
  return namespaces.join(",");
}

/** The public key → name of every voter stored in this browser that has a key (page §3). */
export function voterKeyNames(storage: Pick<Storage, "getItem">): Map<string, string> {
  const names = new Map<string, string>();
  for (const namespace of parseVoterList(storage.getItem(VOTERS_KEY))) {
    const key = storage.getItem(storageKey(namespace, "publicKey"));
    if (key !== null) names.set(key, namespace);
  }
  return names;
}

/** A person's generated name parts. */
export type PersonName = { first: string; middle: string; last: string };

/**
 * The voter namespace built from a first, middle and last name. Commas are removed because the
 * list is stored comma-separated, and runs of whitespace collapse to one space.
 */
export function namespaceOf(name: PersonName): string {
  return [name.first, name.middle, name.last]
    .map((part) => part.replaceAll(",", "").trim())
    .filter((part) => part.length > 0)
    .join(" ")
    .replace(/\s+/g, " ");
}

/**
 * A namespace from `generate` that is not in `existing`, generating again on a collision
 * (page §3). Throws RangeError after `maxTries` collisions.
 */
export function uniqueNamespace(
  existing: readonly string[],
  generate: () => PersonName,
  { maxTries = 1000 }: { maxTries?: number } = {},
): string {
  const taken = new Set(existing);
  for (let i = 0; i < maxTries; i++) {
    const candidate = namespaceOf(generate());
    if (candidate && !taken.has(candidate)) return candidate;
  }
  throw new RangeError(`no unique voter name after ${maxTries} tries`);
}

/** A uniform integer in [0, n); the randomness source ring sampling takes. */
export type RandomIndex = (n: number) => number;

/**
 * The {@link RandomIndex} drawing 32-bit words from `random`, by rejection so that no value is
 * favoured. Throws RangeError unless 1 <= n <= 2^32.
 */
export function randomIndexFrom(random: RandomBytes): RandomIndex {
  return (n) => {
    if (!Number.isSafeInteger(n) || n < 1 || n > 2 ** 32) {
      throw new RangeError(`n must be an integer in 1..2^32, got ${n}`);
    }
    const limit = 2 ** 32 - (2 ** 32 % n);
    for (;;) {
      const [a, b, c, d] = random(4);
      const word = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
      if (word < limit) return word % n;
    }
  };
}

const webRandomIndex = randomIndexFrom((length) => crypto.getRandomValues(new Uint8Array(length)));

/** Uniform integer in [0, n) from Web Crypto, by rejection so that no value is favoured. */
export function cryptoRandomIndex(n: number): number {
  return webRandomIndex(n);
}

/** Raised when fewer keys are registered than a ring needs (page §5, protocol §2). */
export class TooFewKeysError extends RangeError {
  /** Registered keys and the ring size that was asked for. */
  constructor(readonly registered: number, readonly needed: number) {
    super(`${registered} keys are registered, a ring needs ${needed}`);
    this.name = "TooFewKeysError";
  }
}

/**
 * The ring's key ids (protocol §2): `ringSize` distinct ids drawn uniformly from 1..total, the
 * voter's own id forced in (replacing a random other member) when it was not drawn, ascending.
 * Requires 2 <= ringSize and 1 <= ownId <= total; throws TooFewKeysError when total < ringSize.
 */
export function sampleRing(
  opts: { total: number; ringSize: number; ownId: number },
  randomIndex: RandomIndex = cryptoRandomIndex,
): number[] {
  const { total, ringSize, ownId } = opts;
  if (!Number.isSafeInteger(ringSize) || ringSize < 2) {
    throw new RangeError(`ring size must be an integer >= 2, got ${ringSize}`);
  }
  if (!Number.isSafeInteger(total) || total < 0) {
    throw new RangeError(`total must be a non-negative integer, got ${total}`);
  }
  if (total < ringSize) throw new TooFewKeysError(total, ringSize);
  if (!Number.isSafeInteger(ownId) || ownId < 1 || ownId > total) {
    throw new RangeError(`own key id must be in 1..${total}, got ${ownId}`);
  }
  const picked = new Set<number>();
  while (picked.size < ringSize) picked.add(1 + randomIndex(total));
  if (!picked.has(ownId)) {
    const members = [...picked];
    picked.delete(members[randomIndex(members.length)]);
    picked.add(ownId);
  }
  return [...picked].sort((a, b) => a - b);
}
