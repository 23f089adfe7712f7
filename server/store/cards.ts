/**
 * Card sets (protocol §2.11, §5.2): an ordered list of card public keys, stored once under a key
 * family of its own, `["cards", set, …]`: a head record `{sha256, count, chunks}` and the keys in
 * chunks of {@link CARD_CHUNK} 32-byte keys, written in one checked commit and never changed. A
 * process keeps every set it read, since a set is immutable.
 * @module
 */
import { base64urlToBytes, bytesToBase64url } from "../../lib/protocol/bytes.ts";
import { describeCardSet } from "../../lib/protocol/cards.ts";
import type { CardSet, CardSetCreated } from "../../lib/protocol/card_schemas.ts";
import { invalidRequest } from "../errors.ts";
import { backoff, MAX_ATTEMPTS, readRetrying, tryCommit } from "./kv_calls.ts";
import { absent } from "./layout.ts";
import type { RoundCardSet, RoundRecord } from "./round_phases.ts";

/**
 * A carded ledger's card set: id, sha256 (hex, the genesis `prev_hash`), its card keys, and the
 * round whose id the cards sign (protocol §2.11).
 */
export type StoreCards = {
  round: number;
  set: string;
  sha256: string;
  count: number;
  members: ReadonlySet<string>;
};

/** First part of every key of the card sets; no ledger or round key starts with it. */
export const CARDS_PREFIX = "cards";
/** Card keys per stored chunk: 256 keys, 8 KiB, well within KV's 64 KiB value limit. */
export const CARD_CHUNK = 256;

/** Where card set `set` is kept. */
export const cardKeys = {
  /** {@link CardSetHead} of set `set`. */
  head: (set: string): Deno.KvKey => [CARDS_PREFIX, set, "head"],
  /** Chunk `i` of set `set`: up to {@link CARD_CHUNK} keys, 32 bytes each, in card order. */
  chunk: (set: string, i: number): Deno.KvKey => [CARDS_PREFIX, set, "chunk", i],
};

/** The value under {@link cardKeys.head}. */
export type CardSetHead = { sha256: string; count: number; chunks: number };

/** A card set as a process holds it: its wire answer and the keys, for membership. */
export type LoadedCardSet = CardSet & { members: ReadonlySet<string> };

/** The card sets of one database. */
export type CardSets = {
  /** Stores the set of `keys` (wire form, valid, distinct); `created` false when it was stored. */
  put(keys: string[]): Promise<{ created: boolean; answer: CardSetCreated }>;
  /** Set `set`, or null when there is none. */
  get(set: string): Promise<LoadedCardSet | null>;
};

/** The card sets over `kv`. */
export function createCardSets(kv: Deno.Kv): CardSets {
  const held = new Map<string, LoadedCardSet>();
  const keep = (set: CardSet) => {
    const loaded = { ...set, members: new Set(set.keys) };
    held.set(set.set, loaded);
    return loaded;
  };
  const sets: CardSets = {
    async put(keys) {
      const bytes = keys.map((key) => base64urlToBytes(key, 32, "card key"));
      const answer = describeCardSet(bytes);
      for (let attempt = 0;; attempt++) {
        const head = await readRetrying(() => kv.get<CardSetHead>(cardKeys.head(answer.set)));
        if (head.value) {
          if (head.value.sha256 !== answer.sha256) {
            throw invalidRequest(`Another card set has the id ${answer.set}`);
          }
          return { created: false, answer };
        }
        const chunks = Math.ceil(bytes.length / CARD_CHUNK);
        const op = kv.atomic().check(absent(cardKeys.head(answer.set)));
        for (let i = 0; i < chunks; i++) {
          const part = bytes.slice(i * CARD_CHUNK, (i + 1) * CARD_CHUNK);
          const value = new Uint8Array(part.length * 32);
          part.forEach((key, k) => value.set(key, k * 32));
          op.set(cardKeys.chunk(answer.set, i), value);
        }
        op.set(
          cardKeys.head(answer.set),
          { sha256: answer.sha256, count: answer.count, chunks } satisfies CardSetHead,
        );
        const res = await tryCommit(op);
        if (res?.ok) {
          keep({ ...answer, keys });
          return { created: true, answer };
        }
        if (attempt >= MAX_ATTEMPTS) throw new Error("Storing a card set kept conflicting");
        await backoff(attempt);
      }
    },
    async get(set) {
      const known = held.get(set);
      if (known) return known;
      const head = await readRetrying(() => kv.get<CardSetHead>(cardKeys.head(set)));
      if (!head.value) return null;
      const { sha256, count, chunks } = head.value;
      const parts = await Promise.all(
        Array.from(
          { length: chunks },
          (_, i) => readRetrying(() => kv.get<Uint8Array>(cardKeys.chunk(set, i))),
        ),
      );
      const keys: string[] = [];
      for (const part of parts) {
        const value = part.value;
        if (!value) throw new Error(`Card set ${set} lacks a chunk`);
        for (let at = 0; at < value.length; at += 32) {
          keys.push(bytesToBase64url(value.subarray(at, at + 32)));
        }
      }
      if (keys.length !== count) throw new Error(`Card set ${set} holds ${keys.length} keys`);
      return keep({ set, count, sha256, keys });
    },
  };
  return sets;
}

/**
 * The card set a new round names (`POST /api/rounds` `cards`), as its record keeps it; undefined
 * for an open round. 400 `invalid_request` for an unknown set, or `minVoters` above its count.
 */
export async function roundCardSet(
  sets: CardSets,
  { cards, minVoters }: { cards?: string; minVoters?: number },
  fallbackMinVoters: number,
): Promise<RoundCardSet | undefined> {
  if (cards === undefined) return undefined;
  const set = await sets.get(cards);
  if (set === null) throw invalidRequest(`No card set "${cards}": post it first`);
  const fewest = minVoters ?? fallbackMinVoters;
  if (fewest > set.count) {
    throw invalidRequest(
      `minVoters ${fewest} is above the card set's ${set.count} cards: voting could never open`,
    );
  }
  return { set: set.set, sha256: set.sha256, count: set.count };
}

/** What a carded round's store needs of its set: its keys and the round the cards sign for. */
export async function storeCardsOf(sets: CardSets, record: RoundRecord): Promise<StoreCards> {
  const cards = record.cards!;
  const set = await sets.get(cards.set);
  if (set === null || set.sha256 !== cards.sha256) {
    throw new Error(`Round ${record.id}'s card set ${cards.set} is not stored`);
  }
  return { round: record.id, ...cards, members: set.members };
}
