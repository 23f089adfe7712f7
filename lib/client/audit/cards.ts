/**
 * Browser-safe. The audit's card checks of a carded round (protocol §2.11, §4.6): the card set
 * read must hash to what it names, and the round's genesis must commit to it (`prev_hash` = the
 * set's sha256, nothing else); every key of the directory must carry a card key of the set, with a
 * strictly valid admission signature for the round and the key, and no card may admit two keys.
 * @module
 */
import { base64urlToBytes, bytesToHex, hexToBytes } from "../../protocol/bytes.ts";
import { cardSetHash, cardSetId, readCardKey, verifyCardAdmission } from "../../protocol/cards.ts";
import { type CardSet, CardSetKeys } from "../../protocol/card_schemas.ts";
import type { BlockRecord, RoundList } from "../../protocol/schemas.ts";
import { isGenesis } from "../../protocol/chain.ts";
import type { DirectoryEntry } from "../api_client.ts";
import type { AuditFinding } from "./findings.ts";

/** A carded round's card set as the audit read it (served, not yet checked), and the round. */
export type RoundCardsRead = { round: number; set: CardSet };

/** What the audit found of a carded round's cards: for the report's line. */
export type CardsReport = {
  set: string;
  /** Cards in the set. */
  count: number;
  /** Keys in the directory. */
  keys: number;
  /** Distinct cards of the set that admitted a key with a valid signature. */
  distinct: number;
};

/** The calls a round's card set is read with (lib/client/api_client.ts). */
export type CardsSource = {
  rounds(): Promise<RoundList>;
  cardSet(set: string): Promise<CardSet>;
};

/**
 * The card set of round `round` as `api` serves it: the set the round lists, read from
 * `GET /api/cards/{set}`; null for a round that lists none (an open round, round 1).
 */
export async function readRoundCards(
  api: CardsSource,
  round: number,
): Promise<RoundCardsRead | null> {
  const list = await api.rounds();
  const info = list.rounds.find((r) => r.id === round);
  if (!info) throw new Error(`the rounds listed do not include round ${round}`);
  if (info.cards === undefined) return null;
  return { round, set: await api.cardSet(info.cards) };
}

/**
 * Blocks phase, genesis of a carded round: a genesis block whose `prev_hash` is the set's sha256,
 * the set read hashing to that sha256 and named by its id. A genesis with the zero `prev_hash`, or
 * any other, is `cards_changed`; a block 0 that is no genesis at all is `genesis`.
 */
export function checkCardedGenesis(
  genesis: BlockRecord,
  { set }: RoundCardsRead,
  fail: (finding: AuditFinding) => void,
): void {
  if (!isGenesis({ ...genesis, prev_hash: set.sha256 }, set.sha256)) {
    fail({ kind: "genesis" });
    return;
  }
  const hash = setHashOf(set);
  if (hash !== set.sha256 || cardSetId(set.sha256) !== set.set || set.count !== set.keys.length) {
    fail({ kind: "cards_changed", set: set.set, why: "set" });
  } else if (genesis.prev_hash !== set.sha256) {
    fail({ kind: "cards_changed", set: set.set, why: "genesis" });
  }
}

/**
 * The sha256 (hex) the keys of `set` hash to, or null when the set is none a presenter makes
 * (protocol §2.11): a key malformed or not a valid card key, a key repeated, fewer than 8 or more
 * than 1,000 keys. Such a set could only pad the "of N" of the report.
 */
function setHashOf(set: CardSet): string | null {
  if (!CardSetKeys.safeParse(set.keys).success) return null;
  const parts: Uint8Array[] = [];
  for (const key of set.keys) {
    const read = readCardKey(key);
    if (!("key" in read)) return null;
    parts.push(read.key);
  }
  return bytesToHex(cardSetHash(parts));
}

/**
 * Keys phase, in a carded round: every directory entry's card, in id order. Answers the report's
 * counts; each failure is a typed finding.
 */
export function checkCards(
  directory: readonly DirectoryEntry[],
  { round, set }: RoundCardsRead,
  fail: (finding: AuditFinding) => void,
): CardsReport {
  const members = new Set(set.keys);
  const setHash = hexToBytes(set.sha256, 32, "sha256");
  const firstUse = new Map<string, number>();
  for (const { id, key, card } of directory) {
    if (card === undefined) {
      fail({ kind: "card_missing", id, key });
      continue;
    }
    if (!members.has(card.key)) {
      fail({ kind: "card_not_in_set", id, key, card: card.key });
      continue;
    }
    if (!admits(card, setHash, round, key)) {
      fail({ kind: "card_signature", id, key, card: card.key });
      continue;
    }
    const first = firstUse.get(card.key);
    if (first !== undefined) {
      fail({ kind: "card_reused", id, key, card: card.key, first });
      continue;
    }
    firstUse.set(card.key, id);
  }
  return { set: set.set, count: set.keys.length, keys: directory.length, distinct: firstUse.size };
}

/** True when the card's signature admits `key` to `round`, strictly (protocol §2.11). */
function admits(
  card: { key: string; sig: string },
  setHash: Uint8Array,
  round: number,
  key: string,
): boolean {
  try {
    return verifyCardAdmission(
      base64urlToBytes(card.key, 32, "card key"),
      base64urlToBytes(card.sig, 64, "card signature"),
      setHash,
      round,
      hexToBytes(key, 32, "key"),
    );
  } catch {
    return false;
  }
}

/** The report's line: "10 keys from 10 distinct cards of 12". */
export function cardsLine({ keys, distinct, count }: CardsReport): string {
  return `${keys} key${keys === 1 ? "" : "s"} from ${distinct} distinct card${
    distinct === 1 ? "" : "s"
  } of ${count}`;
}
